"""The answer extractor (rewards.extract): rules, formats, offsets, hedges and cost bounds.

How each verifier scores what it extracts is in test_real_styles.py.
"""

from __future__ import annotations

import doctest

import pytest

import rewards.extract
from rewards.extract import FORMATS, final_answer


def test_doctests_pass() -> None:
    assert doctest.testmod(rewards.extract).failed == 0


@pytest.mark.parametrize(("reply", "how", "text"), [
    ("So \\boxed{72}. <answer>71</answer>", "boxed", "72"),  # a box first
    ("<answer>72</answer>\n#### 71", "tag", "72"),
    ("48 + 24 = 72\n#### 72", "gsm8k", "72"),
    ("48 + 24 = 72. The answer is 72.", "phrase", "72"),
    ("The answer is 71.\nWait: 48 + 24 = 72", "last_line", "Wait: 48 + 24 = 72"),  # worked on
    ("Natalia sold 72 clips.", "last_line", "Natalia sold 72 clips"),
    ("B\n\nExplanation: Paris is the capital.", "last_line", "B"),
])
def test_auto_takes_the_first_rule_that_finds_an_answer(reply: str, how: str, text: str) -> None:
    found = final_answer(reply)
    assert (found.how, found.text) == (how, text)


def test_offsets_point_at_the_answer_in_the_reply() -> None:
    reply = "<think>\\boxed{1}</think>Working: 2+2.\nThe answer is $4$."
    found = final_answer(reply)
    assert reply[found.start:found.end] == "$4$"
    assert (found.text, found.value) == ("4", "4")


def test_thinking_is_never_the_answer() -> None:
    assert final_answer("<think>It is \\boxed{71}</think>\n\\boxed{72}").text == "72"
    assert final_answer("<think>It is \\boxed{72} and I keep thinking") is None


@pytest.mark.parametrize(("fmt", "text"), [
    ("boxed", "1"), ("tag", "2"), ("gsm8k", "3"), ("last_number", "5"),
    ("bare", "\\boxed{1} <answer>2</answer>\n#### 3\nThe answer is 4 or 5"),
])
def test_a_named_format_reads_one_rule(fmt: str, text: str) -> None:
    reply = "\\boxed{1} <answer>2</answer>\n#### 3\nThe answer is 4 or 5"
    assert final_answer(reply, fmt).text == text


def test_an_unknown_format_is_one_sentence() -> None:
    assert "auto" in FORMATS
    with pytest.raises(ValueError, match="answer format must be one of"):
        final_answer("72", "latex")


def test_a_format_the_reply_lacks_finds_nothing() -> None:
    assert final_answer("The answer is 72.", "boxed") is None
    assert final_answer("", "auto") is None and final_answer("   \n  ") is None


@pytest.mark.parametrize(("reply", "hedged", "negated"), [
    ("\\boxed{72} and later \\boxed{ 72 }", False, False),  # the same answer twice
    ("\\boxed{71} and later \\boxed{72}", True, False),
    ("It is seventy-one or \\boxed{72}.", True, False),
    ("Whether odd or even, the total is 72.", False, False),
    ("The answer is not \\boxed{72}", False, True),
    ("We do not need y, so the answer is 72.", False, False),
    ("Final Answer: The final answer is $72$. I hope it is correct.", False, False),
])
def test_hedges_and_negations_are_flagged(reply: str, hedged: bool, negated: bool) -> None:
    found = final_answer(reply)
    assert (found.hedged, found.negated, found.clear) == (hedged, negated, not (hedged or negated))


@pytest.mark.parametrize("reply", [
    "9" * 64_000, "\\boxed{" * 9_000, "<answer>" * 8_000, "answer is " * 6_400, "#" * 64_000,
    "{" * 64_000, "$" * 64_000, "x=" * 32_000, "or " * 21_000, " " * 64_000 + "1",
    "\\(" * 32_000, "word \\(" * 9_000, "a\n" * 32_000, "1 " * 32_000 + "=",
])
def test_pathological_long_replies_get_an_answer_or_none(reply: str) -> None:
    # Speed is measured in a bench; here they must simply finish (linear patterns).
    found = final_answer(reply)
    assert found is None or isinstance(found.text, str)


@pytest.mark.parametrize(("reply", "text"), [
    ("**Final answer: 72** ✔️", "72"), ("So the answer is **72**!", "72"), ("Paris! 🇫🇷", "Paris"),
    ("Answer: B ✅️", "B"), ("Family: 👨\u200d👩\u200d👧 72", "Family: 👨 👩 👧 72"),
    ("The answer is 1024.\n\nHere's why: 2, 4, ..., 1024", "1024"),
])
def test_emoji_and_their_selectors_around_an_answer_are_glyphs(reply: str, text: str) -> None:
    assert final_answer(reply).text == text


@pytest.mark.parametrize("reply", [
    "7\ufe0f\u20e3", "The answer is 7\ufe0f", "\ufe0f72", "7\u200d2", "🎉\u200d7", "72 \ufe0f",
])
def test_selectors_and_joiners_after_a_letter_digit_or_space_are_hidden(reply: str) -> None:
    assert final_answer(reply) is None


def test_a_cross_mark_after_an_answer_negates_it() -> None:
    assert final_answer("Answer: 72 ❌").negated and final_answer("**B** ✗").negated


@pytest.mark.parametrize("reply", ["✔️" * 32_000, "🎉" * 64_000, "7 " + "🇫🇷" * 32_000,
                                   "👨\u200d" * 32_000 + "7"])
def test_long_emoji_replies_finish(reply: str) -> None:
    found = final_answer(reply)
    assert found is None or isinstance(found.text, str)

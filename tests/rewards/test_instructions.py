"""Tests for the instruction-following verifier (rewards.instructions)."""

from __future__ import annotations

import doctest
import time

import pytest

import rewards.instructions
from rewards.instructions import CHECKS, claims_compliance, instruction_following


def test_doctests_pass() -> None:
    assert doctest.testmod(rewards.instructions).failed == 0


@pytest.mark.parametrize(("constraint", "good", "bad"), [
    ({"kind": "max_words", "n": 3}, "red fig plum", "red fig plum pear"),
    ({"kind": "max_words", "n": 2}, "- red\n- fig", "red, fig, plum"),
    ({"kind": "min_words", "n": 2}, "red fig", "red"),
    ({"kind": "max_chars", "n": 10}, " red fig ", "red fig plum"),
    ({"kind": "lowercase"}, "red fig.", "Red fig"),
    ({"kind": "lowercase"}, '["fig"]', "123"),
    ({"kind": "uppercase"}, "RED FIG", "RED fig"),
    ({"kind": "include", "word": "red"}, "a Red fig", "bred fig"),
    ({"kind": "exclude", "word": "red"}, "bred fig", "fig, RED"),
    ({"kind": "json"}, '["red", "fig"]', "red fig"),
    ({"kind": "json"}, '{"fruit": "fig"}', '"fig"'),
    ({"kind": "json"}, "[1, 2]", "[" * 100_000),
    ({"kind": "bullets"}, "- red\n\n- fig\n", "- red\nfig"),
    ({"kind": "bullets"}, "- red", "-red"),
    ({"kind": "sentences", "n": 2}, "Red fig. Green plum!", "Red fig."),
    ({"kind": "sentences", "n": 2}, "It is 3.5 kg. Yes", "One. Two. Three."),
    # Outside ASCII: words, whole words and sentences of any script.
    ({"kind": "max_words", "n": 2}, "Привет мир", "Привет мир снова"),
    ({"kind": "min_words", "n": 2}, "Привет мир", "Привет"),
    ({"kind": "include", "word": "мир"}, "Привет, Мир!", "мировой рекорд"),
    ({"kind": "exclude", "word": "мир"}, "мировой рекорд", "привет мир"),
    ({"kind": "include", "word": "café"}, "un café noir", "cafés"),
    ({"kind": "lowercase"}, "привет мир", "Привет мир"),
    ({"kind": "sentences", "n": 2}, "Привет. Мир!", "Привет."),
    ({"kind": "sentences", "n": 2}, "你好。世界！", "你好。"),
    # Markdown's other bullet, and JSON in a code fence.
    ({"kind": "bullets"}, "* red\n* fig", "*red\n* fig"),
    ({"kind": "bullets"}, "- red\n* fig", "• red"),
    ({"kind": "json"}, '```json\n["red", "fig"]\n```', '```json\n["red", "fig"]'),
    ({"kind": "json"}, '```\n{"fruit": "fig"}\n```', '```json\n"fig"\n```'),
])
def test_each_constraint_right_and_wrong(constraint: dict, good: str, bad: str) -> None:
    assert CHECKS[constraint["kind"]](good, constraint)
    assert not CHECKS[constraint["kind"]](bad, constraint)
    assert instruction_following([good, bad], [[constraint]] * 2) == [1.0, 0.0]


SPEC = [{"kind": "lowercase"}, {"kind": "max_words", "n": 3}, {"kind": "include", "word": "red"}]


def test_score_is_the_fraction_satisfied() -> None:
    responses = ["red fig", "Red fig", "Red fig plum pear", "Fig Plum Pear Lime"]
    assert instruction_following(responses, [SPEC] * 4) == [1.0, 2 / 3, 1 / 3, 0.0]


@pytest.mark.parametrize("claim", [
    "Fig. I followed all the instructions.", "FIG, as requested", "fig (word count: 1)",
    "This response satisfies all constraints: fig", "fig - fully compliant", "fig. complies.",
])
def test_claiming_compliance_without_complying_earns_nothing(claim: str) -> None:
    assert claims_compliance(claim)
    assert instruction_following([claim], [SPEC]) == [0.0]


@pytest.mark.parametrize("claim", [
    "fig (3 words)", "fig. All constraints are satisfied.", "Fig! I have met every requirement.",
    "fig; my answer complies with the rules", "fig, compliant with all instructions",
    "FIG. 100% compliant.", "fig — as instructed",
])
def test_more_ways_of_claiming_compliance_are_caught(claim: str) -> None:
    assert claims_compliance(claim)
    assert instruction_following([claim], [SPEC]) == [0.0]


@pytest.mark.parametrize("innocent", [
    "gdpr compliance matters", "the device complies with eu law", "a compliant red fig",
    "follow all the rules of the road", "i followed the red fig", "compliance costs money",
    "word counts vary", "red fig is not compliant with gdpr",
])
def test_text_that_only_mentions_compliance_is_not_a_claim(innocent: str) -> None:
    assert not claims_compliance(innocent)
    spec = [{"kind": "lowercase"}, {"kind": "max_words", "n": 2}]
    assert instruction_following([innocent], [spec]) == [0.5]  # scored, not zeroed


def test_claiming_compliance_while_complying_keeps_full_credit() -> None:
    spec = [{"kind": "lowercase"}, {"kind": "include", "word": "red"}]
    assert instruction_following(["red fig, as requested"], [spec]) == [1.0]


def test_empty_response_earns_nothing() -> None:
    spec = [{"kind": "max_words", "n": 3}, {"kind": "exclude", "word": "red"}]
    assert instruction_following(["", " \n", "fig"], [spec] * 3) == [0.0, 0.0, 1.0]


def test_bad_specs_are_caller_errors() -> None:
    with pytest.raises(ValueError, match="unknown constraint kind 'rhyme'"):
        instruction_following(["fig"], [[{"kind": "rhyme"}]])
    with pytest.raises(ValueError, match="at least one constraint"):
        instruction_following(["fig"], [[]])
    with pytest.raises(ValueError, match="2 responses but 1 specs"):
        instruction_following(["fig", "red"], [SPEC])


# --- issue 29: invisible replies, invisible separators, look-alike letters, cost ---------

@pytest.mark.parametrize("invisible", [".", "-", "\u200b", "\u2800", " \u200b\u2060 ", "\x01",
                                       "...", "- -", "\ufeff", "\u3164"])
def test_a_reply_with_no_visible_word_earns_nothing(invisible: str) -> None:
    spec = [{"kind": "max_words", "n": 3}, {"kind": "exclude", "word": "red"},
            {"kind": "lowercase"}]
    assert instruction_following([invisible], [spec]) == [0.0]


@pytest.mark.parametrize("separator", ["\u2800", "\u200b", "\u2060", "\x01", "\u3000", "\u00a0",
                                       "\u180e", "\ufeff", "\u2028", "\x7f", "\u3164"])
def test_words_joined_by_an_invisible_separator_are_counted_apart(separator: str) -> None:
    text = separator.join(["red", "fig", "plum", "pear"])
    assert instruction_following([text] * 2, [[{"kind": "max_words", "n": 3}],
                                              [{"kind": "min_words", "n": 4}]]) == [0.0, 1.0]


@pytest.mark.parametrize("disguised", [
    "a f\u0456g",  # Cyrillic і
    "a ｆｉｇ",  # fullwidth
    "a f\u00adig", "a fi\u200bg", "a fi\u2060g", "a FIG", "a fi\u0307g",  # soft hyphen, ZW, mark
    "a \U0001d41f\U0001d422\U0001d420",  # mathematical bold
    "a fig\u200b", "a F\u0406G",  # Cyrillic capital І
])
def test_avoid_sees_through_disguised_letters(disguised: str) -> None:
    spec = [{"kind": "exclude", "word": "fig"}]
    assert instruction_following([disguised], [spec]) == [0.0]
    assert instruction_following([disguised], [[{"kind": "include", "word": "fig"}]]) == [1.0]


def test_matching_as_seen_keeps_other_scripts_and_whole_words() -> None:
    assert CHECKS["include"]("Привет, Мир!", {"word": "мир"})
    assert not CHECKS["include"]("мировой рекорд", {"word": "мир"})
    assert CHECKS["exclude"]("figs and bred", {"word": "fig"})
    assert CHECKS["include"]("un café noir", {"word": "café"})


KINDS = [{"kind": "max_words", "n": 3}, {"kind": "min_words", "n": 3},
         {"kind": "max_chars", "n": 10}, {"kind": "lowercase"}, {"kind": "uppercase"},
         {"kind": "include", "word": "red"}, {"kind": "exclude", "word": "red"},
         {"kind": "json"}, {"kind": "bullets"}, {"kind": "sentences", "n": 2}]


@pytest.mark.parametrize("flood", ["!" * 65536, "!" * 65536 + "x", "[" * 65536, "a" * 65536,
                                   "- " * 32768, ". " * 32768, "\u200b" * 65536])
def test_every_kind_is_cheap_on_a_64k_flood(flood: str) -> None:
    """Before: max_words on 32k "!" took 8.5-10 s, sentences on 64k "!" + "x" over a minute."""
    start = time.perf_counter()
    instruction_following([flood], [KINDS])
    assert time.perf_counter() - start < 5.0  # milliseconds on an idle machine

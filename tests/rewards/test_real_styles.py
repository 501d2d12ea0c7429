"""Correct replies in the styles real models write score 1.0; echoes, hedges, negations and
hidden characters score 0 (issue 47).

Two corpora, hand-written from what the models write:

- ``STYLES``: the styles the issue names (Qwen2.5's chain of thought then ``\\boxed{}``,
  Llama-3's "The final answer is: $\\boxed{72}$", SmolLM2's "10 + 46 = 56", R1's
  ``<think>..</think><answer>72</answer>``, GSM8K's ``#### 72``, ``**72**``, "The answer is
  72.", "72 clips"), which the extractor was built against: every reply must score 1.0;
- three held-out sets of other styles, each written before the verifiers were run on it
  (Qwen2.5-Math's "### Final Answer" display box, Gemma's bold closing sentence, Mistral's
  ``\\( .. \\)``, multi-line tags, "Hence ...", "ANSWER:", "(Answer: 72)", "B is
  correct.", ...). Each set's misses led to general fixes before the next set was written, so
  only a set's first score is a held-out figure (recorded at each set); ``held_out_rates``,
  ``held_out_2_rates`` and ``held_out_3_rates`` report the share scoring 1.0 now.

Speed is not tested here (bench/verifier_cost.py times verifiers); a 64k-character reply
must still get an answer.
"""

from __future__ import annotations

import pytest

from rewards import (countdown, exact_int, exact_match, final_int, math_equiv, multiple_choice,
                     unit_tests)
from rewards.extract import final_answer

# --- math: (gold, working, the answer in LaTeX, in plain text, a unit) ------------------

PROBLEMS = [
    ("72", "In April she sold 48 clips. In May she sold half as many: 48 / 2 = 24.\n"
     "Altogether she sold 48 + 24 = 72 clips.", "72", "72", "clips"),
    ("56", "We add the two numbers: 10 + 46 = 56.", "56", "56", ""),
    ("1024", "Doubling ten times: 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024.", "1024", "1024", ""),
    ("\\frac{3}{4}", "We write 0.75 = \\frac{75}{100} and divide both by 25.", "\\frac{3}{4}",
     "3/4", ""),
    ("x^2+x-6", "Using FOIL: (x+3)(x-2) = x^2 - 2x + 3x - 6.\n"
     "Combining like terms gives the result.", "x^2 + x - 6", "x^2 + x - 6", ""),
    ("2\\sqrt{3}", "Since 12 = 4 \\cdot 3, we have \\sqrt{12} = \\sqrt{4}\\sqrt{3}.",
     "2\\sqrt{3}", "2\\sqrt{3}", ""),
    ("-3", "Subtract 9 from both sides: 2x = -6. Divide by 2.", "x = -3", "-3", ""),
    ("18", "Janet has 16 eggs. She eats 3 and bakes 4, so 16 - 3 - 4 = 9 are left.\n"
     "She sells them at $2 each: 9 * 2 = 18.", "18", "18", "dollars"),
]

# Each style: a function of (working, latex, plain, unit) -> reply.
STYLES = {
    "qwen boxed": lambda w, l, p, u: f"{w}\n\nTherefore, the answer is $\\boxed{{{l}}}$.",
    "qwen \\( boxed": lambda w, l, p, u: (f"To solve this, we go step by step.\n\n1. {w}\n\n"
                                          f"The final answer is \\(\\boxed{{{l}}}\\)."),
    "llama-3": lambda w, l, p, u: (f"## Step 1: Set up\n{w}\n\n## Step 2: Conclude\n"
                                   f"The result follows.\n\nThe final answer is: $\\boxed{{{l}}}$"),
    "r1 tags": lambda w, l, p, u: (f"<think>\nLet me think. {w}\nSo it is {p}.\n</think>\n"
                                   f"<answer>{p}</answer>"),
    "r1 boxed": lambda w, l, p, u: f"<think>\n{w}\n</think>\n\n{w}\n\n\\boxed{{{l}}}",
    "gsm8k": lambda w, l, p, u: f"{w}\n#### {p}",
    "bold": lambda w, l, p, u: f"{w}\n\n**{p}**",
    "answer is": lambda w, l, p, u: f"{w} The answer is {p}.",
    "final answer:": lambda w, l, p, u: f"{w}\n\nFinal answer: {p}",
    "**Answer:**": lambda w, l, p, u: f"{w}\n\n**Answer:** {p}",
    "$ in a sentence": lambda w, l, p, u: f"{w}\nSo the result is ${l}$.",
    "minerva": lambda w, l, p, u: (f"{w}\nFinal Answer: The final answer is ${l}$. "
                                   f"I hope it is correct."),
    "terse": lambda w, l, p, u: p,
    "smollm2 equation": lambda w, l, p, u: f"{w}\nSo the total = {p}",
}
UNIT_STYLES = {
    "units": lambda w, l, p, u: f"{w}\nSo the answer is {p} {u}.",
    "units, last line": lambda w, l, p, u: f"{w}\n{p} {u}",
}
HELD_OUT = {
    "qwen-math final answer": lambda w, l, p, u: (f"{w}\n\n### Final Answer\n"
                                                 f"\\[\n\\boxed{{{l}}}\n\\]"),
    "gemma bold sentence": lambda w, l, p, u: f"{w}\n\n**Therefore, the answer is {p}.**",
    "mistral \\(": lambda w, l, p, u: f"{w}\n\nThe answer is \\( {l} \\).",
    "ANSWER:": lambda w, l, p, u: f"{w}\nANSWER: {p}",
    "hence": lambda w, l, p, u: f"{w}\n\nHence the answer is: {p}",
    "multi-line tag": lambda w, l, p, u: f"<think>{w}</think>\n<answer>\n{p}\n</answer>",
    "display box": lambda w, l, p, u: f"{w}\n\n$$\\boxed{{{l}}}$$",
    "phi answer is:": lambda w, l, p, u: f"{w}\nThe answer is: {p}",
    "final answer bold": lambda w, l, p, u: f"{w}\n\n**Final Answer:** $\\boxed{{{l}}}$",
    "result is": lambda w, l, p, u: f"{w}\n\nThe result is {p}.",
    "equals line": lambda w, l, p, u: f"{w}\n= {p}",
    "boxed then remark": lambda w, l, p, u: (f"{w}\n\n\\boxed{{{l}}}\n\n"
                                            f"Let me know if you need more help!"),
}
HELD_OUT_UNITS = {
    "in total": lambda w, l, p, u: f"{w}\n\nIn total, {p} {u}.",
    "answer: with unit": lambda w, l, p, u: f"{w}\nAnswer: {p} {u}",
}


def _replies(styles: dict, unit_styles: dict) -> list[tuple[str, str, str]]:
    """(style, gold, reply) for every problem in every style (unit styles where it has one)."""
    out = []
    for gold, working, latex, plain, unit in PROBLEMS:
        for name, style in styles.items():
            out.append((name, gold, style(working, latex, plain, unit)))
        for name, style in unit_styles.items() if unit else ():
            out.append((name, gold, style(working, latex, plain, unit)))
    return out


MATH = _replies(STYLES, UNIT_STYLES)
MATH_HELD_OUT = _replies(HELD_OUT, HELD_OUT_UNITS)
# The integer problems, for exact_int and final_int.
INTS = [(style, int(gold), reply) for style, gold, reply in MATH if gold.lstrip("-").isdigit()]
INTS_HELD_OUT = [(style, int(gold), reply) for style, gold, reply in MATH_HELD_OUT
                 if gold.lstrip("-").isdigit()]


@pytest.mark.parametrize(("style", "gold", "reply"), MATH, ids=[f"{s}:{g}" for s, g, _ in MATH])
def test_math_equiv_reads_real_styles(style: str, gold: str, reply: str) -> None:
    assert math_equiv([reply], [gold]) == [1.0]


@pytest.mark.parametrize(("style", "gold", "reply"), INTS, ids=[f"{s}:{g}" for s, g, _ in INTS])
def test_exact_and_final_int_read_real_styles(style: str, gold: int, reply: str) -> None:
    assert exact_int([reply], [gold]) == [1.0]
    assert final_int([reply], [gold]) == [1.0]


# --- multiple choice and short text ------------------------------------------------------

QUESTION_WORK = ("Let's consider each option.\nA) London is the capital of the UK.\n"
                 "B) Paris is the capital of France.\nC) Rome is the capital of Italy.\n")
CHOICES = [
    "The correct answer is (B).", "The answer is B.", "**B**", "\\boxed{B}", "<answer>B</answer>",
    "B. Paris", "B", "(B)", "B)", f"{QUESTION_WORK}\nThe answer is (B).",
    f"{QUESTION_WORK}\nTherefore, the correct answer is **B**.",
    f"{QUESTION_WORK}\nAnswer: B", "Answer: (B) Paris", "The answer is: B) Paris",
    f"<think>{QUESTION_WORK}</think>\n<answer>B</answer>", "The final answer is $\\boxed{B}$",
    "answer: B. Correct!", "The correct option is B.", f"{QUESTION_WORK}\n**Answer: B**",
    "Option B", "#### B",
]
CHOICES_HELD_OUT = [
    "**Answer: (B)**", "The best answer is B.", f"{QUESTION_WORK}\nSo the answer is B, Paris.",
    "The right choice is (B) Paris.", "\\(\\boxed{\\text{B}}\\)", "Final Answer: B",
    f"{QUESTION_WORK}\n\n### Final Answer\n\\boxed{{B}}", "ANSWER: B", "<answer>\nB\n</answer>",
    "Correct answer: B", "The answer is option B.", "B is correct.",
]
TEXTS = [  # (gold, reply)
    ("Paris", "Paris"), ("Paris", "The capital of France is Paris."), ("Paris", "**Paris**"),
    ("Paris", '"Paris"'), ("Paris", "Answer: Paris"), ("Paris", "The answer is Paris."),
    ("Paris", "\\boxed{\\text{Paris}}"), ("Paris", "<answer>Paris</answer>"),
    ("Paris", "Final answer: Paris"), ("Paris", "**Answer:** Paris"),
    ("New York", "The city is New York."), ("New York", "The answer is **New York**."),
    ("George Washington", "The first president of the United States was George Washington."),
    ("George Washington",
     "<think>The first president...</think>\n<answer>George Washington</answer>"),
    ("blue", "The sky is blue."), ("blue", "Answer: blue"), ("1969", "The answer is 1969."),
    ("Jupiter", "The largest planet is Jupiter."), ("Jupiter", "It's Jupiter."),
    ("Jupiter",
     "Let me think about the planets: Mercury, Venus, Earth, Mars.\nThe answer is Jupiter."),
]
TEXTS_HELD_OUT = [
    ("Paris", "**Paris**."), ("Paris", "ANSWER: Paris"), ("Paris", "`Paris`"),
    ("Paris", "The final answer is: Paris"), ("New York", "Answer: \"New York\""),
    ("Jupiter", "Jupiter is the largest planet."), ("blue", "**Answer: blue**"),
    ("George Washington", "That would be George Washington."),
    ("Paris", "### Answer\nParis"), ("1969", "Final answer: 1969"),
]


@pytest.mark.parametrize("reply", CHOICES)
def test_multiple_choice_reads_real_styles(reply: str) -> None:
    assert multiple_choice([reply], ["B"]) == [1.0]


@pytest.mark.parametrize(("gold", "reply"), TEXTS)
def test_exact_match_reads_real_styles(gold: str, reply: str) -> None:
    assert exact_match([reply], [gold]) == [1.0]


# --- countdown ---------------------------------------------------------------------------

FORTY = {"numbers": [3, 4, 8, 2], "target": 40}
COUNTDOWNS = [
    "<think>8-3=5, 5*4=20, 20*2=40. That works.</think>\n<answer>(8 - 3) * 4 * 2</answer>",
    "<answer> (8-3)*4*2 </answer>", "(8 − 3) × 4 × 2", "(8 - 3) \\times 4 \\times 2 = 40",
    "$(8-3) \\cdot 4 \\cdot 2 = 40$", "The equation is (8-3)*4*2 = 40.", "(8-3)*4*2.",
    "\\boxed{(8-3) \\times 4 \\times 2}",
    "Step 1: 8 - 3 = 5\nStep 2: 5 × 4 = 20\nStep 3: 20 × 2 = 40",
    "Step 1: 8 - 3 = 5\nStep 2: 5 * 4 = 20\nStep 3: 20 * 2 = 40\nThe answer is 40.",
    "The answer is (8 - 3) × 4 × 2 = 40", "4 * 2 * (8 - 3)", "**(8-3)*4*2 = 40**",
    "Let me try: 8*3 = 24, no.\n\nSo the expression is (8-3)*4*2 = 40",
    "<answer>(8 - 3) × 4 × 2 = 40</answer>", "((8 - 3) * 4) * 2",
    "Final answer: $(8 - 3) \\times 4 \\times 2$",
]
COUNTDOWNS_HELD_OUT = [
    "<think>Try 8+3+4+2=17, too small. Try (8-3)*4*2.</think> <answer>(8-3)*4*2</answer>",
    "**Answer:** (8 − 3) × 4 × 2 = 40", "\\[(8-3)\\times 4\\times 2=40\\]",
    "First, 8 - 3 = 5.\nThen, 5 × 4 = 20.\nFinally, 20 × 2 = 40.",
    "Using all numbers: $(8 - 3) \\times 2 \\times 4 = 40$.",
    "8 − 3 = 5, 5 × 4 × 2 = 40\n(8 − 3) × 4 × 2",
]


@pytest.mark.parametrize("reply", COUNTDOWNS)
def test_countdown_reads_real_styles(reply: str) -> None:
    assert countdown([reply], [FORTY]) == [1.0]


# --- unit tests --------------------------------------------------------------------------

CODE_TESTS = ["assert add(2, 3) == 5", "assert add(-1, 1) == 0"]
ADD = "def add(a, b):\n    return a + b\n"
CODES = [
    f"```python\n{ADD}```", f"``` python\n{ADD}```", f"~~~\n{ADD}~~~", f"~~~python\n{ADD}~~~",
    f"Here is the function. Use it as `add(2, 3)`.\n\n```python\n{ADD}```\n\nIt adds.",
    f"```python\n{ADD}\nif __name__ == \"__main__\":\n    a, b = map(int, input().split())\n"
    f"    print(add(a, b))\n```",
    f"```python\n{ADD}```\n\nExample usage:\n```python\nprint(add(2, 3))  # 5\n```",
    f"```py\n{ADD}```", ADD, f"```\n{ADD}```",
]
CODES_HELD_OUT = [
    f"Sure! Here's a solution:\n````python\n{ADD}````",
    f"A first try:\n```python\ndef add(a, b):\n    return a - b\n```\nFixed:\n```python\n{ADD}```",
    f"```python3\n{ADD}```", f"```Python\nimport sys\n\n{ADD}\nif __name__ == '__main__':\n"
    f"    print(add(*map(int, sys.stdin.read().split())))\n```",
]


def test_unit_tests_read_real_styles() -> None:
    assert unit_tests(CODES, [CODE_TESTS] * len(CODES)) == [1.0] * len(CODES)


# --- held out: the share that scores 1.0 -------------------------------------------------


def held_out_rates() -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of every verifier on the held-out styles."""
    ints = [gold for _, gold, _ in INTS_HELD_OUT]
    int_replies = [reply for _, _, reply in INTS_HELD_OUT]
    scores = {
        "math_equiv": math_equiv([r for _, _, r in MATH_HELD_OUT],
                                 [g for _, g, _ in MATH_HELD_OUT]),
        "exact_int": exact_int(int_replies, ints),
        "final_int": final_int(int_replies, ints),
        "multiple_choice": multiple_choice(CHOICES_HELD_OUT, ["B"] * len(CHOICES_HELD_OUT)),
        "exact_match": exact_match([r for _, r in TEXTS_HELD_OUT], [g for g, _ in TEXTS_HELD_OUT]),
        "countdown": countdown(COUNTDOWNS_HELD_OUT, [FORTY] * len(COUNTDOWNS_HELD_OUT)),
        "unit_tests": unit_tests(CODES_HELD_OUT, [CODE_TESTS] * len(CODES_HELD_OUT)),
    }
    return {name: (int(sum(s == 1.0 for s in got)), len(got)) for name, got in scores.items()}


# First score of this set: math_equiv 97/100, exact_int and final_int 61/64, multiple_choice
# 11/12, exact_match 8/10, countdown 6/6, unit_tests 4/4.
def test_held_out_styles_mostly_score() -> None:
    rates = held_out_rates()
    low = {name: f"{right}/{n}" for name, (right, n) in rates.items() if right < 0.95 * n}
    assert not low, f"held-out styles below 95%: {low}"


# --- what must score 0 ---------------------------------------------------------------------

FILLER = " We double-check each step carefully before going on." * 6  # past 200 characters
HEDGES = [  # (gold, reply)
    ("72", "It is seventy-one or \\boxed{72}."), ("72", "\\boxed{71} or \\boxed{72}"),
    ("72", f"The answer is \\boxed{{71}}.{FILLER}\nActually, \\boxed{{72}}."),
    ("72", f"<answer>71</answer>{FILLER}<answer>72</answer>"),
    ("72", "The answer is 71 or 72."), ("72", f"The answer is 71.{FILLER}\nThe answer is 72."),
    ("72", "#### 71\n#### 72"), ("72", "\\boxed{72 \\text{ or } 71}"), ("72", "72 or 71"),
    ("72", "I think it is \\boxed{72}, or maybe 71"),
    ("x^2+x-6", "\\boxed{x^2+x-6} or \\boxed{(x+3)(x-2)}"),
]
NEGATIONS = [
    ("72", "The answer is not \\boxed{72}"), ("72", "The answer isn't 72."),
    ("72", "72 is not the answer."), ("72", "The answer is not 72"),
    ("72", "<answer>not 72</answer>"), ("72", "It can never be $72$"),
]
HIDDEN = [
    ("72", "\\boxed{7\u200b2}"), ("72", "72\u200b"), ("72", "The answer is \u200b72."),
    ("72", "\ufeff72"), ("72", "7\u00ad2"), ("72", "\\boxed{72}\u202e"),
]


@pytest.mark.parametrize(("gold", "reply"), HEDGES + NEGATIONS + HIDDEN)
def test_hedges_negations_and_hidden_characters_score_zero(gold: str, reply: str) -> None:
    assert math_equiv([reply], [gold]) == [0.0]
    if gold.isdigit():
        assert exact_int([reply], [int(gold)]) == [0.0]
        assert exact_match([reply], [gold]) == [0.0]


# (question, gold, echo): the echoes. With the question (math_equiv's ``questions``)
# each scores 0 (envs pass their prompt as the question). Without it only the unreduced
# \frac{6x}{3} and 6x/3 score 0 (ECHOES_CAUGHT_WITHOUT_THE_QUESTION).
ECHOES = [
    ("Expand (x+3)(x-2).", "x^2+x-6", "(x+3)(x-2)"),
    ("Expand $(x+3)(x-2)$.", "x^2+x-6", "The answer is $\\boxed{(x-2)(x+3)}$."),
    ("Factor x^2+x-6.", "(x+3)(x-2)", "x^2+x-6"),
    ("Factor $x^2+x-6$.", "(x+3)(x-2)", "\\boxed{x^2 + x - 6}"),
    ("Simplify $\\frac{6x}{3}$.", "2x", "\\frac{6x}{3}"),
    ("Simplify \\frac{6x}{3}.", "2x", "\\boxed{6x/3}"),
    ("Simplify $\\sqrt{12}$.", "2\\sqrt{3}", "\\sqrt{12}"),
    ("Compute $2^{10}$.", "1024", "2^{10}"),
    ("Compute 2^{10}.", "1024", "We have \\boxed{2^{10}}"),
    ("Express 0.75 as a fraction.", "\\frac{3}{4}", "0.75"),
    ("Round 3.14159 to two decimal places.", "3.14", "3.14159"),
    ("Convert 0.5 to a fraction.", "\\frac{1}{2}", "0.5"),
]


ECHOES_CAUGHT_WITHOUT_THE_QUESTION = [("2x", "\\frac{6x}{3}"), ("2x", "\\boxed{6x/3}"),
                                      ("x/2", "\\frac{2x}{4}")]


@pytest.mark.parametrize(("gold", "echo"), ECHOES_CAUGHT_WITHOUT_THE_QUESTION)
def test_an_unreduced_term_fraction_is_not_final(gold: str, echo: str) -> None:
    assert math_equiv([echo], [gold]) == [0.0]
    assert math_equiv(["\\frac{3x}{2}"], ["3x/2"]) == [1.0]


@pytest.mark.parametrize(("question", "gold", "echo"), ECHOES)
def test_the_questions_own_expression_scores_zero(question: str, gold: str, echo: str) -> None:
    assert math_equiv([echo], [gold], questions=[question]) == [0.0]


@pytest.mark.parametrize(("question", "gold", "right"), [
    ("Expand (x+3)(x-2).", "x^2+x-6", "x^2 + x - 6"),
    ("Factor x^2+x-6.", "(x+3)(x-2)", "(x-2)(x+3)"),
    ("Simplify $\\frac{6x}{3}$.", "2x", "2x"),
    ("Simplify $\\sqrt{12}$.", "2\\sqrt{3}", "2\\sqrt{3}"),
    ("Compute $2^{10}$.", "1024", "\\boxed{1024}"),
    ("Express 0.75 as a fraction.", "\\frac{3}{4}", "3/4"),
    ("Round 3.14159 to two decimal places.", "3.14", "3.14"), ("What is 3+4?", "7", "3+4=7"),
])
def test_the_right_answer_to_the_same_question_still_scores(question: str, gold: str,
                                                             right: str) -> None:
    assert math_equiv([right], [gold], questions=[question]) == [1.0]


def test_terse_replies_score_as_before() -> None:
    # The embedded default's replies: Arithmetic-v1/v2 and Math-v2.
    assert exact_int(["85", "-12", "8 5", "85 86", ""], [85, -12, 85, 85, 85]) == [1, 1, 0, 0, 0]
    assert final_int(["7+8=15|4+3+1=8|85", "7+8=15|4+3+1=8|84", "85|"], [85] * 3) == [1, 0, 0]
    assert math_equiv(["4x+2", "15/2", "x=4", "3*(4+5)-7", "2x+3=11", "7x-3x+2"],
                      ["4x+2", "15/2", "4", "20", "4", "4x+2"]) == [1, 1, 1, 0, 0, 0]


def test_a_64k_character_reply_still_gets_an_answer() -> None:
    reply = "Let me think. " * 5_000 + "48 + 24 = 72 clips.\n" + "The answer is \\boxed{72}."
    assert len(reply) > 64_000
    assert final_answer(reply).text == "72"
    assert math_equiv([reply], ["72"]) == [1.0]
    assert exact_int(["9" * 64_000], [9]) == [0.0]


# --- a second held-out set, written after the first had been looked at ---------------------
# The first set's misses led to fixes (a clause's leading comma, "\( x = -3 \)", sentences
# that start with the answer), so it is no longer held out; this one was written after those
# fixes. First score: math_equiv 86/96, exact_int and final_int 46/60, multiple_choice 5/10,
# exact_match 8/10, countdown 3/6, unit_tests 3/4. Fixes followed ("(Answer: 72)",
# "\\therefore", "should be", "B is correct", a dash after the letter, bold inside a sentence,
# steps on one line or in a tag, a tick after the result, an indented fence).

HELD_OUT_2_MATH = {
    "thus the value": lambda w, l, p, u: f"{w}\n\nThus the value is ${l}$.",
    "final result:": lambda w, l, p, u: f"**Solution:** {w}\n\nThe final result: {p}",
    "answer =": lambda w, l, p, u: f"{w}\nAnswer = {p}",
    "solution is": lambda w, l, p, u: f"{w}\n\nThe solution is {p}.",
    "heading then value": lambda w, l, p, u: f"{w}\n\n**Final answer**\n{p}",
    "we get": lambda w, l, p, u: f"{w} Thus, we get {p}.",
    "therefore sign": lambda w, l, p, u: f"{w}\n\\(\\therefore\\) {p}",
    "therefore bold": lambda w, l, p, u: f"{w}\n\nTherefore: **{p}**",
    "parenthesised answer": lambda w, l, p, u: f"{w} (Answer: {p})",
    "textbf answer": lambda w, l, p, u: f"{w}\n\n\\textbf{{Answer:}} ${l}$",
    "answer newline": lambda w, l, p, u: f"{w}\n\nAnswer\n{p}",
    "boxed in display math": lambda w, l, p, u: f"{w}\n\\[\n\\text{{Answer}} = \\boxed{{{l}}}\n\\]",
}
HELD_OUT_2_CHOICES = [
    "I'd go with B.", "My answer: (B)", "The answer should be B.", "B — Paris", "**(B) Paris**",
    "Answer: **B. Paris**", "The correct response is B.", "\\boxed{\\textbf{B}}",
    "Looking at the options, Paris is the capital of France, so (B).", "Answer: Option B",
]
HELD_OUT_2_TEXTS = [
    ("Paris", "**Answer**: Paris"), ("Paris", "It must be Paris."),
    ("Paris", "My answer is Paris."), ("Paris", "I believe the answer is Paris."),
    ("Paris", "PARIS"), ("Paris", "\\text{Paris}"),
    ("Paris", "The capital city of France is **Paris**."),
    ("New York", "New York City? No: New York."), ("Jupiter", "The planet in question is Jupiter"),
    ("George Washington", "Answer:\nGeorge Washington"),
]
HELD_OUT_2_COUNTDOWNS = [
    "<answer>8-3=5, 5*4=20, 20*2=40</answer>", "(8 - 3) · 4 · 2 = 40 ✓",
    "Answer: 2 × 4 × (8 − 3)",
    "We can do 8 - 3 = 5, then 5 * 4 = 20, and 20 * 2 = 40.", "<answer>\n(8-3)*4*2\n</answer>",
    "\\((8 - 3) \\times 4 \\times 2 = 40\\)",
]
HELD_OUT_2_CODES = [
    f"```python\n# Solution\n{ADD}```\n\n### Explanation\nIt returns the sum.",
    f"```python\n{ADD}```\nTests:\n```python\nassert add(1, 2) == 3\n```",
    f"1. The code:\n\n   ```python\n   {ADD.replace(chr(10) + '    ', chr(10) + '       ')}   ```",
    f"<think>Simple.</think>\n```python\n{ADD}```",
]


def held_out_2_rates() -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of every verifier on the second held-out set."""
    math = _replies(HELD_OUT_2_MATH, {})
    ints = [(gold, reply) for _, gold, reply in math if gold.lstrip("-").isdigit()]
    scores = {
        "math_equiv": math_equiv([r for _, _, r in math], [g for _, g, _ in math]),
        "exact_int": exact_int([r for _, r in ints], [int(g) for g, _ in ints]),
        "final_int": final_int([r for _, r in ints], [int(g) for g, _ in ints]),
        "multiple_choice": multiple_choice(HELD_OUT_2_CHOICES, ["B"] * len(HELD_OUT_2_CHOICES)),
        "exact_match": exact_match([r for _, r in HELD_OUT_2_TEXTS],
                                   [g for g, _ in HELD_OUT_2_TEXTS]),
        "countdown": countdown(HELD_OUT_2_COUNTDOWNS, [FORTY] * len(HELD_OUT_2_COUNTDOWNS)),
        "unit_tests": unit_tests(HELD_OUT_2_CODES, [CODE_TESTS] * len(HELD_OUT_2_CODES)),
    }
    return {name: (int(sum(s == 1.0 for s in got)), len(got)) for name, got in scores.items()}


# --- a third held-out set, written after the fixes the second led to ---------------------------
# Scored once before any change: math_equiv 91/96, exact_int and final_int 56/60, multiple_choice
# 8/10, exact_match 6/10, countdown 5/6, unit_tests 4/4. Five general fixes followed (a box
# holding \displaystyle, an "Explanation:" section after the answer, a "> " quote, a remark in
# brackets after a text answer, "x" as a times sign); "Hence option (B) is right." and "It
# happened in 1969." still scored 0 until the fourth set's fixes.

HELD_OUT_3_MATH = {
    "the answer:": lambda w, l, p, u: f"{w}\nThe answer: {p}",
    "our final answer": lambda w, l, p, u: f"{w}\n\nSo our final answer is {p}.",
    "displaystyle box": lambda w, l, p, u: f"{w}\n\n\\boxed{{\\displaystyle {l}}}",
    "result:": lambda w, l, p, u: f"{w}\n\nResult: {p}",
    "blockquote": lambda w, l, p, u: f"{w}\n\n> **Answer:** {p}",
    "list item": lambda w, l, p, u: f"{w}\n- Final: {p}",
    "which is our answer": lambda w, l, p, u: (f"{w}\nThe value of the expression is ${l}$, "
                                               f"which is our answer."),
    "hope this helps": lambda w, l, p, u: f"{w}\n\nI hope this helps! The answer is {p}.",
    "bold then is the answer": lambda w, l, p, u: f"{w}\n\n**{p}** is the answer.",
    "answer display": lambda w, l, p, u: f"{w}\n\nAnswer: $$ {l} $$",
    "answer on its own line": lambda w, l, p, u: f"{w}\n\nFinal answer:\n\n{p}",
    "boxed then hope": lambda w, l, p, u: (f"{w}\n\nTherefore, the final answer is "
                                           f"$\\boxed{{{l}}}$. I hope it is correct."),
}
HELD_OUT_3_CHOICES = [
    "(B) is the correct answer.", "**Correct answer: (B) Paris**", "Therefore, B.",
    "Final choice: B", "Answer — B", "the answer is b",
    "B\n\nExplanation: Paris is the capital of France.", "\\boxed{(B)}",
    "My final answer is B) Paris.", "Hence option (B) is right.",
]
HELD_OUT_3_TEXTS = [
    ("Paris", "Answer: Paris."), ("Paris", 'The correct answer is "Paris".'),
    ("New York", "**New York**"),
    ("Paris", "Paris\n\nExplanation: Paris has been the capital since 987."),
    ("Jupiter", "Answer: Jupiter (the fifth planet)"), ("blue", "Blue."),
    ("George Washington", "Final answer: George Washington"), ("1969", "It happened in 1969."),
    ("Paris", "> Paris"), ("Paris", "The answer would be Paris."),
]
HELD_OUT_3_COUNTDOWNS = [
    "<answer>(8-3)*(4*2)</answer>", "(8 - 3) x 4 x 2 = 40", "Solution: ((8-3)*4)*2=40",
    "8-3 = 5\n5*4 = 20\n20*2 = 40\nSo the answer is (8-3)*4*2", "<answer> 2*4*(8-3) = 40 </answer>",
    "$$ (8-3)\\cdot(4\\cdot 2) = 40 $$",
]
HELD_OUT_3_CODES = [
    f"```python\nfrom typing import *\n\n{ADD}```",
    f"Here:\n\n```python\nclass Helper:\n    pass\n\n\n{ADD}```",
    f"```python\n{ADD}\nprint(add(2, 3))\n```",
    f"The function:\n```python\n{ADD}\n```\nComplexity: O(1).",
]


def held_out_3_rates() -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of every verifier on the third held-out set."""
    math = _replies(HELD_OUT_3_MATH, {})
    ints = [(gold, reply) for _, gold, reply in math if gold.lstrip("-").isdigit()]
    scores = {
        "math_equiv": math_equiv([r for _, _, r in math], [g for _, g, _ in math]),
        "exact_int": exact_int([r for _, r in ints], [int(g) for g, _ in ints]),
        "final_int": final_int([r for _, r in ints], [int(g) for g, _ in ints]),
        "multiple_choice": multiple_choice(HELD_OUT_3_CHOICES, ["B"] * len(HELD_OUT_3_CHOICES)),
        "exact_match": exact_match([r for _, r in HELD_OUT_3_TEXTS],
                                   [g for g, _ in HELD_OUT_3_TEXTS]),
        "countdown": countdown(HELD_OUT_3_COUNTDOWNS, [FORTY] * len(HELD_OUT_3_COUNTDOWNS)),
        "unit_tests": unit_tests(HELD_OUT_3_CODES, [CODE_TESTS] * len(HELD_OUT_3_CODES)),
    }
    return {name: (int(sum(s == 1.0 for s in got)), len(got)) for name, got in scores.items()}


@pytest.mark.parametrize("rates", [held_out_2_rates, held_out_3_rates],
                         ids=["second held-out set", "third held-out set"])
def test_later_held_out_styles_mostly_score(rates) -> None:
    # 9 of 10 is the floor for the small text sets (one style each is still missed).
    low = {name: f"{right}/{n}" for name, (right, n) in rates().items() if right < 0.9 * n}
    assert not low, f"held-out styles below 90%: {low}"


# --- a fourth held-out set, written after the fixes the third led to ------------------------
# Styles none of the sets above has: markdown headings and tables, "✅ **Answer:**", an answer
# followed by a check line that states other numbers, the answer first and its reasoning after,
# display math on its own lines, \mathbf, "is the final answer", lowercase and bracketed
# options, italic answers, step lists with bold or bulleted labels, chained equations, a
# pytest or output block after the code. Written whole before any verifier read it.
# FIRST_SCORE_4 is its score then (bench/verifiers.py --part styles records it with the current
# rates).

# A check line after the answer, as models write one: its numbers are not the answer.
CHECKS_4 = {"72": "48 + 24 = 72 ✓", "56": "56 - 46 = 10 ✓", "1024": "2^10 = 1024 ✓",
            "3/4": "3/4 = 0.75 ✓", "x^2 + x - 6": "at x = 1 both sides give -4 ✓",
            "2\\sqrt{3}": "(2\\sqrt{3})^2 = 12 ✓", "-3": "2(-3) + 9 = 3 ✓", "18": "9 × 2 = 18 ✓"}

HELD_OUT_4_MATH = {
    "headings then therefore": lambda w, l, p, u: (f"### Solution\n{w}\n\n### Answer\n"
                                                  f"Therefore, ${l}$."),
    "table last": lambda w, l, p, u: (f"{w}\n\n| Step | Result |\n|---|---|\n"
                                      f"| Final answer | {p} |"),
    "answer then check": lambda w, l, p, u: f"{w}\n\nThe answer is {p}.\n\nCheck: {CHECKS_4[p]}",
    "boxed then verification": lambda w, l, p, u: (f"{w}\n\n**Final Answer:** $\\boxed{{{l}}}$"
                                                   f"\n\n**Verification:** {CHECKS_4[p]}"),
    "answer first, reasoning after": lambda w, l, p, u: f"**Answer: {p}**\n\n**Reasoning:** {w}",
    "display math block": lambda w, l, p, u: f"{w}\n\n**Final Answer:**\n$$\n{l}\n$$",
    "check-mark emoji": lambda w, l, p, u: f"{w}\n\n✅ **Answer: {p}**",
    "is the final answer": lambda w, l, p, u: f"{w}\n\nTherefore, {p} is the final answer.",
    "numbered steps": lambda w, l, p, u: (f"1. {w}\n2. Simplify and check the arithmetic.\n"
                                          f"3. Final answer: {p}"),
    "gives us": lambda w, l, p, u: f"{w}\n\nThis gives us {p} as the final result.",
    "therefore display": lambda w, l, p, u: f"{w}\n\n\\[\n\\therefore \\quad {l}\n\\]",
    "mathbf": lambda w, l, p, u: f"{w}\n\nSo the answer is $\\mathbf{{{l}}}$.",
    "arrow": lambda w, l, p, u: f"{w}\n\n→ Final answer: **{p}**",
    "in conclusion": lambda w, l, p, u: (f"{w}\n\nIn conclusion, the result is ${l}$, "
                                         f"as required."),
}
HELD_OUT_4_UNITS = {
    "boxed with a text unit": lambda w, l, p, u: f"{w}\n\n\\boxed{{{p} \\text{{ {u}}}}}",
    "bold answer with unit": lambda w, l, p, u: f"{w}\n\n**Answer: {p} {u}**",
    "unit then check": lambda w, l, p, u: (f"{w}\n\nShe ends up with {p} {u}.\n\n"
                                           f"Check: {CHECKS_4[p]}"),
}
HELD_OUT_4_CHOICES = [
    "The correct answer is **B) Paris**.", "(b) Paris", "Answer: b",
    f"{QUESTION_WORK}\n**Final Answer:** Option B – Paris", "### Answer\n**B**",
    f"{QUESTION_WORK}\nTherefore, the correct option is (B), Paris.",
    "The answer is B. Paris is the capital of France.", "Answer: Paris (B)",
    "Correct option: **B**", "I'm confident the answer is B — Paris is France's capital.",
    f"<think>{QUESTION_WORK}</think>\n\nThe answer is **(B)**.",
    "Based on the analysis above, the best choice is B.", "\\boxed{\\mathrm{B}}", "Answer: [B]",
]
HELD_OUT_4_TEXTS = [
    ("Paris", "Answer: Paris. It has been the capital of France since 987."),
    ("Paris", "**Final Answer:** Paris"),
    ("Paris", "The capital of France is **Paris**, located on the Seine."),
    ("New York", "### Answer\n\n**New York**"),
    ("Jupiter", "Jupiter — it is the largest planet in the solar system."),
    ("George Washington", "The answer is George Washington (1789–1797)."),
    ("blue", "answer: blue"), ("Paris", "The answer is: *Paris*"),
    ("1969", "**Answer:** 1969 (Apollo 11)"),
    ("Paris", "Paris.\n\nParis has been France's capital for centuries."),
    ("Jupiter", "**Jupiter** is the largest planet in our solar system."),
    ("New York", "I'd say New York."),
]
HELD_OUT_4_COUNTDOWNS = [
    "Step 1: 8 - 3 = 5\nStep 2: 5 * 4 = 20\nStep 3: 20 * 2 = 40\n\n"
    "Final expression: (8 - 3) * 4 * 2 = 40",
    "**Step 1:** 8 − 3 = 5\n**Step 2:** 5 × 4 = 20\n**Step 3:** 20 × 2 = 40",
    "1. 8 - 3 = 5\n2. 5 × 4 = 20\n3. 20 × 2 = 40",
    "$$\n(8 - 3) \\times 4 \\times 2 = 40\n$$",
    "Answer: ((8 − 3) × 4) × 2 = 40 ✓",
    "The equation (8 - 3) × 4 × 2 equals 40.",
    "<answer>(8 - 3) \\cdot 4 \\cdot 2</answer>",
    "Step 1: 8 - 3 = 5\nStep 2: 4 × 2 = 8\nStep 3: 5 × 8 = 40\nAnswer: (8 - 3) × (4 × 2) = 40",
    "We need 40. Note 40 = 5 × 8, and 5 = 8 − 3, 8 = 4 × 2.\nSo: (8 − 3) × (4 × 2) = 40",
    "- 8 - 3 = 5\n- 5 * 4 = 20\n- 20 * 2 = 40",
    "\\boxed{(8-3)\\cdot 4\\cdot 2 = 40}",
    "(8 - 3) * 4 * 2 = 5 * 4 * 2 = 20 * 2 = 40",
    "Therefore, the solution is: **(8 - 3) × 4 × 2 = 40**.",
]
HELD_OUT_4_CODES = [
    f"Certainly! Here's the implementation:\n\n```python\n{ADD}```\n\n**How it works:**\n"
    f"- `add(2, 3)` returns `5`.",
    "```python\ndef add(a: int, b: int) -> int:\n    \"\"\"Return the sum of a and b.\"\"\"\n"
    "    return a + b\n```",
    f"```python\n{ADD}```\n\n```python\nimport pytest\n\n\ndef test_add():\n"
    f"    assert add(2, 3) == 5\n```",
    f"```python\n{ADD}\nprint(add(2, 3))\n```\n\nOutput:\n```\n5\n```",
    f"```python\n# add.py\n{ADD}\n\n# Example\nassert add(2, 3) == 5\n```",
    "```python\nadd = lambda a, b: a + b\n```",
    "```python\ndef add(a, b):\n\treturn a + b\n```",
    f"```python\nimport unittest\n\n\n{ADD}\n\nclass TestAdd(unittest.TestCase):\n"
    f"    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n\n"
    f"if __name__ == '__main__':\n    unittest.main()\n```",
    f"Here's the code:\n\n```python\n{ADD}```\nTime complexity: O(1)\nSpace complexity: O(1)",
    f"```python:add.py\n{ADD}```",
    f"```python\n{ADD}```\n\nYou can try it:\n```\n>>> add(2, 3)\n5\n```",
]


def set_rates(math_rows, units, choices, texts, countdowns, codes) -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of every verifier on one held-out set's replies."""
    math = _replies(math_rows, units)
    ints = [(gold, reply) for _, gold, reply in math if gold.lstrip("-").isdigit()]
    scores = {
        "math_equiv": math_equiv([r for _, _, r in math], [g for _, g, _ in math]),
        "exact_int": exact_int([r for _, r in ints], [int(g) for g, _ in ints]),
        "final_int": final_int([r for _, r in ints], [int(g) for g, _ in ints]),
        "multiple_choice": multiple_choice(choices, ["B"] * len(choices)),
        "exact_match": exact_match([r for _, r in texts], [g for g, _ in texts]),
        "countdown": countdown(countdowns, [FORTY] * len(countdowns)),
        "unit_tests": unit_tests(codes, [CODE_TESTS] * len(codes)),
    }
    return {name: (int(sum(s == 1.0 for s in got)), len(got)) for name, got in scores.items()}


def held_out_4_rates() -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of every verifier on the fourth held-out set."""
    return set_rates(HELD_OUT_4_MATH, HELD_OUT_4_UNITS, HELD_OUT_4_CHOICES, HELD_OUT_4_TEXTS,
                     HELD_OUT_4_COUNTDOWNS, HELD_OUT_4_CODES)


# First score of the fourth set, before any change it led to.
FIRST_SCORE_4 = {"math_equiv": (91, 118), "exact_int": (56, 76), "final_int": (56, 76),
                 "multiple_choice": (13, 14), "exact_match": (7, 12), "countdown": (9, 13),
                 "unit_tests": (10, 11)}
# Fixes that followed, each a general rule: a check section after the answer ("Check:",
# "Verification:") is not read; a markdown table's last row is read from its last cell; an
# answer first then "Reasoning:"/"Rationale:"; LaTeX spacing (\quad) and *italics* off an
# answer; a text unit after an integer (\boxed{72 \text{ clips}}); "[B]"; a clause after a text
# answer (", located on ...", "— it is ..."), "has been", "I'd say X"; step lists with bold
# labels or bullets and a chain of equal links in countdown; a code block that only defines
# tests is not the answer. Two older misses went with them (a number in a sentence for a
# numeric exact_match gold, "Hence option (B) is right.").


def test_fourth_held_out_set_scores() -> None:
    rates = held_out_4_rates()
    low = {name: f"{right}/{n}" for name, (right, n) in rates.items() if right < 0.95 * n}
    assert not low, f"fourth held-out set below 95%: {low}"


# Hostile replies for those rules: each must still score 0.
HOSTILE_4_MATH = [  # (gold, reply)
    ("72", "The answer is 71.\n\nCheck: 48 + 24 = 72 ✓"),
    ("72", "The answer is 71 or 72.\n\nCheck: 48 + 24 = 72 ✓"),
    ("72", "The answer is not 72.\n\n**Verification:** 48 + 24 = 72 ✓"),
    ("72", "The answer is 72.\n\nCheck: the answer is not 72"),
    ("72", "Check: 48 + 24 = 72 ✓\nSo the answer is 71."),
    ("72", "| Step | Result |\n|---|---|\n| Answer | 71 or 72 |"),
    ("72", "| Step | Result |\n|---|---|\n| Answer | not 72 |"),
    ("72", "| Step | Result |\n|---|---|\n| 72 | 71 |"),
    ("72", "**Answer: 71 or 72**\n\n**Reasoning:** 48 + 24 = 72"),
    ("72", "**Answer: not 72**\n\n**Reasoning:** 48 + 24 = 72"),
    ("72", "\\[\n\\therefore \\quad 71 \\text{ or } 72\n\\]"), ("72", "The answer is *71* or *72*"),
    ("72", "\\boxed{72 \\text{ or } 71}"), ("72", "\\boxed{71 \\text{ clips}}"),
]


@pytest.mark.parametrize(("gold", "reply"), HOSTILE_4_MATH)
def test_the_fourth_sets_rules_let_no_hedge_through(gold: str, reply: str) -> None:
    assert math_equiv([reply], [gold]) == [0.0]
    assert exact_int([reply], [int(gold)]) == [0.0]
    assert final_int([reply], [int(gold)]) == [0.0]
    assert exact_match([reply], [gold]) == [0.0]


@pytest.mark.parametrize("reply", [
    "Answer: [A] or [B]", "[A] [B]", "Answer: [A][B]", "The answer is not [B].", "Answer: [A]",
    "Hence option (B) is not right.", "Hence option (A) is right.", "So A or B is correct.",
    "The answer is not B. Paris is in France.", "A or B",
])
def test_bracketed_and_concluded_options_are_not_hedges(reply: str) -> None:
    assert multiple_choice([reply], ["B"]) == [0.0]


@pytest.mark.parametrize(("gold", "reply"), [
    ("London", "Paris, not London"), ("Paris", "The answer is London, or maybe Paris."),
    ("Paris", "I'd never say Paris."), ("Paris", "I don't think Paris."),
    ("Paris", "Paris, or possibly London"), ("London", "Paris — or London"),
    ("Paris", "London, Paris"), ("Paris", "Paris has not been the capital."),
    ("Paris", "London, located near Paris"), ("1969", "It was 1968 or 1969."),
    ("1969", "It did not happen in 1969."), ("Paris", "*Paris* or *London*"),
])
def test_text_answers_with_a_clause_are_still_one_answer(gold: str, reply: str) -> None:
    assert exact_match([reply], [gold]) == [0.0]


@pytest.mark.parametrize("reply", [
    "(8 - 3) * 4 * 2 = 5 * 4 = 40", "8 * 5 = 40 = 40", "**8 * 5**", "- 8 * 5 = 40",
    "**Step 1:** 8 * 5 = 40", "(8 - 3) * 4 * 2 = 5 * 8 = 40 or 41",
    "- 8 - 3 = 5\n- 5 * 4 = 20\n- 20 * 2 = 41",
])
def test_countdown_chains_and_lists_are_checked(reply: str) -> None:
    assert countdown([reply], [FORTY]) == [0.0]


def test_a_tests_only_block_is_not_the_answer_but_a_wrong_answer_still_fails() -> None:
    wrong = "```python\ndef add(a, b):\n    return a - b\n```\n"
    tests_block = "```python\ndef test_add():\n    assert add(2, 3) == 5\n```"
    assert unit_tests([wrong + tests_block], [CODE_TESTS]) == [0.0]
    assert unit_tests([tests_block], [CODE_TESTS]) == [0.0]


# --- a fifth held-out set, written whole before any verifier read it -------------------------
# Styles none of the sets above has: Qwen3's horizontal rules and an emoji in the "Final Answer"
# heading, "∴", the answer in a code span, bold italics, a heading that holds the answer, an
# emoji before and "!" after, a closing offer of more help, "the answer is:" then a display box,
# "✔️" after a bold answer, R1's "**Final Answer**" then a boxed sentence, a summary list, an
# aligned environment, a whole bold line holding the box, the answer first then "Here's why:",
# a clause after the bold answer; "$18" and "\$18" for money, a thin space before a unit;
# options walked through with ❌/✅ or in a table, an explanation naming the other letters;
# text answers after other numbers or names in the sentence, emojis, "A:"; countdown in a code
# block or code span, a table, words, a "=" chain on lines; code under R1/Qwen3 "Solution Code"
# headings, two-space indents, a doctest in the docstring, prints with "# Output:" comments.
# Every reply is correct and should score 1.0.


def _money(p: str, u: str) -> str:
    """How chat models write the amount: "$18" for dollars, else "72 clips"."""
    return f"${p}" if u == "dollars" else f"{p} {u}"


HELD_OUT_5_MATH = {
    "qwen3 rules and emoji heading": lambda w, l, p, u: (
        f"<think>\n{w}\n</think>\n\nLet's solve this step by step.\n\n---\n\n"
        f"### Step 1: Work it out\n{w}\n\n---\n\n### ✅ Final Answer\n\n$$\n\\boxed{{{l}}}\n$$"),
    "unicode therefore": lambda w, l, p, u: f"{w}\n\n∴ {p}",
    "code span": lambda w, l, p, u: f"{w}\n\nThe answer is `{p}`.",
    "bold italics": lambda w, l, p, u: f"{w}\n\n***{p}***",
    "heading holds the answer": lambda w, l, p, u: f"{w}\n\n## Final Answer: ${l}$",
    "emoji and exclamation": lambda w, l, p, u: f"{w}\n\n🎉 So the answer is **{p}**!",
    "closing offer": lambda w, l, p, u: (f"{w}\n\nSo, the answer is {p}. Let me know if you'd "
                                         f"like me to walk through any step in more detail! 😊"),
    "answer is: display box": lambda w, l, p, u: (f"{w}\n\nThus, the answer is:\n\n"
                                                  f"\\[\n\\boxed{{{l}}}\n\\]"),
    "bold then heavy tick": lambda w, l, p, u: f"{w}\n\n**Final answer: {p}** ✔️",
    "r1 final answer sentence": lambda w, l, p, u: (f"<think>\n{w}\n</think>\n\n"
                                                    f"**Final Answer**\nThe answer is "
                                                    f"\\boxed{{{l}}}."),
    "summary list": lambda w, l, p, u: (f"{w}\n\n**Summary:**\n- Method: work through the "
                                        f"arithmetic step by step.\n- Answer: **{p}**"),
    "aligned": lambda w, l, p, u: (f"{w}\n\n\\[\n\\begin{{aligned}}\n&\\text{{Answer: }} {l}\n"
                                   f"\\end{{aligned}}\n\\]"),
    "bold line with box": lambda w, l, p, u: f"{w}\n\n**Final Answer: $\\boxed{{{l}}}$**",
    "answer first, here's why": lambda w, l, p, u: f"The answer is {p}.\n\nHere's why: {w}",
    "bold then a clause": lambda w, l, p, u: (f"{w}\n\nSo the answer is **{p}**, since every "
                                              f"step above checks out."),
}
HELD_OUT_5_UNITS = {
    "total comes to": lambda w, l, p, u: f"{w}\n\nThe total comes to **{p} {u}**.",
    "money sign": lambda w, l, p, u: f"{w}\n\nThat's {_money(p, u)} in total. 🙂",
    "boxed money": lambda w, l, p, u: (f"{w}\n\n\\boxed{{\\${p}}}" if u == "dollars"
                                       else f"{w}\n\n\\boxed{{{p}\\ \\text{{{u}}}}}"),
    "thin space unit": lambda w, l, p, u: f"{w}\n\n\\[\n{p}\\,\\text{{{u}}}\n\\]",
}
HELD_OUT_5_CHOICES = [
    "**B. Paris** ✅",
    "The answer is **B**: Paris is the capital of France.",
    "Paris is the capital of France, so the correct choice is **B**.",
    "<think>\nParis is the capital of France, which is option B.\n</think>\n\n**B**",
    "## Answer\n\n**(B) Paris**",
    "Option **B** is correct.",
    "The correct answer is:\n\n**B) Paris**",
    "Answer: B ✅",
    f"{QUESTION_WORK}\nSo, the answer is $\\boxed{{\\text{{(B)}}}}$.",
    "Let me go through the options:\n- **A) London** ❌ — capital of the UK\n"
    "- **B) Paris** ✅ — capital of France\n- **C) Rome** ❌ — capital of Italy\n\n**Answer: B**",
    "The answer is B (Paris).",
    "Sure! The correct option is **B. Paris**.",
    "**Answer:** B\n\n**Explanation:** Paris is the capital of France; London (A) is the capital "
    "of the UK and Rome (C) is the capital of Italy.",
    "Final answer: \\boxed{B}",
    "B, Paris.",
    "That's B — Paris!",
    "| Option | Capital of | Correct? |\n|---|---|---|\n| A) London | UK | ❌ |\n"
    "| B) Paris | France | ✅ |\n| C) Rome | Italy | ❌ |\n\nThe correct answer is **B**.",
]
HELD_OUT_5_TEXTS = [
    ("Paris", "Paris! 🇫🇷"),
    ("Paris", "The capital of France is Paris 🗼"),
    ("Paris", "Short answer: **Paris**."),
    ("Jupiter", "That's **Jupiter** — it's more than twice as massive as all the other planets "
                "combined."),
    ("George Washington", "George Washington was the first President of the United States, "
                          "serving from 1789 to 1797."),
    ("1969", "Apollo 11 landed on the Moon in **1969**."),
    ("New York", "The Statue of Liberty is in **New York**."),
    ("blue", "It's blue — because of Rayleigh scattering."),
    ("William Shakespeare", "*Romeo and Juliet* was written by **William Shakespeare**."),
    ("Pacific Ocean", "The largest ocean on Earth is the **Pacific Ocean**, covering about 165 "
                      "million km²."),
    ("Canberra", "Many people guess Sydney, but the capital of Australia is actually "
                 "**Canberra**."),
    ("oxygen", "The chemical symbol O stands for oxygen."),
    ("Paris", "<think>\nThe question asks for France's capital. That's Paris.\n</think>\n\nParis"),
    ("Jupiter", "Final answer: **Jupiter** 🪐"),
    ("1969", "The first Moon landing took place on July 20, 1969."),
    ("George Washington", "The answer is George Washington.\n\nLet me know if you have any other "
                          "history questions!"),
    ("Paris", "A: Paris"),
]
HELD_OUT_5_COUNTDOWNS = [
    "### Solution\n(8 − 3) × 4 × 2 = 40 🎯",
    "```\n(8 - 3) * 4 * 2 = 40\n```",
    "`(8 - 3) * 4 * 2`",
    "Here's one way to reach 40:\n\n$$(8 - 3) \\times 4 \\times 2 = 5 \\times 8 = 40$$",
    "**Expression:** `(8 - 3) * 4 * 2`\n**Result:** 40",
    "2 * 4 * (8 - 3) = 40 ✔️",
    "8 minus 3 is 5, 5 times 4 is 20, and 20 times 2 is 40. So: (8 - 3) * 4 * 2 = 40.",
    "Answer: (8-3)×4×2",
    "We can write 40 as $(8-3) \\times (4 \\times 2)$, which uses each number exactly once.",
    "| Step | Operation | Result |\n|---|---|---|\n| 1 | 8 − 3 | 5 |\n| 2 | 5 × 4 | 20 |\n"
    "| 3 | 20 × 2 | 40 |\n\nSo the equation is **(8 − 3) × 4 × 2 = 40**.",
    "Sure! 🎯\n\n(8 − 3) × 4 × 2 = 40",
    "The expression (8 − 3) · 2 · 4 gives 40.",
    "### Answer\n$(8-3)\\times4\\times2 = 40$",
    "((8 − 3) × 4) × 2\n= 5 × 4 × 2\n= 20 × 2\n= 40",
]
HELD_OUT_5_CODES = [
    "Here's a simple function that adds two numbers:\n\n```python\ndef add(a, b):\n"
    "    \"\"\"Add two numbers and return the result.\"\"\"\n    return a + b\n```\n\n"
    "This works with integers, floats, and any types that support `+`.",
    f"```python\n{ADD}\n\n# Test cases\nprint(add(2, 3))   # Output: 5\n"
    f"print(add(-1, 1))  # Output: 0\n```",
    "```python\ndef add(a, b):\n    result = a + b\n    return result\n```",
    f"<think>\nThe function just returns the sum.\n</think>\n\n### Approach\nReturn `a + b`.\n\n"
    f"### Solution Code\n```python\n{ADD}```\n\n### Explanation\nThe `+` operator adds the two "
    f"arguments.",
    "```python\nfrom __future__ import annotations\n\n\ndef add(a: float, b: float) -> float:\n"
    "    return a + b\n```",
    f"```python\n\"\"\"Tiny arithmetic helpers.\"\"\"\n\n__all__ = [\"add\"]\n\n\n{ADD}```",
    f"<think>\nOkay, I need to write add.\n```python\n{ADD}```\nThat should work.\n</think>\n\n"
    f"```python\n{ADD}```",
    "```python\ndef add(a, b):\n    \"\"\"\n    >>> add(2, 3)\n    5\n    \"\"\"\n"
    "    return a + b\n```",
    "```python\ndef add(a, b):\n  \"\"\"Returns the sum of a and b.\"\"\"\n  return a + b\n```",
]


def held_out_5_rates() -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of every verifier on the fifth held-out set."""
    return set_rates(HELD_OUT_5_MATH, HELD_OUT_5_UNITS, HELD_OUT_5_CHOICES, HELD_OUT_5_TEXTS,
                     HELD_OUT_5_COUNTDOWNS, HELD_OUT_5_CODES)


# First score of this set: math_equiv 105/128 (82.0%), exact_int and final_int 67/83 (80.7%),
# multiple_choice 11/17 (64.7%), exact_match 7/17 (41.2%), countdown 11/14 (78.6%), unit_tests
# 9/9 (100%). Its misses, each a general gap (rewards/ unchanged since): "✔️" carries U+FE0F,
# which the extractor takes for a hidden character, so the whole reply scores 0; "!" after
# "**72**" stays on the answer ("72**!"); "\$18" in a box reads as "\18"; "\," before a
# \text unit, and "\ " before one for the integer verifiers; an answer given first then
# "Here's why:" with working (the last line is read); an emoji after a text or option answer;
# "**B**:" and "Option **B** is", "B (Paris)", "B, Paris", "That's B — Paris!"; a sentence
# whose answer follows a preposition, an article, an adverb, "was written by" or "stands for";
# "July 20, 1969" read as "20, 1969"; "A: Paris"; countdown's expression above a "Result:" line
# or a chain of "= ..." lines under it.
FIRST_SCORE_5 = {"math_equiv": (105, 128), "exact_int": (67, 83), "final_int": (67, 83),
                 "multiple_choice": (11, 17), "exact_match": (7, 17), "countdown": (11, 14),
                 "unit_tests": (9, 9)}


# Fixes that followed, each a general rule: a variation selector after a symbol ("✔️") or a
# joiner between emoji is part of the glyph (after a letter or digit it stays hidden, so a
# keycap "7️⃣" scores 0); emoji and symbols after an answer, "!" after bold or a word, and a
# cross mark ("B ❌") negates; "Here's why:" / "Why:" after a first-line answer; "\$18" and
# LaTeX spacing before a \text unit; bold around an option, "B, Paris", "B (Paris)", "That's
# B"; a sentence's one bold span for exact_match, "stands for", "A: Paris", a date's year;
# countdown's "= ..." / "Result:" lines continuing the expression above them.
def test_fifth_held_out_set_scores() -> None:
    rates = held_out_5_rates()
    low = {name: f"{right}/{n}" for name, (right, n) in rates.items() if right < 0.95 * n}
    assert not low, f"fifth held-out set below 95%: {low}"


# Hostile replies for those rules: each must still score 0.
HOSTILE_5_NUMBERS = [  # gold 7
    "The answer is 7\ufe0f\u20e3", "The answer is 7\u20e3", "\ufe0f7", "The answer is 7\ufe0f",
    "7\u200d", "🎉\u200d7", "Answer: 7\u200d🎉", "Answer: 🎉\ufe0f7\ufe0f",
    "So the answer is **6**! ✔️", "So the answer is **6** or **7**!", "The answer is not **7**!",
    "Answer: 7 ❌", "**Final answer: 7** ❌", "7 🎉 or 6", "The answer is 6.\n\nHere's why: 3 + 4 = 7",
    "The answer is 6 or 7.\n\nWhy: 3 + 4 = 7", "The answer is not 7.\n\nHere's why: 3 + 4 = 7",
    "\\boxed{\\$6}", "\\boxed{\\$7 \\text{ or } \\$6}", "\\boxed{7\\,\\text{ or }\\,6}",
    "\\[\n6\\,\\text{clips}\n\\]",
]


@pytest.mark.parametrize("reply", HOSTILE_5_NUMBERS)
def test_the_fifth_sets_rules_let_no_hidden_or_hedged_number_through(reply: str) -> None:
    assert math_equiv([reply], ["7"]) == [0.0]
    assert exact_int([reply], [7]) == [0.0]
    assert final_int([reply], [7]) == [0.0]
    assert exact_match([reply], ["7"]) == [0.0]


@pytest.mark.parametrize("reply", [
    "The answer is **A**: Paris is the capital of France.", "B, C", "B (or C)", "B (not A)",
    "That's not B — Paris!", "Option **B** is not correct.", "Answer: B ❌", "That's A or B",
    "**B**: or C", "B, or maybe C", "B (Paris) or C", "That's B or C", "It is not B", "B, A",
    "Answer: B\ufe0f",
])
def test_options_with_their_text_or_a_mark_are_still_one_option(reply: str) -> None:
    assert multiple_choice([reply], ["B"]) == [0.0]


@pytest.mark.parametrize(("gold", "reply"), [
    ("Paris", "The capital is not **Paris**."), ("Paris", "It's **Paris** or **Lyon**."),
    ("Paris", "**London** is bigger than **Paris**."), ("Paris", "Paris! 🇫🇷 or London"),
    ("Paris", "Paris ❌"), ("Paris", "It is **London**, not Paris."),
    ("oxygen", "O never stands for oxygen."),
    ("oxygen", "It is not true that O stands for oxygen."),
    ("Paris", "A: London"), ("Paris", "A: Paris or London"), ("Paris", "A: Paris, B: London"),
    ("1969", "It did not happen on July 20, 1969."), ("1969", "It was July 20, 1968 or 1969."),
    ("Canberra", "I'd guess **Sydney**, not Canberra."),
    ("Paris", "Maybe **Paris**, or maybe not."),
    ("Paris", "The capital is **Paris**?"), ("Paris", "Paris\ufe0f"),
    ("Paris", "The capital isn't **Paris**."),
])
def test_a_bold_span_a_label_or_a_date_is_read_only_when_committed(gold: str, reply: str) -> None:
    assert exact_match([reply], [gold]) == [0.0]


@pytest.mark.parametrize("reply", [
    "(8 - 3) * 4 * 2\n= 5 * 4 * 2\n= 41", "(8 - 3) * 4 * 3\n= 40",
    "**Expression:** `(8 - 3) * 4 * 3`\n**Result:** 40", "**Result:** 40", "8 * 5\n= 40",
    "(8 - 3) * 4 * 2\n= 5 * 9\n= 40", "(8 - 3) * 4 * 2 ❌", "(8 - 3) * 4 * 2\n= 40 or 41",
    "(8 - 3) * 4 * 2\n= 20 * 2\n= 40\n= 41",
])
def test_countdown_chains_continued_on_lines_are_checked(reply: str) -> None:
    assert countdown([reply], [FORTY]) == [0.0]


# --- a sixth held-out set, written by a separate author who read neither rewards/ nor the sets
# above (tests/rewards/styles_6.py): answer tags with attributes, "Answer (final):", "Result:"
# labels, a closing courtesy line, a table with an answer and a unit column, the answer first
# then "**Working:**" and a double-check, an "## Answer" heading over the option, a blockquoted
# option then a paragraph, labelled list items, the answer as a sentence's subject.
def styles_rates(k: int) -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of every verifier on the held-out set of tests/rewards/styles_k.py."""
    import importlib

    s = vars(importlib.import_module(f"tests.rewards.styles_{k}"))
    return set_rates(*(s[f"HELD_OUT_{k}_{part}"]
                       for part in ("MATH", "UNITS", "CHOICES", "TEXTS", "COUNTDOWNS", "CODES")))


def held_out_6_rates() -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of every verifier on the sixth held-out set."""
    return styles_rates(6)


# First score of this set (rewards/ as of the fifth set's fixes): math_equiv 120/144 (83.3%),
# exact_int and final_int 77/93 (82.8%), multiple_choice 13/17 (76.5%), exact_match 11/17
# (64.7%), countdown 13/13, unit_tests 9/9. Its misses, each a general gap: `<answer
# type="final">` (a tag with an attribute); "Answer (final):" and "Result:" labels; "Let me
# know if anything is unclear." after the answer; a table whose last cell is the unit column;
# "**Answer:** x" first, then "**Working:**" and a double-check that ends on working numbers;
# "## Answer" over "**B) Paris**" then a paragraph; a blockquoted option then a paragraph; a
# bold answer in the first of two sentences; "- **Capital:** Ottawa"; "was written by X"; the
# answer as the subject of a verb ("Albert Einstein developed ...").
FIRST_SCORE_6 = {"math_equiv": (120, 144), "exact_int": (77, 93), "final_int": (77, 93),
                 "multiple_choice": (13, 17), "exact_match": (11, 17), "countdown": (13, 13),
                 "unit_tests": (9, 9)}


@pytest.mark.parametrize("k", [6, 7])
def test_the_sixth_and_seventh_held_out_sets_score(k: int) -> None:
    low = {name: f"{right}/{n}" for name, (right, n) in styles_rates(k).items()
           if right < 0.95 * n}
    assert not low, f"held-out set {k} below 95%: {low}"


# Hostile replies for the sixth set's rules: each must still score 0.
HOSTILE_6_NUMBERS = [  # gold 7
    '<answer type="final">6 or 7</answer>', '<answer type="final">\n 6\n</answer>',
    "Answer (final): not 7", "Answer (final): 6", "Result: 7 or 6",
    "Result: 6\n\nLet me know if 7 is better.", "Result: 7\n\nLet me know if 6 is better.",
    "The answer is 6. I hope it is 7.", "| Answer | Also |\n|---|---|\n| 6 | 7 |",
    "**Answer:** 6\n\n**Working:** 3 + 4 = 7", "**Answer:** 6 or 7\n\n**Working:** 3 + 4 = 7",
]
HOSTILE_6_CHOICES = [  # gold B
    "**A) London**\n\nOr maybe B.", "**B) Paris**\n\nBut A is also possible.",
    "> **A) London**\n\nParis is the capital.", "**B) Paris** or **C) Rome**\n\nBoth are cities.",
    "## Answer\n\n**A) London**\n\nB is wrong.",
]
HOSTILE_6_TEXTS = [  # gold Ottawa
    "Ottawa or Toronto developed it.", "- **Wrong:** Ottawa", "- Not: Ottawa",
    "It was not written by Ottawa.", "The capital is **Ottawa**. Not really.",
    "The capital is **Ottawa**. Or Toronto.", "The capital is **Toronto**. Ottawa is nearby.",
    "Ottawa. Let me know if it is Toronto.",
]


def test_the_sixth_sets_rules_let_no_hedge_through() -> None:
    assert exact_int(HOSTILE_6_NUMBERS, [7] * len(HOSTILE_6_NUMBERS)) == [0.0] * len(
        HOSTILE_6_NUMBERS)
    assert math_equiv(HOSTILE_6_NUMBERS, ["7"] * len(HOSTILE_6_NUMBERS)) == [0.0] * len(
        HOSTILE_6_NUMBERS)
    assert multiple_choice(HOSTILE_6_CHOICES, ["B"] * len(HOSTILE_6_CHOICES)) == [0.0] * len(
        HOSTILE_6_CHOICES)
    assert exact_match(HOSTILE_6_TEXTS, ["Ottawa"] * len(HOSTILE_6_TEXTS)) == [0.0] * len(
        HOSTILE_6_TEXTS)


@pytest.mark.parametrize("gold,reply", [
    ("Albert Einstein", "Albert Einstein developed the theory of relativity."),
    ("Charles Darwin", "Answer (final): Charles Darwin wrote *On the Origin of Species*."),
    ("Ottawa", "- **Country:** Canada\n- **Capital:** Ottawa"),
    ("Paris", "The capital of France is **Paris**. It is also the country's largest city."),
])
def test_subjects_fields_and_an_early_bold_answer_are_read(gold: str, reply: str) -> None:
    assert exact_match([reply], [gold]) == [1.0]


# --- a seventh held-out set: the typical default reply of 15 named model families (Qwen2.5,
# Qwen2.5-Math, Qwen3 thinking, Llama-3.1/3.2, Gemma-2/3, Mistral, Phi-3.5/4, R1-Distill,
# SmolLM2-1.7B, OLMo-2, GPT-4o-style, Claude-style), written by a separate author who read
# neither rewards/ nor the sets above (tests/rewards/styles_7.py). Where the sixth set asked for
# unusual styles, this one asks for the usual ones: its first score is the held-out figure for
# what real models write.
def held_out_7_rates() -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of every verifier on the seventh held-out set."""
    return styles_rates(7)


# First score (rewards/ as of the sixth set's fixes): math_equiv 128/128, exact_int and
# final_int 83/83, multiple_choice 13/15 (86.7%), exact_match 9/15 (60%), countdown 11/12
# (91.7%), unit_tests 9/9. Its misses: "The capital of France is B) Paris." (an option after a
# copula); an answer-first sentence, then sentences about it ("He served two terms from 1789
# to 1797."); "is the Pacific Ocean" (an article); "represents the element Oxygen";
# "discovered by Alexander Fleming in 1928"; a remark line under the countdown expression
# ("✅ All numbers used exactly once.").
FIRST_SCORE_7 = {"math_equiv": (128, 128), "exact_int": (83, 83), "final_int": (83, 83),
                 "multiple_choice": (13, 15), "exact_match": (9, 15), "countdown": (11, 12),
                 "unit_tests": (9, 9)}


HOSTILE_7_TEXTS = [  # gold Paris: a later sentence or a descriptor that could be another answer
    "The capital is Paris. The capital is Lyon.", "The capital is Paris. It is Lyon, actually.",
    "The capital is Paris. Or Lyon.", "Paris. It might be Lyon?", "It is not Paris. It is Lyon.",
    "It is the not Paris", "It represents no Paris",
    "It is the city Lyon or Paris", "Paris. It's the one, not Lyon's.",
]


def test_the_seventh_sets_rules_let_no_second_answer_through() -> None:
    assert exact_match(HOSTILE_7_TEXTS, ["Paris"] * len(HOSTILE_7_TEXTS)) == [0.0] * len(
        HOSTILE_7_TEXTS)
    options = ["The capital of France is not B) Paris.", "The capital is A) London.",
               "The capital of France is B) Paris or C) Rome."]
    assert multiple_choice(options, ["B"] * 3) == [0.0] * 3
    remarks = ["(8 - 3) * 4 * 2 = 40\n\nOr (8 - 3) * 4 * 3.", "Try 8 * 5\n\n✅ Done."]
    assert countdown(remarks, [FORTY] * 2) == [0.0, 0.0]


# --- an eighth held-out set: typical replies of the same families to options, short factual
# questions and Countdown (tests/rewards/styles_8.py, a separate author again, written before
# any verifier read it).
def held_out_8_rates() -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of multiple_choice, exact_match and countdown on the eighth set."""
    from tests.rewards import styles_8 as s

    texts = s.HELD_OUT_8_TEXTS
    got = {"multiple_choice": multiple_choice(s.HELD_OUT_8_CHOICES,
                                              ["B"] * len(s.HELD_OUT_8_CHOICES)),
           "exact_match": exact_match([r for _, r in texts], [g for g, _ in texts]),
           "countdown": countdown(s.HELD_OUT_8_COUNTDOWNS, [FORTY] * len(s.HELD_OUT_8_COUNTDOWNS))}
    return {name: (int(sum(x == 1.0 for x in v)), len(v)) for name, v in got.items()}


# First score (rewards/ as of the seventh set's fixes): multiple_choice 17/20 (85%),
# exact_match 14/20 (70%), countdown 8/12 (66.7%). Misses: the option in a first sentence,
# then sentences about it ("... is **B) Mars**. Its reddish appearance ..."); an answer-first
# sentence, then sentences naming other places or dates ("He worked on it ... in Paris."); a
# relative clause after the answer ("Au, which comes from ..."); an expression given once and
# then worked through or verified in prose. Two stay missed, as exact_match means them to: the
# reply names a longer form of the gold ("the Nile River" for "Nile", "Ludwig van Beethoven"
# for "Beethoven"); a dataset whose answers have such forms lists them (or uses math_equiv).
FIRST_SCORE_8 = {"multiple_choice": (17, 20), "exact_match": (14, 20), "countdown": (8, 12)}


def test_eighth_held_out_set_scores() -> None:
    rates = held_out_8_rates()
    assert rates["multiple_choice"] == (20, 20) and rates["countdown"] == (12, 12), rates
    assert rates["exact_match"] == (18, 20), rates  # the two longer forms of the gold


def test_the_eighth_sets_rules_let_no_second_answer_through() -> None:
    options = ["The planet is **A) Venus**. Its color is red.", "The planet is Mars (B). Or C.",
               "The planet is not B) Mars. It is red.", "</think>\nIt is **B) Mars**. Not A or C.",
               "B) Mars or C) Jupiter\n\nBoth are planets.",
               "B) Mars\n\nOr maybe Jupiter, it's hard to say.", "B\u200b) Mars\n\nRed.",
               "B) Mars\n\nIt is not Mars."]
    assert multiple_choice(options, ["B"] * len(options)) == [0.0] * len(options)
    texts = ["Paris, not Lyon", "Paris, which is not Lyon", "Paris, or Lyon",
             "Lyon, which is near Paris", "Paris. It's the one, not Lyon's."]
    assert exact_match(texts, ["Paris"] * len(texts)) == [0.0] * len(texts)
    trials = ["(8-3)*4*2 or 8*3+4+2", "8*5 = 40", "(8-3)*4*2 = 40 but also (8+3)*4/2",
              "(8-3)*4*2\n\nFirst, 8 + 3 = 11. Then (8+3)*4/2 = 22."]
    assert countdown(trials, [FORTY] * len(trials)) == [0.0] * len(trials)


# --- a ninth held-out set: typical replies of named families to sixteen multiple-choice
# questions (correct letters A to E), thirty short factual questions and ten Countdown puzzles
# (tests/rewards/styles_9.py, a separate author who read neither rewards/ nor the earlier sets,
# scored before any fix).
def held_out_9_rates() -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of multiple_choice, exact_match and countdown on the ninth set."""
    from tests.rewards import styles_9

    return text_set_rates(styles_9, 9)


# First score (rewards/ as of the eighth set's fixes): multiple_choice 27/30 (90%),
# exact_match 27/30 (90%), countdown 18/18 (100%); 72 of 78 (92.3%), below the 95% target.
# Misses: letters that name no option after the chosen one ("(V-E Day)", "H. G. Wells"); an
# "## Answer" heading over the option line; a bold count then the list it counts ("There are
# **7** continents:" then "- Africa ..."). Fixed as general rules (rewards.text.names_letter,
# _LABEL_LINE, a number answer's later sentences that name no number). Two stay missed: an
# answer-first sentence, then a sentence that states another value in the same form ("Saturn is
# the second largest.", "Babies are born with around 270 to 300 bones"), which a reader cannot
# tell by form from a second answer.
FIRST_SCORE_9 = {"multiple_choice": (27, 30), "exact_match": (27, 30), "countdown": (18, 18)}


def test_ninth_held_out_set_scores() -> None:
    rates = held_out_9_rates()
    assert rates["multiple_choice"] == (30, 30) and rates["countdown"] == (18, 18), rates
    assert rates["exact_match"] == (28, 30), rates  # another value stated in the same form


def test_the_ninth_sets_rules_let_no_second_answer_through() -> None:
    options = ["## Answer\n\n**D. Pacific**\n\nOr C.", "The answer is B. Or C.",
               "Answer: B\n\nOr maybe C.", "**(C) 1945**\n\nIt ended in 1945, not 1944 (B).",
               "A) George Orwell\n\nB. Huxley wrote it too.", "## Answer\n\nD or C",
               "**(C) 1945**\n\nX-ray or B.", "**(C) 1945**\n\nThe U.S. says B."]
    golds = ["D", "B", "B", "C", "A", "D", "C", "C"]
    assert multiple_choice(options, golds) == [0.0] * len(options)
    counts = ["There are **7** continents:\n\n- Africa\n- Asia\n\nSome count six.",
              "There are **7** continents:\n\n- Africa\n\nOr 6.",
              "There are **7** continents.\n\nActually there are 8.",
              "There are **7** continents.\n\nNot really.", "There are **8** continents:\n\n- Asia"]
    assert exact_match(counts, ["7"] * len(counts)) == [0.0] * len(counts)



# --- a tenth and an eleventh held-out set: typical replies of named families to option
# questions, short factual questions and Countdown (tests/rewards/styles_10.py and styles_11.py,
# separate authors who read neither rewards/ nor the earlier sets; each scored before any fix
# it led to, the eleventh after the tenth's fixes).
def text_set_rates(s, n: int) -> dict[str, tuple[int, int]]:
    """(scored 1.0, replies) of multiple_choice, exact_match and countdown on set ``n``."""
    choices, texts, puzzles = (getattr(s, f"HELD_OUT_{n}_{part}")
                               for part in ("CHOICES", "TEXTS", "COUNTDOWNS"))
    got = {"multiple_choice": multiple_choice([r for _, _, r in choices],
                                              [g for g, _, _ in choices]),
           "exact_match": exact_match([r for _, r in texts], [g for g, _ in texts]),
           "countdown": countdown([r for _, r in puzzles], [p for p, _ in puzzles])}
    return {name: (int(sum(x == 1.0 for x in v)), len(v)) for name, v in got.items()}


def held_out_10_rates() -> dict[str, tuple[int, int]]:
    from tests.rewards import styles_10

    return text_set_rates(styles_10, 10)


def held_out_11_rates() -> dict[str, tuple[int, int]]:
    from tests.rewards import styles_11

    return text_set_rates(styles_11, 11)


# First scores. Set 10 (rewards/ as of the ninth set's fixes): multiple_choice 27/30,
# exact_match 22/30 (73%), countdown 18/18. Set 11 (after the tenth's first fixes: an answer
# phrase followed by prose with numbers in it stands, "The giraffe" for "giraffe", "100 °C" for
# 100): multiple_choice 27/30, exact_match 12/30 (40%), countdown 18/18. Nearly every
# exact_match miss is one shape, the typical chat reply to a factual question: the answer in
# the first sentence, then sentences of context about other things ("Mount Everest ... The
# second-highest mountain, K2, reaches 8,611 meters."), which the last-line reading read as
# the answer. The rule that followed (rewards.text._states_first): the first sentence or line
# states the answer and no later sentence hedges, denies it, restates it as another, stands
# alone as another, ends on another name after a copula ("The biggest city is Lyon."), or
# fills the first sentence's frame with another; and after such a first sentence a later
# sentence's subject is never read as the answer, so a reply still gets at most one
# (test_an_answer_first_reply_has_one_answer). Then, from set 11: a first sentence that ends on
# the answer ("Marrakesh is a major city in Morocco."), an article before a subject answer,
# a pronoun's sentence ending on a name ("Its chemical symbol is H.") as context, and "α = 0.05"
# after an answer phrase is no working.
FIRST_SCORE_10 = {"multiple_choice": (27, 30), "exact_match": (22, 30), "countdown": (18, 18)}
FIRST_SCORE_11 = {"multiple_choice": (27, 30), "exact_match": (12, 30), "countdown": (18, 18)}


def test_tenth_and_eleventh_held_out_sets_score() -> None:
    assert held_out_10_rates() == {"multiple_choice": (30, 30), "exact_match": (28, 30),
                                   "countdown": (18, 18)}
    assert held_out_11_rates() == {"multiple_choice": (28, 30), "exact_match": (25, 30),
                                   "countdown": (18, 18)}


ONE_ANSWER = [("The capital is Paris. London is also big.", "Paris", "London"),
              ("Paris is the capital.\nLondon.", "Paris", "London"),
              ("The capital is Paris. The capital is London.", "Paris", "London"),
              ("The capital is Paris.\nThe capital is London.", "Paris", "London"),
              ("Paris.\nIt is Lyon.", "Paris", "Lyon"),
              ("The capital of France is Paris. Some say Lyon.", "Paris", "Lyon"),
              ("The capital of France is Paris. The biggest city is Lyon.", "Paris", "Lyon"),
              ("Jupiter is the largest planet. Saturn is bigger.", "Jupiter", "Saturn"),
              ("It has 206 bones. Some have 207 bones.", "206", "207"),
              ("It has 206 bones. Or 207.", "206", "207"),
              ("**Paris**\n\n**Lyon**", "Paris", "Lyon"),
              ("**Paris**\n\nLyon is nice too.", "Paris", "Lyon"),
              ("Paris. Let me know if it is Toronto.", "Paris", "Toronto"),
              ("Marrakesh is a city in Morocco. The capital is Rabat.", "Morocco", "Rabat"),
              ("The camel is the ship of the desert. The horse is faster.", "camel", "horse"),
              ("Some say Morocco. Others say Spain.", "Morocco", "Spain")]


@pytest.mark.parametrize("reply,first,second", ONE_ANSWER)
def test_an_answer_first_reply_has_one_answer(reply, first, second) -> None:
    """Two candidates in one reply, first and last: it scores for one of them at most, so
    naming a second answer after the first never pays."""
    assert sum(exact_match([reply, reply], [first, second])) <= 1.0


def test_an_answer_first_reply_reads_its_first_answer() -> None:
    replies = ["**Mount Everest**\n\nIt stands at 8,849 m. The second-highest mountain, K2, "
               "reaches 8,611 m.", "The capital is Paris. London is also big.",
               "Jupiter is the largest planet. Saturn is the second largest.",
               "The smallest prime number is 2. Note that 1 is not considered a prime."]
    assert exact_match(replies, ["Mount Everest", "Paris", "Jupiter", "2"]) == [1.0] * 4
    assert exact_match(replies, ["K2", "London", "Saturn", "1"]) == [0.0] * 4

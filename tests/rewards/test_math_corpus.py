"""A corpus of tricky (gold, response, expected) pairs for the math verifier (rewards.math).

Each pair says what a careful grader decides, under the policy in rewards/math.py's module
doc: equivalent values in final form are right whatever their notation; exact answers are
compared exactly (0.333333 is not 1/3); a gold written as a decimal is a value given to the
places it writes (1/3 matches 0.33); unevaluated arithmetic, unexpanded like terms, a
restated equation and extra answers are wrong. ``CORPUS`` is also what bench/verifiers.py
scores; the tests here require every pair to be decided as written.
"""

from __future__ import annotations

import pytest

from rewards.math import math_equiv

# (gold, response, expected). The issue's cases first (they name "response vs gold").
ISSUE = [
    ("1/2", "\\tfrac{1}{2}", True),
    ("1000", "1,000", True),
    ("1000", "1{,}000", True),
    ("1000", "10^3", True),
    ("\\sqrt{8}", "2\\sqrt{2}", True),
    ("15/2", "7\\frac{1}{2}", True),
    ("4x+2", "2(2x+1)", True),
    ("(3,\\infty)", "x>3", True),
    ("1/3", "0.333333", False),
    ("1/2", "0.5000001", False),
    ("3", "3.0000001", False),
    ("1/2", "0.5", True),
]
# tests/rewards/test_math.py's cases, as (gold, response, expected).
EXISTING = [
    ("1/2", "0.5", True), ("0.5", "1/2", True), ("1/2", "\\frac{1}{2}", True),
    ("0.5", "\\frac{1}{2}", True), ("2x+1", "1+2x", True), ("2x+1", "1+2*x", True),
    ("3", "x=3", True), ("x=3", "3", True), ("4", "\\boxed{4}", True),
    ("-1/2", "-0.50", True), ("-0.50", "-1/2", True), ("-1/2", "\\frac{-1}{2}", True),
    ("-0.5", "-\\frac{1}{2}", True), ("4", "$4$", True), ("15/2", "7.5", True),
    ("5x", "5*x", True), ("4", "4.0", True), ("12", " 12 ", True), ("5/6", "10/12", False),
    ("1/2", "0.4", False), ("2x+1", "2x+2", False), ("4", "-4", False), ("3", "x=5", False),
    ("4", "44", False), ("4", "4x", False), ("20", "3*(4+5)-7", False),
    ("5x", "2x+3x", False), ("7", "3+4=7", True),  # issue 47: working is not scored ("4", "4, 5", False), ("4", "", False),
    ("4", "   ", False), ("4", "abc", False),
]
MORE = [
    # Notation: fraction macros, thousands separators, powers, surds, mixed numbers.
    ("0.75", "\\dfrac{3}{4}", True),
    ("-0.5", "-\\tfrac{1}{2}", True),
    ("12345", "12,345", True),
    ("10^6", "1,000,000", True),
    ("1000000", "10^6", True),
    ("1024", "2^{10}", True),
    ("300000", "3\\times 10^5", True),
    ("1500", "1.5\\times10^{3}", True),
    ("2\\sqrt{3}", "\\sqrt{12}", True),
    ("\\frac{1}{\\sqrt{2}}", "\\frac{\\sqrt{2}}{2}", True),
    ("13/4", "3\\frac{1}{4}", True),
    ("-7/3", "-2\\frac{1}{3}", True),
    ("15/2", "7 1/2", True),
    ("1000", "1000.0", True),
    ("0", "-0", True),
    ("1/2", "\\frac{2}{4}", False),  # not in lowest terms (issue 29)
    ("1001", "1,001", True),
    ("1000", "1,001", False),
    ("1000", "10^4", False),
    ("\\sqrt{8}", "2\\sqrt{3}", False),
    ("15/2", "7\\frac{1}{3}", False),
    ("15/2", "7 1/3", False),
    # Factored and expanded forms of one polynomial.
    ("3x+6", "3(x+2)", True),
    ("x^2+2x+1", "(x+1)^2", True),
    ("x^2-x", "x(x-1)", True),
    ("(x+1)^2", "x^2+2x+1", True),
    ("3-x", "-x+3", True),
    ("4x+2", "2+4x", True),
    ("4x+2", "2(2x+2)", False),
    ("x^2-x", "x(x+1)", False),
    # Inequalities and intervals, both ways round.
    ("x>3", "(3,\\infty)", True),
    ("[2,\\infty)", "x\\geq 2", True),
    ("(-\\infty,5)", "x<5", True),
    ("(3,\\infty)", "x\\geq 3", False),
    ("(3,\\infty)", "x<3", False),
    ("x>3", "[3,\\infty)", False),
    # Exact golds take exact answers only; a decimal gold is a value to its written places.
    ("1/3", "0.33", False),
    ("2/3", "0.667", False),
    ("\\pi", "3.14", False),
    ("\\sqrt{2}", "1.414", False),
    ("1/4", "0.25", True),
    ("1/8", "0.125", True),
    ("0.33", "1/3", True),
    ("0.33", "0.333", True),
    ("0.33", "0.3", False),
    ("0.33", "0.34", False),
    ("3.14", "\\pi", True),
    ("0.67", "2/3", True),
    ("2.5", "2.50", True),
    ("2.5", "5/2", True),
    ("2.5", "2.6", False),
    ("-0.33", "-1/3", True),
    # Final form: unevaluated arithmetic, like terms, echoed equations, extra answers.
    ("15/2", "7/2+4", False),
    ("5/6", "1/2+1/3", False),
    ("\\frac{5}{6}", "\\frac{1}{2}+\\frac{1}{3}", False),
    ("14", "(3+4)\\cdot 2", False),
    ("4x+2", "7x-3x+2", False),
    ("7", "2\\cdot 5-3", False),
    ("x=4", "2x+3=11", False),
    ("4", "2x+3=11", False),
    ("4", "4+0", False),
    ("x", "1\\cdot x", False),
    ("6x", "2\\cdot 3x", False),
    ("20", "4+5=9, so 3*9-7=20", True),  # issue 47: working is not scored (False before)
    ("4", "4 or 5", False),
    ("x", "x+x-x", False),
    # Markup and wording around a right answer.
    ("4", "\\boxed{x=4}", True),
    ("4", "The answer is 4", True),
    ("5/6", "$\\frac{5}{6}$", True),
    ("0.5", "\\left(\\frac{1}{2}\\right)", True),
    ("\\{1,2\\}", "\\{2,1\\}", True),
    ("-1/6", "-\\frac{1}{6}", True),
    ("-1/6", "\\frac{1}{6}", False),
    ("4", "x = 4", True),
    # Edges of the rules above.
    ("x=0.33", "y=1/3", False),
    ("0.33", "x=1/3", True),
    ("0.5", "0.56", False),
    ("8", "4 4", False),
    ("1000", "1\\,000", True),
    ("4", "x=2+2", False),
    ("2x+1", "x+x+1", False),
    ("4", "\\frac{8}{2}", False),  # a fraction to divide (issue 29)
    ("4x+2", "The answer is \\boxed{2(2x+1)}", True),
    ("1000", "So the total is $10^3$.", True),
    ("20", "3*(4+5)-7 = \\boxed{20}", True),  # issue 47: as above
    ("20", "3*(4+5)-7 = \\boxed{3*(4+5)-7}", False),  # the boxed answer is still unevaluated
    ("2x", "Answer: \\boxed{x+x}", False),
]
CORPUS: list[tuple[str, str, bool]] = ISSUE + EXISTING + MORE


def agreement(corpus: list[tuple[str, str, bool]], verifier=math_equiv) -> tuple[int, list]:
    """How many pairs ``verifier`` decides as expected, and the pairs it gets wrong."""
    scores = verifier([response for _, response, _ in corpus], [gold for gold, _, _ in corpus])
    wrong = [(gold, response, expected) for (gold, response, expected), score
             in zip(corpus, scores) if (score == 1.0) != expected]
    return len(corpus) - len(wrong), wrong


def test_corpus_is_large_and_has_the_issue_cases() -> None:
    assert len(CORPUS) >= 80
    assert len(set(CORPUS)) >= 80  # the issue's 0.5 vs 1/2 is also an existing case


@pytest.mark.parametrize(("gold", "response", "expected"), CORPUS)
def test_tricky_pair(gold: str, response: str, expected: bool) -> None:
    assert math_equiv([response], [gold]) == [1.0 if expected else 0.0]

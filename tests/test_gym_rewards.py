"""Tests for the math, logic and instruction-following verifiers."""

from __future__ import annotations

import doctest
import string
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import rewards.instructions
import rewards.logic
import rewards.math
from rewards.instructions import CHECKS, claims_compliance, instruction_following
from rewards.logic import countdown, solves_countdown, sudoku
from rewards.math import literal_count, math_equiv


@pytest.mark.parametrize("module", [rewards.math, rewards.logic, rewards.instructions])
def test_doctests_pass(module) -> None:
    assert doctest.testmod(module).failed == 0


# --- math_equiv --------------------------------------------------------------

EQUIVALENT = [  # (response, answer)
    ("0.5", "1/2"), ("1/2", "0.5"), ("\\frac{1}{2}", "1/2"), ("\\frac{1}{2}", "0.5"),
    ("1+2x", "2x+1"), ("1+2*x", "2x+1"), ("x=3", "3"), ("3", "x=3"), ("\\boxed{4}", "4"),
    ("-0.50", "-1/2"), ("-1/2", "-0.50"), ("\\frac{-1}{2}", "-1/2"), ("-\\frac{1}{2}", "-0.5"),
    ("$4$", "4"), ("7.5", "15/2"), ("5*x", "5x"),
    ("4.0", "4"), (" 12 ", "12"), ("10/12", "5/6"),
]
NOT_EQUIVALENT = [
    ("0.4", "1/2"), ("2x+2", "2x+1"), ("-4", "4"), ("x=5", "3"), ("44", "4"), ("4x", "4"),
    ("3*(4+5)-7", "20"),  # echoing the question is equal in value but not an answer
    ("2x+3x", "5x"), ("3+4=7", "7"), ("4, 5", "4"), ("", "4"), ("   ", "4"), ("abc", "4"),
]


@pytest.mark.parametrize(("response", "answer"), EQUIVALENT)
def test_math_equiv_accepts_equivalent_forms(response: str, answer: str) -> None:
    assert math_equiv([response], [answer]) == [1.0]


@pytest.mark.parametrize(("response", "answer"), NOT_EQUIVALENT)
def test_math_equiv_rejects_wrong_or_unevaluated(response: str, answer: str) -> None:
    assert math_equiv([response], [answer]) == [0.0]


def test_literal_count_counts_a_fraction_once() -> None:
    texts = ["20", "3*(4+5)-7", "-1/2", "\\frac{1}{2}", "\\frac{-1}{2}", "x", "2.5x+1"]
    assert [literal_count(text) for text in texts] == [1, 4, 1, 1, 1, 0, 2]


def test_math_equiv_never_raises_on_garbage() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 300, size=20)
    noise = ["".join(rng.choice(list(string.printable), size=int(n))) for n in lengths]
    garbage = noise + ["9" * 5000, "1" * 100_000 + "+x", "\\frac{" * 100, "}{", "\x00", "$$",
                       "[" * 300]  # the last one times out inside math_verify (1 s)
    assert math_equiv(garbage, ["4"] * len(garbage)) == [0.0] * len(garbage)
    assert math_equiv([None, 4], ["4", "4"]) == [0.0, 0.0]  # type: ignore[list-item]


def test_math_equiv_works_off_the_main_thread() -> None:
    # math_verify's signal-based timeout would raise in a worker thread.
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(math_equiv, ["0.5", "0.4"], ["1/2", "1/2"]).result() == [1.0, 0.0]


def test_math_equiv_rejects_length_mismatch() -> None:
    with pytest.raises(ValueError, match="2 responses but 1 answers"):
        math_equiv(["1", "2"], ["1"])


# --- countdown ---------------------------------------------------------------

TWENTY_FOUR = {"numbers": [3, 3, 8, 8], "target": 24}
SMALL = {"numbers": [3, 5, 7], "target": 22}


@pytest.mark.parametrize(("response", "problem"), [
    ("8/(3-8/3)", TWENTY_FOUR),  # exact fractions in between: 8/(1/3)
    ("3*5+7", SMALL), (" 7 + 5*3 ", SMALL), ("(3*5)+7=22", SMALL),
    ("(3+5)*7-2", {"numbers": [2, 3, 5, 7], "target": 54}),
    ("6/4*2", {"numbers": [2, 4, 6], "target": 3}),
])
def test_countdown_accepts_solutions(response: str, problem: dict) -> None:
    assert countdown([response], [problem]) == [1.0]


@pytest.mark.parametrize(("response", "problem"), [
    ("7*3+1", SMALL),  # 1 is not given
    ("3*7+3-7+5", SMALL),  # 3 and 7 used twice
    ("7*3", {"numbers": [3, 7], "target": 22}), ("3*5+7", {"numbers": [3, 5, 7, 1], "target": 22}),
    ("35-13", {"numbers": [1, 3, 3, 5], "target": 22}),  # digits glued into new numbers
    ("7/2+5", {"numbers": [2, 5, 7], "target": 8}),  # 8.5, not 8: no rounding
    ("8/(3-3)+8", TWENTY_FOUR), ("3*8*(8-8)", TWENTY_FOUR),  # division by zero; wrong value
    ("2**3*3", {"numbers": [2, 3, 3], "target": 24}),
    ("-3+5*5", {"numbers": [3, 5, 5], "target": 22}),  # no unary minus
    ("__import__('os')", SMALL), ("3*5+7.0", SMALL), ("3*5+07", SMALL), ("3*5+7=23", SMALL),
    ("(" * 40 + "3*5+7" + ")" * 40, SMALL), ("", SMALL), ("twenty-two", SMALL),
])
def test_countdown_rejects_non_solutions(response: str, problem: dict) -> None:
    assert countdown([response], [problem]) == [0.0]


def test_countdown_reuse_is_counted_per_occurrence() -> None:
    # With 3 given twice, using it twice is right; with 3 given once, it is not.
    assert solves_countdown("8/(3-8/3)", [3, 3, 8, 8], 24)
    assert not solves_countdown("8/(3-8/3)", [3, 8, 8, 9], 24)


def test_countdown_rejects_length_mismatch() -> None:
    with pytest.raises(ValueError, match="2 responses but 1 problems"):
        countdown(["1", "2"], [SMALL])


# --- sudoku ------------------------------------------------------------------

PUZZLE = "12.4/3..2/..../4321"
SOLUTION = "1234341221434321"


@pytest.mark.parametrize("response", [
    SOLUTION, "1234/3412/2143/4321", "1234\n3412\n2143\n4321\n",
    " 1 2 3 4 | 3 4 1 2 | 2 1 4 3 | 4 3 2 1",
])
def test_sudoku_accepts_the_solution_with_separators(response: str) -> None:
    assert sudoku([response], [PUZZLE]) == [1.0]


def test_sudoku_accepts_every_solution_of_an_open_puzzle() -> None:
    # Two valid grids share these givens; either one solves the puzzle.
    first, second = "1234341221434321", "1234341243212143"
    open_puzzle = "1234/3412/..../...."
    assert sudoku([first, second], [open_puzzle] * 2) == [1.0, 1.0]


@pytest.mark.parametrize("response", [
    "2134341212434321",  # a valid grid, but it changes the givens
    "1234234134124123",  # rows and columns fine, boxes repeat digits
    "1234341221434312", "123434122143432", "12343412214343211", "1234341221434325",
    "12a4341221434321", "", "one two three",
])
def test_sudoku_rejects_wrong_grids(response: str) -> None:
    assert sudoku([response], [PUZZLE]) == [0.0]


def test_sudoku_refuses_a_malformed_puzzle() -> None:
    with pytest.raises(ValueError, match="malformed"):
        sudoku([SOLUTION], ["12.4/3..2"])


# --- instruction following ---------------------------------------------------

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

"""Tests for the countdown and sudoku verifiers (rewards.logic)."""

from __future__ import annotations

import doctest

import pytest

import rewards.logic
from rewards.logic import countdown, solves_countdown, sudoku


def test_doctests_pass() -> None:
    assert doctest.testmod(rewards.logic).failed == 0


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

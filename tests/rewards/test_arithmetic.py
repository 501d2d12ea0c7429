"""Tests for the integer verifier (rewards.arithmetic)."""

from __future__ import annotations

import doctest

import pytest

import rewards.arithmetic
from rewards import exact_int, final_int, get_reward, parse_int


@pytest.mark.parametrize(("text", "value"), [(" 85", 85), ("85.", 85), ("-3", -3), ("0", 0)])
def test_parse_int_accepts_a_bare_integer(text: str, value: int) -> None:
    assert parse_int(text) == value


@pytest.mark.parametrize("text", ["85 apples", "8 5", "", "0x55", "+5", "85..", "1.5", "٨٥"])
def test_parse_int_rejects_anything_else(text: str) -> None:
    assert parse_int(text) is None


def test_parse_int_survives_absurdly_long_numbers() -> None:
    assert parse_int("9" * 5000) is None


def test_exact_int_scores_right_and_wrong_answers() -> None:
    # "85 apples" scored 0 before issue 47: a unit after the number is now read as text.
    responses = [" 85", "85.", "-3", "85 apples", "8 5", "", "0x55", "85..", "+5", "٨٥"]
    answers = [85, 85, -3, 85, 85, 85, 85, 85, 5, 85]
    assert exact_int(responses, answers) == [1.0, 1.0, 1.0, 1.0] + [0.0] * 6


def test_exact_int_rejects_length_mismatch() -> None:
    with pytest.raises(ValueError, match="2 responses but 1 answers"):
        exact_int(["1", "2"], [1])


@pytest.mark.parametrize("cheat", [
    "84|85|86",  # several answers: only the last counts, and it is wrong
    "85 86", "7+8=15|4+3+1=8|85 86",  # two numbers in the final answer
    "7+8=15|4+3+1=8|85|",  # nothing after the last bar
    "7+8=15|4+3+1=8|85 or 86", "7+8=15|4+3+1=8|not 85", "7+8=15|4+3+1=8|eighty-five",
    "7+8=15|4+3+1=8|\u0668\u0665",  # other scripts' digits
    "print(85)|", "85\n|0",
])
def test_final_int_gives_nothing_to_a_forged_or_hedged_final_answer(cheat: str) -> None:
    assert final_int([cheat], [85]) == [0.0]


def test_final_int_scores_the_final_answer_only() -> None:
    assert get_reward("final_int") is final_int
    assert final_int(["7+8=15|4+3+1=8|85", "0+0=0|85", "85", " 85."], [85] * 4) == [1.0] * 4
    # Issue 47: a final answer in words reads as its number (it scored 0 before).
    assert final_int(["7+8=15|4+3+1=8|85 is correct"], [85]) == [1.0]


def test_doctests_pass() -> None:
    assert doctest.testmod(rewards.arithmetic).failed == 0

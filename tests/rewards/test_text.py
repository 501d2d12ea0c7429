"""exact_match and multiple_choice: what they accept, and what a cheating response scores."""
import doctest

import pytest

import rewards.text
from rewards import get_reward
from rewards.text import exact_match, multiple_choice


def test_doctests_pass():
    assert doctest.testmod(rewards.text).failed == 0


def test_both_are_registered_under_their_names():
    assert get_reward("exact_match") is exact_match
    assert get_reward("multiple_choice") is multiple_choice


@pytest.mark.parametrize("cheat", [
    "A B C D", "ABCD", "A/B/C/D", "(A)(B)", "A, B, C or D", "all of them", "", "  ",
    "B\nA", "A: B",
    # Issue 47 reads a marked answer ("The answer is (B)" and "answer: B. Correct!" now score
    # 1.0, test_real_styles.py); hedged, negated or hidden ones still pay nothing.
    "The answer is (A) or (B)", "The answer is not (B)", "\\boxed{A} \\boxed{B}", "B\u200b",
    "A. London, B. Paris",
])
def test_multiple_choice_pays_nothing_for_hedging_or_padding(cheat):
    assert multiple_choice([cheat], ["B"]) == [0.0]


@pytest.mark.parametrize("cheat", [
    "Paris Paris", "Paris or London", "Paris, London, Rome", "",
    "Paris\nLondon", "paris (or London)",
    # Issue 47: "The answer is Paris" now scores 1.0 (test_real_styles.py); these still do not.
    "The answer is not Paris", "It is not Paris", "Pa\u200bris", "The answer is Rome or Paris",
])
def test_exact_match_pays_only_for_the_answer_alone(cheat):
    assert exact_match([cheat], ["Paris"]) == [0.0]


def test_an_empty_response_never_matches_and_batches_keep_their_order():
    assert exact_match(["", "Rome", "rome."], ["x", "Rome", "Rome"]) == [0.0, 1.0, 1.0]
    assert multiple_choice(["c", "(d)", "E."], ["C", "D", "A"]) == [1.0, 1.0, 0.0]

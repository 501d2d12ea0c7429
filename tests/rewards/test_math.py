"""Tests for the math verifier (rewards.math)."""

from __future__ import annotations

import doctest
import string
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import rewards.math
from rewards.math import literal_count, math_equiv


def test_doctests_pass() -> None:
    assert doctest.testmod(rewards.math).failed == 0


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

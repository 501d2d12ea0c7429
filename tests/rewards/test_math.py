"""Tests for the math verifier (rewards.math)."""

from __future__ import annotations

import doctest
import string
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import rewards.math
from rewards import deadline
from rewards.math import literal_count, math_equiv


def test_doctests_pass() -> None:
    assert doctest.testmod(rewards.math).failed == 0


EQUIVALENT = [  # (response, answer)
    ("0.5", "1/2"), ("1/2", "0.5"), ("\\frac{1}{2}", "1/2"), ("\\frac{1}{2}", "0.5"),
    ("1+2x", "2x+1"), ("1+2*x", "2x+1"), ("x=3", "3"), ("3", "x=3"), ("\\boxed{4}", "4"),
    ("-0.50", "-1/2"), ("-1/2", "-0.50"), ("\\frac{-1}{2}", "-1/2"), ("-\\frac{1}{2}", "-0.5"),
    ("$4$", "4"), ("7.5", "15/2"), ("5*x", "5x"),
    ("4.0", "4"), (" 12 ", "12"),
    ("3+4=7", "7"),  # issue 47: working before the final answer is not scored (0 before)
]
NOT_EQUIVALENT = [
    ("0.4", "1/2"), ("2x+2", "2x+1"), ("-4", "4"), ("x=5", "3"), ("44", "4"), ("4x", "4"),
    ("3*(4+5)-7", "20"),  # echoing the question is equal in value but not an answer
    ("2x+3x", "5x"), ("3+4=", "7"), ("4, 5", "4"), ("", "4"), ("   ", "4"), ("abc", "4"),
    ("10/12", "5/6"),  # a fraction not in lowest terms leaves work to do
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


# --- issue 29: restating the question is not an answer --------------------------------

# (gold, response): the echoes (a MATH-style question's expression, copied back) and
# more of the same families. Each is equal in value to the gold, and each scored 1.0 before.
ECHOES = [
    ("70", "\\dbinom{8}{4}"), ("70", "\\binom{8}{4}"), ("70", "{8 \\choose 4}"),
    ("720", "6!"), ("720", "$6!$"), ("6", "the answer is 6!"),
    ("3", "\\lfloor 3.2\\rfloor"), ("4", "\\lceil 3.2\\rceil"),
    ("3", "\\left\\lfloor \\pi \\right\\rfloor"),
    ("7", "\\frac{84}{12}"), ("7", "\\boxed{\\frac{84}{12}}"), ("7", "\\frac{7}{1}"),
    ("2", "\\frac{4}{2}"), ("1", "\\frac{3}{3}"), ("20", "The answer is $\\frac{100}{5}$"),
    ("1/2", "\\frac{1.5}{3}"), ("5/6", "10/12"),
    ("25", "100\\div4"), ("25", "100 \\div 4"),
    ("3", "-(-3)"), ("3", "--3"),
    ("6", "6+3*2-6="),  # a bare k2rl/Math-v2 prompt copied back; math_verify reads 6
    ("6", "6+3*2-6"), ("12", "3 \\times 4"),
    ("4", "\\sqrt{16}"), ("3", "|-3|"), ("1", "e^{0}"),
    ("10", "\\sum_{i=1}^{4} i"), ("24", "\\prod_{i=1}^{4} i"),
    ("1", "\\int_0^1 2x\\,dx"), ("1", "\\lim_{x\\to 0}\\frac{\\sin x}{x}"),
    ("-2", "\\det\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}"),
    ("6", "\\log_{2}{64}"), ("2", "\\log_{10} 100"), ("2", "\\ln e^2"),
    ("1", "\\sin\\frac{\\pi}{2}"), ("1", "\\cos 0"),
    ("2", "7 \\bmod 5"), ("6", "\\gcd(12, 18)"), ("5", "\\max(3,5)"),
    ("5", "\\boxed{\\dbinom{5}{4}}"), ("5", "The answer is $\\binom{5}{1}$"),
]


@pytest.mark.parametrize(("gold", "response"), ECHOES)
def test_restating_the_question_is_not_an_answer(gold: str, response: str) -> None:
    assert math_equiv([response], [gold]) == [0.0]


@pytest.mark.parametrize(("gold", "response"), [
    ("70", "70"), ("720", "\\boxed{720}"), ("7/2", "\\frac{7}{2}"), ("3.5", "7/2"),
    ("-3", "x = -3"), ("-3/4", "\\frac{-3}{4}"), ("1000", "10^3"), ("\\ln 2", "\\ln 2"),
    ("2\\sqrt{3}", "\\sqrt{12}"), ("1-(-1)^n", "1-(-1)^n"),
    ("5", "5\\text{ cm}"), ("90", "90^\\circ"), ("3.14", "\\pi"),
])
def test_final_values_and_the_golds_own_operators_still_pass(gold: str, response: str) -> None:
    assert math_equiv([response], [gold]) == [1.0]


def test_an_unreduced_fraction_the_gold_writes_itself_is_accepted() -> None:
    assert math_equiv(["\\frac{2}{4}", "\\frac{2}{4}"], ["\\frac{2}{4}", "1/2"]) == [1.0, 0.0]


# --- issue 29: bombs, and a hard time limit in any thread ------------------------------

BOMBS = ["9^{9^{9}}", "9^9^9", "9**9**9", "2^(3^(4^5))", "10^{1000000}", "9^{999999999}",
         "123456!", "\\boxed{9^{9^{9}}}"]


@pytest.mark.parametrize("bomb", BOMBS)
def test_costly_replies_are_rejected_before_parsing(bomb: str) -> None:
    assert rewards.math.too_costly(bomb)


def test_bombs_score_zero_at_once_off_the_main_thread() -> None:
    start = time.monotonic()
    with ThreadPoolExecutor(1) as pool:  # the old code ran 9^{9^{9}} here for minutes
        scores = pool.submit(math_equiv, BOMBS, ["4"] * len(BOMBS)).result(timeout=60)
    assert scores == [0.0] * len(BOMBS)
    assert time.monotonic() - start < 1.0


def _without_precheck() -> None:
    """Worker setup for the test below: let bombs reach SymPy (this worker only)."""
    rewards.math.too_costly = lambda text: False


@pytest.mark.slow  # starts a worker of its own (SymPy's import): 3-10 s
def test_a_bomb_inside_math_verify_is_killed_at_the_hard_limit() -> None:
    """The worker's kill bounds what no pre-check catches: with ``too_costly`` switched off
    in the worker, ``9^{9^{9}}`` against ``2x+1`` reaches SymPy, which holds the GIL for
    minutes (the old code ran it in the caller's thread: that thread, and the process's
    others, stalled). Here the worker is killed at the limit, the caller's threads run."""
    result, ticks = [], 0
    before = deadline.TIMEOUTS["test tower"]
    thread = threading.Thread(target=lambda: result.append(deadline.within(
        rewards.math.is_equivalent, "9^{9^{9}}", "2x+1", seconds=1.0, default=False,
        setup=(rewards.math.warm_up, _without_precheck), name="test tower")))
    thread.start()
    while thread.is_alive():
        ticks += 1
        time.sleep(0.01)
    assert result == [deadline.Timed(False, True)]
    assert deadline.TIMEOUTS["test tower"] == before + 1
    assert ticks > 0
    assert math_equiv(["1/2"], ["0.5"]) == [1.0]  # the shared worker is untouched

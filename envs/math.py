"""Single-turn arithmetic and simple algebra ("k2rl/Math-v2").

Five problem families, each a short prompt with a short answer, numeric or
symbolic: ``"3*(4+5)-7="`` -> ``20``, ``"Solve 2x+3=11. x="`` -> ``4``,
``"Half of 7 plus 4?"`` -> ``15/2``, ``"Simplify 7x-3x+2"`` -> ``4x+2``,
``"1/2+1/3="`` -> ``5/6``. The answer is a string scored by ``math_equiv``,
so any equivalent final form (``7.5``, ``\\frac{15}{2}``, ``x=4``) is right.

Each family returns the prompt, the same problem written canonically (the operands of every
``+`` and ``*`` sorted: ``"(4+3)*2="`` -> ``"(3+4)*2="``, ``"Simplify 5x+2x"`` ->
``"Simplify 2x+5x"``, ``"1/3+1/2="`` -> ``"1/2+1/3="``) and the answer; the canonical form is
the key, so both orders of one problem fall in the same split (v0 keyed the prompt itself).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

import numpy as np

from envs.base import Problem, TextEnv

SMALL_MAX = 9  # operands are single digits: a tiny model can learn the facts


def _digit(rng: np.random.Generator, low: int = 1, high: int = SMALL_MAX) -> int:
    """A uniform integer in [low, high]."""
    return int(rng.integers(low, high + 1))


# Multi-step arithmetic: (format of the operands, index pairs of the operands of each + and *
# whose order does not matter, value).
CHAIN_FORMS: tuple[tuple[str, tuple[tuple[int, int], ...], Callable[..., int]], ...] = (
    ("{0}*({1}+{2})-{3}=", ((1, 2),), lambda a, b, c, d: a * (b + c) - d),
    ("({0}+{1})*{2}=", ((0, 1),), lambda a, b, c, d: (a + b) * c),
    ("{0}+{1}*{2}-{3}=", ((1, 2),), lambda a, b, c, d: a + b * c - d),
    ("{0}*{1}-{2}*{3}=", ((0, 1), (2, 3)), lambda a, b, c, d: a * b - c * d),
)


def commuted_sorted(operands: tuple[int, ...], pairs: tuple[tuple[int, int], ...]
                    ) -> tuple[int, ...]:
    """``operands`` with each commuting pair in ascending order.

    >>> commuted_sorted((5, 4, 3, 2), ((0, 1), (2, 3)))
    (4, 5, 2, 3)
    """
    out = list(operands)
    for i, j in pairs:
        out[i], out[j] = sorted((out[i], out[j]))
    return tuple(out)


def _chain(rng: np.random.Generator) -> tuple[str, str, str]:
    """Multi-step arithmetic with precedence and parentheses, e.g. "3*(4+5)-7="."""
    operands = tuple(_digit(rng) for _ in range(4))
    form, pairs, value = CHAIN_FORMS[int(rng.integers(len(CHAIN_FORMS)))]
    # "(4+3)*2=" and "(3+4)*2=" are one problem: the canonical form sorts each pair.
    return (form.format(*operands), form.format(*commuted_sorted(operands, pairs)),
            str(value(*operands)))


def _solve(rng: np.random.Generator) -> tuple[str, str, str]:
    """A linear equation with an integer root, e.g. "Solve 2x+3=11. x="."""
    a, b, x = _digit(rng, 2), _digit(rng, 1, 20), _digit(rng, -SMALL_MAX)
    prompt = f"Solve {a}x+{b}={a * x + b}. x="
    return prompt, prompt, str(x)


def _words(rng: np.random.Generator) -> tuple[str, str, str]:
    """Arithmetic in words, sometimes with a fraction answer, e.g. "Half of 7 plus 4?"."""
    a, b = _digit(rng, 2, 20), _digit(rng)
    scales = [("Half of", Fraction(1, 2)), ("Double", Fraction(2)), ("Triple", Fraction(3))]
    name, scale = scales[int(rng.integers(len(scales)))]
    if rng.random() < 0.5:
        prompt, value = f"{name} {a} plus {b}?", scale * a + b
    else:
        prompt, value = f"{name} {a} minus {b}?", scale * a - b
    return prompt, prompt, str(value)


def _simplify(rng: np.random.Generator) -> tuple[str, str, str]:
    """Collect like terms, e.g. "Simplify 7x-3x+2" -> "4x+2"."""
    a, b, c = _digit(rng, 2), _digit(rng, 2), _digit(rng, 0)
    if a - b >= 2 and rng.random() < 0.5:
        expr, canonical, k = f"{a}x-{b}x", f"{a}x-{b}x", a - b
    else:
        low, high = sorted((a, b))
        expr, canonical, k = f"{a}x+{b}x", f"{low}x+{high}x", a + b
    # k >= 2 by construction: an answer "x" would make the equivalent "1x"
    # state more numbers than the answer, which math_equiv rejects.
    if c:
        return f"Simplify {expr}+{c}", f"Simplify {canonical}+{c}", f"{k}x+{c}"
    return f"Simplify {expr}", f"Simplify {canonical}", f"{k}x"


def _fractions(rng: np.random.Generator) -> tuple[str, str, str]:
    """Sum or difference of two unit-ish fractions, e.g. "1/2+1/3=" -> "5/6"."""
    b, d = _digit(rng, 2, 6), _digit(rng, 2, 6)
    a, c = _digit(rng, 1, b - 1), _digit(rng, 1, d - 1)
    op = "+" if rng.random() < 0.5 else "-"
    value = Fraction(a, b) + Fraction(c, d) if op == "+" else Fraction(a, b) - Fraction(c, d)
    prompt = f"{a}/{b}{op}{c}/{d}="
    if op == "+":
        (a, b), (c, d) = sorted(((a, b), (c, d)))
    return prompt, f"{a}/{b}{op}{c}/{d}=", str(value)


# Each family returns (prompt, the same problem written canonically, answer).
FAMILIES: tuple[Callable[[np.random.Generator], tuple[str, str, str]], ...] = (
    _chain, _solve, _words, _simplify, _fractions,
)


class MathEnv(TextEnv):
    """One problem from a uniformly chosen family; the action is the answer."""

    task = "math"
    budget = 16
    max_turns = 1
    reward_name = "math_equiv"

    def _draw(self) -> Problem:
        family = FAMILIES[int(self.np_random.integers(len(FAMILIES)))]
        prompt, canonical, answer = family(self.np_random)
        # The prompt states the whole problem; the key is that statement with the operands of
        # every + and * sorted, so both orders of one problem share it (and its split).
        return Problem(key=f"math:{canonical}", prompt=prompt, answer=answer)

    def expert_action(self, rng: np.random.Generator) -> str:
        """The answer in its canonical form, e.g. "4x+2" or "-1/6"."""
        return str(self._require_active().answer)

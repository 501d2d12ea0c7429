"""Single-turn two-operand addition and subtraction ("k2rl/Arithmetic-v1").

The prompt is just ``"47+38="`` (operands 0..49 since v1) because the model is
character-level and short prompts keep episodes cheap; the action is the answer.

A sum is one problem whichever operand comes first: ``"47+38="`` and ``"38+47="``
share the key ``"arith:38+47"``, so they fall in the same split (v0 keyed the
ordered operands, and ``b+a`` could be trained on while ``a+b`` was held out).
"""

from __future__ import annotations

import numpy as np

from envs.base import Problem, TextEnv

OPERAND_MAX = 49  # v1: 0..49 (v0: 0..99)
OPS = ("+", "-")


def identity(a: int, op: str, b: int) -> str:
    """The problem's key: the operands of a sum in ascending order, a difference as it is.

    >>> identity(47, "+", 38), identity(38, "+", 47), identity(47, "-", 38)
    ('arith:38+47', 'arith:38+47', 'arith:47-38')
    """
    if op == "+":
        a, b = sorted((a, b))
    return f"arith:{a}{op}{b}"


class ArithmeticEnv(TextEnv):
    """``a+b`` or ``a-b`` with a, b uniform in 0..49, scored by exact_int."""

    task = "arithmetic"
    budget = 8
    max_turns = 1
    reward_name = "exact_int"

    def _draw(self) -> Problem:
        a, b = (int(x) for x in self.np_random.integers(0, OPERAND_MAX + 1, size=2))
        op = OPS[int(self.np_random.integers(len(OPS)))]
        answer = a + b if op == "+" else a - b
        # The prompt keeps the drawn order; the key is the same for both orders of a sum.
        return Problem(key=identity(a, op, b), prompt=f"{a}{op}{b}=", answer=answer)

    def _step(self, action: str) -> str | None:
        return None  # every action is the final answer

    def expert_action(self, rng: np.random.Generator) -> str:
        """The correct answer, e.g. "85" or "-12"."""
        return str(self._require_active().answer)

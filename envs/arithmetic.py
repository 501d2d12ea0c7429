"""Single-turn two-operand addition and subtraction ("k2rl/Arithmetic-v0").

The prompt is just ``"47+38="`` because the model is character-level and
short prompts keep episodes cheap; the action is the answer.
"""

from __future__ import annotations

import numpy as np

from envs.base import Problem, TextEnv

OPERAND_MAX = 99
OPS = ("+", "-")


class ArithmeticEnv(TextEnv):
    """``a+b`` or ``a-b`` with a, b uniform in 0..99, scored by exact_int."""

    task = "arithmetic"
    budget = 8
    max_turns = 1
    reward_name = "exact_int"

    def _draw(self) -> Problem:
        a, b = (int(x) for x in self.np_random.integers(0, OPERAND_MAX + 1, size=2))
        op = OPS[int(self.np_random.integers(len(OPS)))]
        answer = a + b if op == "+" else a - b
        return Problem(key=f"arith:{a}{op}{b}", prompt=f"{a}{op}{b}=", answer=answer)

    def _step(self, action: str) -> str | None:
        return None  # every action is the final answer

    def expert_action(self, rng: np.random.Generator) -> str:
        """The correct answer, e.g. "85" or "-12"."""
        return str(self._require_active().answer)

"""Single-turn two-operand addition and subtraction ("k2rl/Arithmetic-v1").

The prompt is just ``"47+38="`` (operands 0..49 since v1) because the model is
character-level and short prompts keep episodes cheap; the action is the answer.

A sum is one problem whichever operand comes first: ``"47+38="`` and ``"38+47="``
share the key ``"arith:38+47"``, so they fall in the same split (v0 keyed the
ordered operands, and ``b+a`` could be trained on while ``a+b`` was held out).

A difference and its reverse are two problems (``"47-38="``, ``"38-47="``: keys
``arith:47-38`` and ``arith:38-47``) that share a split (``split_key`` ``arith:38~47``):
Arithmetic-v2 works ``38-47`` as ``-(47-38)`` with the columns of ``47-38``, so a reverse in
training would show a held-out difference's whole working (until 2026-11-25, 83 of the 104
held-out differences had theirs inside a warm-start reply).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.base import Problem, TextEnv, compare_line, final_part, split_of
from envs.judging import TeachesJudging

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


def split_identity(a: int, op: str, b: int) -> str:
    """What decides the split: the key, but a difference and its reverse share one.

    >>> split_identity(47, "-", 38), split_identity(38, "-", 47), split_identity(38, "+", 47)
    ('arith:38~47', 'arith:38~47', '')
    """
    if op == "+":
        return ""  # the key already is order-free
    a, b = sorted((a, b))
    return f"arith:{a}~{b}"


@dataclass(frozen=True)
class ArithmeticProblem(Problem):
    """``a op b`` in the order the prompt shows it."""

    a: int
    op: str
    b: int


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
        return ArithmeticProblem(key=identity(a, op, b), prompt=f"{a}{op}{b}=", answer=answer,
                                 a=a, op=op, b=b, split_key=split_identity(a, op, b))

    def expert_action(self, rng: np.random.Generator) -> str:
        """The correct answer, e.g. "85" or "-12"."""
        return str(self._require_active().answer)


def working(a: int, op: str, b: int) -> str:
    """Column working for ``a op b`` (both 0..99), units first, then tens, then the answer.

    A difference with ``a < b`` is worked as ``-(b-a)``; a borrow shows as a units column of
    ``1u`` and a ``-1`` in the tens column.

    >>> working(47, "+", 38), working(3, "+", 4)
    ('7+8=15|4+3+1=8|85', '3+4=7|0+0+0=0|7')
    >>> working(45, "-", 17), working(10, "-", 36)
    ('15-7=8|4-1-1=2|28', '-(36-10)|6-0=6|3-1-0=2|-26')
    """
    if op == "+":
        units = a % 10 + b % 10
        tens = a // 10 + b // 10 + units // 10
        return f"{a % 10}+{b % 10}={units}|{a // 10}+{b // 10}+{units // 10}={tens}|{a + b}"
    head = ""
    if a < b:
        a, b, head = b, a, f"-({b}-{a})|"
    borrow = int(a % 10 < b % 10)
    top = a % 10 + 10 * borrow
    sign = "-" if head else ""
    return (f"{head}{top}-{b % 10}={top - b % 10}|{a // 10}-{b // 10}-{borrow}="
            f"{a // 10 - b // 10 - borrow}|{sign}{a - b}")


class WorkedArithmeticEnv(ArithmeticEnv, TeachesJudging):
    """Arithmetic-v1's problems, keys and split, answered with column working
    ("k2rl/Arithmetic-v2"): the scripted expert writes ``working`` (``"47+38="`` ->
    ``"7+8=15|4+3+1=8|85"``) and ``final_int`` scores what follows the last ``|``.

    Each column is a one-digit fact that every split shows many times, so a held-out sum is
    new only as a combination: a small character model that guesses the units digit of an
    answer written at once (v1) can carry out the columns one at a time.
    """

    budget = 32  # the longest working, "-(49-10)|19-0=9|...", is 27 characters
    reward_name = "final_int"
    corrects_checks = True  # the result against the critic's own working's (check_against)

    def expert_action(self, rng: np.random.Generator) -> str:
        """The column working, e.g. "7+8=15|4+3+1=8|85"."""
        problem = self._require_active()
        assert isinstance(problem, ArithmeticProblem)
        return working(problem.a, problem.op, problem.b)

    # --- the critic's scripted expert: its own column working, then the result compared

    def judge_working(self) -> str:
        """The column working, as the policy writes it."""
        problem = self._require_active()
        assert isinstance(problem, ArithmeticProblem)
        return working(problem.a, problem.op, problem.b)

    def judge_check(self, response: str) -> str:
        """The response's result against the working's, a digit at a time:
        "84 vs 85, 88=45!: no"."""
        return self.check_against(response, self.judge_working())

    @classmethod
    def check_against(cls, response: str, own: str) -> str:
        """The response's result against the critic's own working's result."""
        return compare_line(final_part(response), final_part(own))

    def rejected_response(self, rng: np.random.Generator) -> str:
        """A wrong result: the right working with a slip in its result, or the working of a
        neighbouring training-split problem (a column slip carried through; never a held-out
        problem's working, which the warm-start would otherwise show)."""
        problem = self._require_active()
        assert isinstance(problem, ArithmeticProblem)
        right = working(problem.a, problem.op, problem.b)
        while True:
            if rng.random() < 0.5:
                slip = int(rng.choice([-10, -2, -1, 1, 2, 10]))
                text = right.rsplit("|", 1)[0] + f"|{problem.answer + slip}"
            else:
                a = min(99, max(0, problem.a + int(rng.choice([-10, -1, 1, 10]))))
                key = split_identity(a, problem.op, problem.b) or identity(a, problem.op, problem.b)
                if split_of(key) != "train":
                    continue
                text = working(a, problem.op, problem.b)
            if final_part(text) != str(problem.answer):
                return text

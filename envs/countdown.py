"""Single-turn Countdown: reach a target with given numbers ("k2rl/Countdown-v1").

The prompt is ``"Use 3 5 7 to make 22:"``; the action is an expression that
uses each number exactly once with + - * / and parentheses, e.g. ``3*5+7``,
scored by the ``countdown`` verifier. Every target is reachable: a problem is
drawn by combining its numbers into a random expression, whose value becomes
the target and whose text is kept as the expert's answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from envs.base import Problem, TextEnv

NUMBER_MIN, NUMBER_MAX = 1, 9
COUNTS = (3, 4)  # how many numbers a problem gives
TARGET_MAX = 99  # larger targets are mostly products: dull, and long to write
MAX_TRIES = 1_000  # redraws of the expression until its value is a usable target
PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}
ATOM = 3  # precedence of a bare number: never parenthesised


@dataclass(frozen=True)
class CountdownProblem(Problem):
    """A countdown problem with one known solution."""

    solution: str  # an expression reaching the target, e.g. "(3+5)*7-2"


@dataclass(frozen=True)
class Term:
    """A partial expression: its exact integer value, its text and its precedence."""

    value: int
    text: str
    precedence: int


def combine(left: Term, op: str, right: Term) -> Term:
    """``left op right`` with only the parentheses precedence needs.

    >>> combine(Term(7, "7", ATOM), "-", Term(5, "3+2", 1)).text
    '7-(3+2)'
    >>> combine(Term(8, "5+3", 1), "*", Term(2, "2", ATOM))
    Term(value=16, text='(5+3)*2', precedence=2)
    """
    prec = PRECEDENCE[op]
    left_text = f"({left.text})" if left.precedence < prec else left.text
    # Equal precedence on the right changes the value of - and /: 7-(3+2) != 7-3+2.
    wrap_right = right.precedence < prec or (right.precedence == prec and op in "-/")
    right_text = f"({right.text})" if wrap_right else right.text
    value = {
        "+": lambda: left.value + right.value,
        "-": lambda: left.value - right.value,
        "*": lambda: left.value * right.value,
        "/": lambda: left.value // right.value,
    }[op]()
    return Term(value, f"{left_text}{op}{right_text}", prec)


def allowed_ops(left: Term, right: Term) -> list[str]:
    """Operators that keep every intermediate value a positive integer."""
    ops = ["+", "*"]
    if left.value > right.value:
        ops.append("-")
    if right.value > 1 and left.value % right.value == 0:
        ops.append("/")
    return ops


def random_expression(numbers: list[int], rng: np.random.Generator) -> Term:
    """Combine ``numbers`` pairwise at random until one expression uses them all."""
    terms = [Term(n, str(n), ATOM) for n in numbers]
    while len(terms) > 1:
        i, j = (int(k) for k in rng.choice(len(terms), size=2, replace=False))
        left, right = terms[i], terms[j]
        ops = allowed_ops(left, right)
        op = ops[int(rng.integers(len(ops)))]
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [combine(left, op, right)]
    return terms[0]


class CountdownEnv(TextEnv):
    """3 or 4 numbers in 1..9 and a target in 1..99 that they can reach."""

    task = "countdown"
    budget = 24
    max_turns = 1
    reward_name = "countdown"

    def _draw(self) -> Problem:
        for _ in range(MAX_TRIES):
            count = COUNTS[int(self.np_random.integers(len(COUNTS)))]
            numbers = sorted(
                int(n) for n in self.np_random.integers(NUMBER_MIN, NUMBER_MAX + 1, size=count)
            )
            expression = random_expression(numbers, self.np_random)
            if 1 <= expression.value <= TARGET_MAX:
                break
        else:
            raise RuntimeError(f"no target in 1..{TARGET_MAX} after {MAX_TRIES} expressions")
        target, shown = expression.value, " ".join(map(str, numbers))
        return CountdownProblem(
            # Sorted numbers and the target define the problem, not how it was found.
            key=f"countdown:{shown}:{target}",
            prompt=f"Use {shown} to make {target}:",
            answer={"numbers": numbers, "target": target},
            solution=expression.text,
        )

    def expert_action(self, rng: np.random.Generator) -> str:
        """The expression the target was built from, e.g. "(3+5)*7-2"."""
        problem = self._require_active()
        assert isinstance(problem, CountdownProblem)
        return problem.solution

"""Write a small Python function, scored by hidden unit tests ("k2rl/Code-v1").

The prompt is one short sentence, e.g. ``"Write f(x) that returns x*3+1."``
(the model is character-level, so prompts stay under 80 characters); the
action is the source of ``f``. Problems come from templates with random
integer constants, several thousand in all; each has 3-5 hidden ``assert``
tests computed from its constants, and the reward is the fraction that pass
when the answer runs in the sandbox (``rewards.code.unit_tests``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from envs.base import Problem, TextEnv


@dataclass(frozen=True)
class Template:
    """A family of problems, one per choice of its integer constants."""

    name: str  # the key's second field
    ranges: tuple[tuple[int, int], ...]  # inclusive bounds of each constant
    prompt: str  # .format(*constants): the task in words
    solution: str  # .format(*constants): a correct answer, within the budget
    reference: Callable[..., Any]  # reference(arg, *constants): what f(arg) must return
    inputs: Callable[..., tuple[Any, ...]]  # inputs(*constants): the tests' arguments

    def tests(self, constants: tuple[int, ...]) -> tuple[str, ...]:
        """The hidden tests, e.g. ``("assert f(2) == 7", ...)``."""
        return tuple(f"assert f({arg!r}) == {self.reference(arg, *constants)!r}"
                     for arg in self.inputs(*constants))


def _fibonacci_like(n: int, first: int, second: int) -> int:
    """The n-th term of the sequence starting ``first, second`` with the Fibonacci rule."""
    for _ in range(n):
        first, second = second, first + second
    return first


TEMPLATES = (
    Template("lin", ((2, 30), (0, 99)), "Write f(x) that returns x*{0}+{1}.",
             "def f(x):\n    return x*{0}+{1}",
             lambda x, a, b: x * a + b, lambda a, b: (0, 1, 5, -3, 12)),
    Template("digsum", ((1, 99),), "Write f(x) that returns the sum of the digits of x*{0}.",
             "def f(x):\n    return sum(int(d) for d in str(x*{0}))",
             lambda x, a: sum(int(d) for d in str(x * a)), lambda a: (0, 7, 19, 123, 4096)),
    Template("scale", ((2, 99),), "Write f(xs) that returns xs with every element times {0}.",
             "def f(xs):\n    return [x*{0} for x in xs]",
             lambda xs, a: [x * a for x in xs], lambda a: ([], [1], [3, -1, 4], [2, 7, 1, 8])),
    # Inputs built from the divisor, so that both answers are tested.
    Template("div", ((2, 99),), "Write f(x) that returns True if x is divisible by {0}.",
             "def f(x):\n    return x % {0} == 0",
             lambda x, a: x % a == 0, lambda a: (0, a, 3 * a, a + 1, 2 * a - 1)),
    Template("fib", ((0, 20), (0, 20)), "Write f(n): f(0)={0}, f(1)={1}, f(n)=f(n-1)+f(n-2).",
             "def f(n):\n    a, b = {0}, {1}\n    for _ in range(n):\n"
             "        a, b = b, a+b\n    return a",
             _fibonacci_like, lambda a, b: (0, 1, 2, 7, 12)),
    Template("gt", ((0, 99),), "Write f(xs) that returns the elements of xs greater than {0}.",
             "def f(xs):\n    return [x for x in xs if x > {0}]",
             lambda xs, a: [x for x in xs if x > a],
             lambda a: ([], [a - 1, a, a + 1], [a + 7, 3, a + 20, 0], [a])),
    Template("powmod", ((2, 9), (2, 99)), "Write f(x) that returns x to the power {0}, modulo {1}.",
             "def f(x):\n    return x**{0} % {1}",
             lambda x, k, m: x**k % m, lambda k, m: (0, 1, 3, 10, 57)),
    Template("mults", ((2, 50),), "Write f(n) that counts the numbers in 1..n divisible by {0}.",
             "def f(n):\n    return n // {0}",
             lambda n, a: n // a, lambda a: (0, 1, a, 3 * a + 1, 100)),
    Template("maxplus", ((0, 99),), "Write f(xs) that returns the largest element of xs plus {0}.",
             "def f(xs):\n    return max(xs)+{0}",
             lambda xs, a: max(xs) + a, lambda a: ([1], [3, -1, 4], [-5, -2], [10, 20, 15])),
    Template("last", ((1, 9),), "Write f(s) that returns the last {0} characters of s.",
             "def f(s):\n    return s[-{0}:]",
             lambda s, k: s[-k:], lambda k: ("", "abc", "hello world", "0123456789xyz")),
    Template("repeat", ((2, 9),), "Write f(s) that returns s repeated {0} times.",
             "def f(s):\n    return s*{0}",
             lambda s, k: s * k, lambda k: ("", "ab", "xyz")),
)
TEMPLATE_BY_NAME = {template.name: template for template in TEMPLATES}


def make_problem(template: Template, constants: tuple[int, ...]) -> Problem:
    """The problem ``template`` poses with ``constants``; its answer is its tests."""
    key = ":".join(["code", template.name, *map(str, constants)])
    return Problem(key=key, prompt=template.prompt.format(*constants),
                   answer=template.tests(constants))


def parse_key(key: str) -> tuple[Template, tuple[int, ...]]:
    """The template and constants behind a key such as ``"code:lin:3:1"``."""
    _, name, *constants = key.split(":")
    return TEMPLATE_BY_NAME[name], tuple(int(c) for c in constants)


class CodeEnv(TextEnv):
    """One function to write per episode; the answer is run against hidden asserts."""

    task = "code"
    budget = 96
    max_turns = 1
    reward_name = "unit_tests"

    def _draw(self) -> Problem:
        template = TEMPLATES[int(self.np_random.integers(len(TEMPLATES)))]
        constants = tuple(int(self.np_random.integers(lo, hi + 1)) for lo, hi in template.ranges)
        return make_problem(template, constants)

    def expert_action(self, rng: np.random.Generator) -> str:
        """A correct solution, e.g. ``"def f(x):\\n    return x*3+1"``."""
        template, constants = parse_key(self._require_active().key)
        return template.solution.format(*constants)

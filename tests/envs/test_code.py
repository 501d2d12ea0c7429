"""Tests particular to the code-writing env ("k2rl/Code-v1").

The checks every env must pass are in test_contract.py.

Its verifier, rewards.code.unit_tests, is tested in tests/rewards/test_code.py.
"""

from __future__ import annotations

import math

import numpy as np

from envs.code import TEMPLATES, CodeEnv, make_problem, parse_key
from rewards.code import unit_tests


def extremes(template) -> list[tuple[int, ...]]:
    """The smallest and largest constants of ``template``: the longest prompts and answers."""
    return [tuple(lo for lo, _ in template.ranges), tuple(hi for _, hi in template.ranges)]


def test_reset_key_names_the_template_and_constants() -> None:
    obs, info = CodeEnv().reset(seed=0)
    template, constants = parse_key(info["prompt_id"])
    assert obs == template.prompt.format(*constants)


def test_templates_make_thousands_of_short_problems() -> None:
    assert len(TEMPLATES) >= 8 and len({t.name for t in TEMPLATES}) == len(TEMPLATES)
    assert sum(math.prod(hi - lo + 1 for lo, hi in t.ranges) for t in TEMPLATES) >= 2000
    for template in TEMPLATES:
        for constants in extremes(template):
            problem = make_problem(template, constants)
            assert len(problem.prompt) <= 80 and 3 <= len(problem.answer) <= 5
            assert len(template.solution.format(*constants)) <= CodeEnv.budget
            assert parse_key(problem.key) == (template, constants)


def test_every_template_solution_passes_its_tests() -> None:
    rng = np.random.default_rng(0)
    problems = [(t, c) for t in TEMPLATES for c in extremes(t)]
    problems += [(t, tuple(int(rng.integers(lo, hi + 1)) for lo, hi in t.ranges))
                 for t in TEMPLATES]
    solutions = [t.solution.format(*c) for t, c in problems]
    answers = [make_problem(t, c).answer for t, c in problems]
    assert unit_tests(solutions, answers) == [1.0] * len(problems)


def test_wrong_solution_scores_zero() -> None:
    env = CodeEnv()
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("def f(x):\n    return None")
    assert (reward, terminated, info["correct"]) == (0.0, True, False)

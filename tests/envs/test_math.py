"""Tests particular to the math env ("k2rl/Math-v2").

The checks every env must pass are in test_contract.py.
"""

from __future__ import annotations

import re

from envs.math import MathEnv


def test_math_scores_equivalent_forms_and_rejects_echoes() -> None:
    env, checked = MathEnv(), set()
    for seed in range(100):
        prompt, _ = env.reset(seed=seed)
        answer = env.problem.answer
        if prompt.startswith("Simplify"):
            # The question restated is equal in value but not simplified.
            assert env.step(prompt.removeprefix("Simplify "))[1] == 0.0
            checked.add("simplify echo")
        elif prompt.startswith("Solve"):
            assert env.step(f"x = {answer}")[1] == 1.0
            checked.add("x=")
        elif "/" in answer:
            numerator, denominator = answer.split("/")
            assert env.step(f"\\frac{{{numerator}}}{{{denominator}}}")[1] == 1.0
            checked.add("frac")
        elif prompt.endswith("=") and "/" not in prompt:
            assert env.step(prompt.removesuffix("="))[1] == 0.0
            checked.add("arithmetic echo")
    assert checked == {"simplify echo", "x=", "frac", "arithmetic echo"}


def test_math_key_sorts_the_operands_of_each_sum_and_product() -> None:
    env, shown = MathEnv(), {"chain": set(), "simplify": set(), "fraction": set()}
    for seed in range(400):
        prompt, info = env.reset(seed=seed)
        key = info["prompt_id"].removeprefix("math:")
        if match := re.fullmatch(r"\((\d)\+(\d)\)\*(\d)=", prompt):
            a, b, c = match.groups()
            assert key == f"({min(a, b)}+{max(a, b)})*{c}="
            shown["chain"].add(a < b)
        elif match := re.fullmatch(r"Simplify (\d)x\+(\d)x(\+\d)?", prompt):
            a, b, c = match.groups()
            assert key == f"Simplify {min(a, b)}x+{max(a, b)}x{c or ''}"
            shown["simplify"].add(a < b)
        elif match := re.fullmatch(r"(\d/\d)\+(\d/\d)=", prompt):
            x, y = match.groups()
            assert key == f"{min(x, y)}+{max(x, y)}="
            shown["fraction"].add(x < y)
        elif prompt.startswith(("Solve", "Half", "Double", "Triple")) or re.fullmatch(
                r"Simplify \dx-\dx(\+\d)?|\d/\d-\d/\d=", prompt):
            assert key == prompt  # nothing commutes: one written form
    assert all(orders == {True, False} for orders in shown.values()), shown

"""Tests particular to the math env ("k2rl/Math-v0").

The checks every env must pass are in test_contract.py.
"""

from __future__ import annotations

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

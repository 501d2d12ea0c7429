"""Tests particular to the calculator env ("k2rl/Calculator-v1").

The checks every env must pass are in test_contract.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.calculator import CalculatorEnv
from tests.envs.helpers import make, run_expert


def test_calculator_tool_then_answer() -> None:
    env = make("k2rl/Calculator-v1")
    obs, _ = env.reset(seed=3)
    a, b = (int(x) for x in obs.removesuffix("=").split("*"))
    obs, reward, terminated, truncated, info = env.step(f"calc({a}*{b})")
    assert (obs, reward, terminated, truncated, info["turn"]) == (str(a * b), 0.0, False, False, 1)
    assert "correct" not in info
    _, reward, terminated, _, info = env.step(obs)
    assert (reward, terminated, info["correct"], info["answer"]) == (1.0, True, True, str(a * b))
    assert [m["role"] for m in env.messages()] == ["user", "assistant", "tool", "assistant"]


def test_calculator_direct_wrong_answer() -> None:
    env = make("k2rl/Calculator-v1")
    obs, _ = env.reset(seed=3)
    a, b = (int(x) for x in obs.removesuffix("=").split("*"))
    _, reward, terminated, _, info = env.step(str(a * b + 1))
    assert (reward, terminated, info["correct"], info["turn"]) == (0.0, True, False, 1)


@pytest.mark.parametrize("expr", ["import os", "__import__('os')", "2**99", "1234567*2",
                                  "1+" * 20 + "1", "-5", "1/2", "0x55", ""])
def test_calculator_tool_error_is_an_observation(expr: str) -> None:
    env = make("k2rl/Calculator-v1")
    env.reset(seed=0)
    obs, reward, terminated, _, _ = env.step(f"calc({expr})")
    assert (obs, reward, terminated) == ("error: bad expression", 0.0, False)


def test_calculator_tool_only_episode_ends_with_zero() -> None:
    env = make("k2rl/Calculator-v1")
    env.reset(seed=0)
    for _ in range(env.max_turns - 1):
        assert not env.step("calc(1+1)")[2]
    _, reward, terminated, truncated, info = env.step("calc(1+1)")
    assert (reward, terminated, truncated, info["correct"]) == (0.0, True, False, False)


def test_expert_without_tool_is_mostly_wrong() -> None:
    env, rng = CalculatorEnv(tool_rate=0.0), np.random.default_rng(0)
    solved = sum(run_expert(env, seed, rng)[0] for seed in range(200))
    assert solved < 0.2 * 200


def test_key_is_the_product_in_either_order() -> None:
    env, orders = make("k2rl/Calculator-v1"), set()
    for seed in range(200):
        obs, info = env.reset(seed=seed)
        a, b = (int(x) for x in obs.removesuffix("=").split("*"))
        orders.add(a < b)
        assert info["prompt_id"] == f"calc:{min(a, b)}*{max(a, b)}"
    assert orders == {True, False}  # both orders are shown

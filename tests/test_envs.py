"""Tests for the k2rl text environments."""

from __future__ import annotations

import doctest

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs.calculator
from envs import K2RL_ENV_IDS, TextEnv, split_of
from envs.arithmetic import ArithmeticEnv
from envs.calculator import CalculatorEnv


def make(env_id: str, **kwargs) -> TextEnv:
    """The raw env, without gymnasium's wrappers."""
    return gymnasium.make(env_id, **kwargs).unwrapped


def run_expert(env: TextEnv, seed: int, rng: np.random.Generator) -> tuple[float, dict]:
    """Play one episode with the demonstrator; the final reward and info."""
    env.reset(seed=seed)
    terminated = False
    while not terminated:
        _, reward, terminated, truncated, info = env.step(env.expert_action(rng))
        assert not truncated
    return reward, info


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_passes_gymnasium_env_checker(env_id: str) -> None:
    check_env(make(env_id), skip_render_check=True)


def test_envs_module_imports_twice() -> None:
    import importlib

    importlib.reload(envs)
    assert set(K2RL_ENV_IDS) <= set(gymnasium.registry)


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_same_seed_same_prompt(env_id: str) -> None:
    env = make(env_id)
    first = env.reset(seed=7)
    env.reset(seed=8)
    assert env.reset(seed=7) == first


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_train_and_eval_are_disjoint(env_id: str) -> None:
    env = make(env_id)
    train = {env.reset(seed=s, options={"split": "train"})[1]["prompt_id"] for s in range(300)}
    held_out = [env.reset(seed=10_000 + s, options={"split": "eval"})[1] for s in range(300)]
    eval_keys = {info["prompt_id"] for info in held_out}
    assert not train & eval_keys
    assert all(split_of(key) == "eval" for key in eval_keys)
    assert all(info["split"] == "eval" for info in held_out)


def test_reset_info() -> None:
    obs, info = make("k2rl/Arithmetic-v0").reset(seed=0)
    a, op, b = obs[:-1].partition("+") if "+" in obs else obs[:-1].partition("-")
    assert obs == f"{a}{op}{b}=" and 0 <= int(a) <= 99 and 0 <= int(b) <= 99
    assert info == {"task": "arithmetic", "budget": 8, "prompt_id": f"arith:{a}{op}{b}",
                    "split": "train", "turn": 0}


def test_unknown_split_raises() -> None:
    with pytest.raises(ValueError, match="split"):
        make("k2rl/Arithmetic-v0").reset(seed=0, options={"split": "test"})


def test_arithmetic_garbage_is_a_wrong_answer() -> None:
    env = make("k2rl/Arithmetic-v0")
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step("\x0bzz(( 3")
    assert (reward, terminated, truncated, info["correct"]) == (0.0, True, False, False)


def test_calculator_tool_then_answer() -> None:
    env = make("k2rl/Calculator-v0")
    obs, _ = env.reset(seed=3)
    a, b = (int(x) for x in obs.removesuffix("=").split("*"))
    obs, reward, terminated, truncated, info = env.step(f"calc({a}*{b})")
    assert (obs, reward, terminated, truncated, info["turn"]) == (str(a * b), 0.0, False, False, 1)
    assert "correct" not in info
    _, reward, terminated, _, info = env.step(obs)
    assert (reward, terminated, info["correct"], info["answer"]) == (1.0, True, True, str(a * b))
    assert [m["role"] for m in env.messages()] == ["user", "assistant", "tool", "assistant"]


def test_calculator_direct_wrong_answer() -> None:
    env = make("k2rl/Calculator-v0")
    obs, _ = env.reset(seed=3)
    a, b = (int(x) for x in obs.removesuffix("=").split("*"))
    _, reward, terminated, _, info = env.step(str(a * b + 1))
    assert (reward, terminated, info["correct"], info["turn"]) == (0.0, True, False, 1)


@pytest.mark.parametrize("expr", ["import os", "__import__('os')", "2**99", "1234567*2",
                                  "1+" * 20 + "1", "-5", "1/2", "0x55", ""])
def test_calculator_tool_error_is_an_observation(expr: str) -> None:
    env = make("k2rl/Calculator-v0")
    env.reset(seed=0)
    obs, reward, terminated, _, _ = env.step(f"calc({expr})")
    assert (obs, reward, terminated) == ("error: bad expression", 0.0, False)


def test_calculator_tool_only_episode_ends_with_zero() -> None:
    env = make("k2rl/Calculator-v0")
    env.reset(seed=0)
    for _ in range(env.max_turns - 1):
        assert not env.step("calc(1+1)")[2]
    _, reward, terminated, truncated, info = env.step("calc(1+1)")
    assert (reward, terminated, truncated, info["correct"]) == (0.0, True, False, False)


def test_calculator_doctests_pass() -> None:
    assert doctest.testmod(envs.calculator).failed == 0


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_stepping_after_termination_raises(env_id: str) -> None:
    env = make(env_id)
    with pytest.raises(RuntimeError, match="reset"):
        env.step("1")
    env.reset(seed=0)
    assert env.step("1")[2]
    with pytest.raises(RuntimeError, match="reset"):
        env.step("1")


def test_expert_solves_arithmetic() -> None:
    env, rng = ArithmeticEnv(), np.random.default_rng(0)
    assert all(run_expert(env, seed, rng)[0] == 1.0 for seed in range(200))


def test_expert_with_tool_solves_calculator() -> None:
    env, rng = CalculatorEnv(tool_rate=1.0), np.random.default_rng(0)
    assert all(run_expert(env, seed, rng)[1]["correct"] for seed in range(200))


def test_expert_without_tool_is_mostly_wrong() -> None:
    env, rng = CalculatorEnv(tool_rate=0.0), np.random.default_rng(0)
    solved = sum(run_expert(env, seed, rng)[0] for seed in range(200))
    assert solved < 0.2 * 200

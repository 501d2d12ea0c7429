"""Helpers shared by the environment tests."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from envs import TextEnv


def make(env_id: str, **kwargs: Any) -> TextEnv:
    """The raw env, without gymnasium's wrappers."""
    env = gymnasium.make(env_id, **kwargs).unwrapped
    assert isinstance(env, TextEnv)
    return env


def run_expert(env: TextEnv, seed: int, rng: np.random.Generator) -> tuple[float, dict, list[str]]:
    """Play one episode with the demonstrator; the final reward, info and actions."""
    env.reset(seed=seed)
    terminated, actions = False, []
    while not terminated:
        actions.append(env.expert_action(rng))
        _, reward, terminated, truncated, info = env.step(actions[-1])
        assert not truncated
    return reward, info, actions

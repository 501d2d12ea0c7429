"""The run's environments as the engine makes them: with their tasks' kwargs from the config.

`make_env(id)` is gymnasium's `make(id, **kwargs)` with the kwargs of the task that names `id`,
the prompt-length guard that `registry.limit_prompts` adds among them (a dataset's tokenizer
and the prompt tokens that fit the engine). Gymnasium's registry keeps each spec as it was
registered; `registry.load_envs(cfg)` sets the kwargs, in the driver and in every worker.
"""
from __future__ import annotations

import gymnasium

_kwargs: dict[str, dict] = {}  # env id -> its task's kwargs, in the config last loaded here


def make_env(env_id: str) -> gymnasium.Env:
    """The environment `env_id` (unwrapped), made with its task's kwargs."""
    return gymnasium.make(env_id, **_kwargs.get(env_id, {})).unwrapped


def task_kwargs(env_id: str) -> dict:
    """The kwargs the run makes `env_id` with (empty where no task gives any)."""
    return dict(_kwargs.get(env_id, {}))


def use_kwargs(kwargs: dict[str, dict]) -> None:
    """Make every later `make_env` use these kwargs (env id -> kwargs), and only these."""
    global _kwargs
    _kwargs = {env_id: dict(given) for env_id, given in kwargs.items()}

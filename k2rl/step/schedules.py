"""Schedules over RL steps: sampling-temperature decay (K2: explore early, exploit late).

`decay(step, start, end, steps, shape)` goes from `start` at step 1 to `end` at step `steps`
and stays there; shapes: constant, linear, cosine, exponential (geometric between the ends).
"""
from __future__ import annotations

import math

SHAPES = ("constant", "linear", "cosine", "exponential")


def decay(step: int, start: float, end: float, steps: int, shape: str) -> float:
    """
    >>> decay(1, 1.0, 0.5, 11, "linear"), decay(6, 1.0, 0.5, 11, "linear"), decay(99, 1.0, 0.5, 11, "linear")
    (1.0, 0.75, 0.5)
    >>> round(decay(6, 1.0, 0.25, 11, "exponential"), 4), decay(6, 1.0, 0.5, 11, "constant")
    (0.5, 1.0)
    """
    if shape == "constant" or steps <= 1:
        return start
    frac = min(1.0, max(0.0, (step - 1) / (steps - 1)))
    if shape == "linear":
        return start + (end - start) * frac
    if shape == "cosine":
        return end + (start - end) * 0.5 * (1 + math.cos(math.pi * frac))
    if shape == "exponential":
        return start * (end / start) ** frac
    raise ValueError(f"unknown schedule shape {shape!r}; choose from {SHAPES}")


def temperature_at(cfg, step: int, env_id: str | None = None) -> float:
    """The sampling temperature of a task at a step: the global schedule (`rollout.*`) or the
    task's own ends (`tasks[].temperature`, `tasks[].temperature_end`)."""
    r = cfg.rollout
    task = next((t for t in cfg.tasks if t.id == env_id), None)
    start = task.temperature if task and task.temperature is not None else r.temperature
    end = task.temperature_end if task and task.temperature_end is not None else r.temperature_end
    if end is None:
        return start
    return decay(step, start, end, r.temperature_steps or cfg.train.steps, r.temperature_shape)

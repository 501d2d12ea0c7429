"""Which prompts a step trains on: the task mix, pass@k difficulty filtering, prioritized sampling.

- Task mix: each prompt's environment is drawn with the configured weights; the env's seed
  fixes the prompt. Deterministic in (train.seed, step).
- Pass@k filter (k1.5, docs/method.md section 7), `rollout.passk_filter = k > 0`: before the
  first step the starting model samples k responses (temperature 1) for each of
  `rollout.filter_pool` candidate prompts; prompts solved always or never are dropped and the
  run trains on the rest. The kept pool is stored in the run state so a resumed run keeps it.
- Prioritized sampling (k1.5), `rollout.prioritized`: candidates (4x the batch) are drawn from
  the mix or the pool and B of them kept with probability ∝ 1 − success rate, the rates kept
  per prompt in Redis. A prompt never tried counts at its task's success rate so far (over
  the verifiable episodes of its environment: generated tasks rarely repeat a prompt, so this
  is what moves the batch away from a task the model has mastered), or 0.5 before any.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

import envs  # noqa: F401  (registers the k2rl environments prompt_key makes)
from k2rl.config import Config, ConfigError
from k2rl.step.group import Group, Request
from k2rl.step.schedules import temperature_at
from k2rl.tasks.make import make_env

UNSEEN_RATE = 0.5
FLOOR = 0.05  # keeps solved prompts reachable, so their rate can fall again


def mix_requests(cfg: Config, rng: np.random.Generator, n: int) -> list[Request]:
    weights = np.array([t.weight for t in cfg.tasks])
    picks = rng.choice(len(cfg.tasks), size=n, p=weights / weights.sum())
    return [Request(cfg.tasks[j].id, int(rng.integers(2**31)), cfg.tasks[j].budget, "train", i)
            for i, j in enumerate(picks)]


def task_key(env_id: str) -> str:
    """The key under which an environment's verifiable outcomes add up (k2rl.controller)."""
    return f"{env_id}|*"


def prompt_key(req: Request) -> str:
    """The stable identity of a request's prompt: env id and the env's canonical problem key."""
    env = make_env(req.env_id)
    _, info = env.reset(seed=req.seed, options={"split": req.split})
    return f"{req.env_id}|{info['prompt_id']}"


def sample_requests(cfg: Config, step: int, pool: list[Request] | None = None,
                    success_rates=None) -> list[Request]:
    """The step's B prompts, each to be sampled `rollout.k` times at its task's temperature of
    this step. `success_rates(keys) -> list[float | None]` enables prioritizing."""
    rng = np.random.default_rng([cfg.train.seed, step])
    b = cfg.rollout.prompts_per_step
    n = 4 * b if cfg.rollout.prioritized else b
    if pool:
        cands = [pool[i] for i in rng.choice(len(pool), size=n, replace=len(pool) < n)]
    else:
        cands = mix_requests(cfg, rng, n)
    if cfg.rollout.prioritized and success_rates is not None:
        rates = success_rates([prompt_key(r) for r in cands])
        tasks = success_rates([task_key(r.env_id) for r in cands])
        cands = prioritized(cands, [t if r is None else r for r, t in zip(rates, tasks)], b, rng)
    return [Request(r.env_id, r.seed, r.budget, "train", i, temperature_at(cfg, step, r.env_id),
                    cfg.rollout.k) for i, r in enumerate(cands[:b])]


def prioritized(cands: list[Request], rates: list[float | None], b: int,
                rng: np.random.Generator) -> list[Request]:
    """B candidates without replacement, with probability ∝ 1 − success rate."""
    w = np.array([max(FLOOR, 1.0 - (UNSEEN_RATE if r is None else r)) for r in rates])
    keep = rng.choice(len(cands), size=min(b, len(cands)), replace=False, p=w / w.sum())
    return [cands[i] for i in keep]


def moderate(groups: list[Group]) -> list[bool]:
    """Per group: solved sometimes but not always (the pass@k filter's keep rule)."""
    solved = [sum(t.correct for t in g) for g in groups]
    return [0 < s < len(g) for s, g in zip(solved, groups)]


def filter_pool(cfg: Config, rollout) -> tuple[list[Request], dict]:
    """Run the pass@k filter with `rollout(requests) -> groups`; returns (pool, stats)."""
    rng = np.random.default_rng([cfg.train.seed, 10**6])
    cands = mix_requests(cfg, rng, cfg.rollout.filter_pool)
    k = cfg.rollout.passk_filter
    keep = moderate(rollout([replace(c, k=k, temperature=1.0) for c in cands]))
    pool = [c for c, ok in zip(cands, keep) if ok]
    stats = {"filter/candidates": len(cands), "filter/kept": len(pool)}
    if not pool:
        raise ConfigError(f"the pass@{k} filter kept none of {len(cands)} prompts: every one was "
                         "always or never solved by the starting model; turn rollout.passk_filter off")
    return pool, stats

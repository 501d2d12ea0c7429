"""The RL loop (DESIGN.md "Data flow of one iteration"), run on the Ray driver.

    for step in 1..steps:
        requests  = sample B prompts from the task mix            (train split only)
        trajs     = worker.rollout(requests, K)                    (vLLM, multi-turn, budgets)
        store     = Redis rollouts stream                          (atomic per step)
        metrics   = worker.train(trajs)                            (Kimi loss, optimizer steps)
        sync      = worker.sync()                                  (weights into vLLM, in place)
        evaluate held-out prompts every N steps; checkpoint every M steps

A crashed run resumes from its last checkpoint: steps whose rollouts are already in Redis are
replayed from there rather than sampled again, so no trajectory is lost or written twice.
With partial rollouts on, paused trajectories (and the finished members of their groups) are
carried in Redis, written in the same transaction as the step's rollouts.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import yaml
from tqdm import tqdm

from k2rl.config import Config, to_dict
from k2rl.model import default_model
from k2rl.rollout import EnvCrash, Request, finished_groups
from k2rl.refresh import harvest, heldout_pairs, store_pairs, training_examples
from k2rl.sampling import filter_pool, sample_requests
from k2rl.schedules import decay
from k2rl.store import RunStore, connect, start_redis
from k2rl.workers import PlacementError, WorkerGroup, concat, gather, mean_metrics


class RunError(RuntimeError):
    """A run failed in a way the user can act on; the message says how."""


def eval_requests(cfg: Config) -> list[Request]:
    """The fixed held-out prompts: the eval split of every task (never trained on)."""
    n = cfg.eval.prompts_per_task
    return [Request(t.id, cfg.eval.seed + i, t.budget, "eval", ti * n + i)
            for ti, t in enumerate(cfg.tasks) for i in range(n)]


def task_metrics(trajs: list[dict], prefix: str) -> dict[str, float]:
    """Mean reward, accuracy, length and truncation rate per task and over all."""
    by_task = defaultdict(list)
    for t in trajs:
        by_task[t["task"]].append(t)
        by_task["all"].append(t)
    out = {}
    for task, ts in by_task.items():
        out[f"{prefix}/{task}/reward"] = float(np.mean([t["reward"] for t in ts]))
        out[f"{prefix}/{task}/accuracy"] = float(np.mean([t["correct"] for t in ts]))
        out[f"{prefix}/{task}/length"] = float(np.mean([t["n_tokens"] for t in ts]))
        out[f"{prefix}/{task}/truncated"] = float(np.mean([t["truncated"] for t in ts]))
    return out


def evaluate(worker: WorkerGroup, cfg: Config) -> dict[str, float]:
    trajs = concat(gather(worker.rollout(eval_requests(cfg), 1, 0, 0.0)))
    return {k: v for k, v in task_metrics(trajs, "heldout").items() if k.endswith("accuracy")}


def train(cfg: Config, run_dir: Path, resume: bool = False) -> dict:
    """Run (or resume) the RL loop; returns the summary that is also written to summary.json."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
    with services(cfg, run_dir) as store:
        state = store.state() if resume else {}
        if resume and not state.get("checkpoint"):
            raise RunError(f"run {run_dir} has no checkpoint to resume from; start it again instead")
        worker = start_worker(cfg, state)
        store.set_state(worker_nodes=worker.nodes)
        try:
            return loop(cfg, run_dir, store, worker, state)
        finally:
            worker.stop()


def loop(cfg: Config, run_dir: Path, store: RunStore, worker, state: dict) -> dict:
    first = state.get("last_step", 0) + 1
    before = state.get("heldout_before") or evaluate(worker, cfg)
    pool = prompt_pool(cfg, store, worker, state)
    if first == 1:
        store.set_state(heldout_before=before, status="running")
        log(run_dir, store, 0, before | {"filter/kept": float(len(pool or []))})
    rates = store.success_rates if cfg.rollout.prioritized else None
    logged = {m["step"] for m in store.metrics()}
    bar = tqdm(range(first, cfg.train.steps + 1), desc="rl", disable=not cfg.log.progress,
               initial=first - 1, total=cfg.train.steps)
    after = None
    for step in bar:
        t0 = time.perf_counter()
        timings = {}
        if store.has_rollouts(step):  # a crashed run replays this step's stored rollouts
            trajs = store.rollouts(step)
        else:
            trajs = new_rollouts(cfg, store, worker, step, pool, rates, run_dir, timings)
        _maybe_inject_failure(step, worker)
        t1 = time.perf_counter()
        rng = np.random.default_rng([cfg.train.seed, step])
        examples = (training_examples(store, cfg.critic.pairs_per_step, rng)
                    if cfg.critic.refresh else None)
        metrics = {}
        if trajs:  # partial rollouts: a step may finish no whole group yet
            metrics = mean_metrics(call(worker.train(trajs, cfg.rollout.k, step, examples),
                                        step, run_dir))
        t2 = time.perf_counter()
        metrics |= mean_metrics(call(worker.sync(), step, run_dir))
        t3 = time.perf_counter()
        metrics |= task_metrics(trajs, "train") if trajs else {}
        if cfg.rollout.partial_budget:
            carry = store.carry()
            metrics |= {"partial/paused": float(sum(t["paused"] for t in carry)),
                        "partial/carried": float(len(carry)),
                        "partial/resumed_trained": float(sum(t["segments"] > 1 for t in trajs))}
        metrics |= {f"temperature/{t.id}": temperature_at(cfg, step, t.id) for t in cfg.tasks}
        metrics |= timings | {"time/reward": sum(t.get("env_seconds", 0.0) for t in trajs),
                              "time/rollout": t1 - t0 - timings.get("time/critic", 0.0),
                              "time/train": t2 - t1, "time/sync": t3 - t2,
                              "time/step": time.perf_counter() - t0}
        if step % cfg.eval.every == 0 or step == cfg.train.steps:
            after = evaluate(worker, cfg)
            metrics |= after | critic_accuracy(worker, cfg, store)
        if step not in logged:
            log(run_dir, store, step, metrics)
        if step % cfg.log.checkpoint_every == 0 or step == cfg.train.steps:
            checkpoint(worker, run_dir, store, step)
        bar.set_postfix(reward=f"{metrics.get('train/all/reward', float('nan')):.2f}",
                        acc=f"{metrics.get('train/all/accuracy', float('nan')):.2f}",
                        s_step=f"{metrics['time/step']:.1f}", refresh=False)
    after = after or evaluate(worker, cfg)  # a resumed run that had nothing left to do
    return summarize(run_dir, store, before, after)


def new_rollouts(cfg: Config, store: RunStore, worker, step: int, pool, rates,
                 run_dir: Path, timings: dict) -> list[dict]:
    """Sample the step's prompts, roll them out, and store what came back before training."""
    requests = sample_requests(cfg, step, pool, rates)
    for req in requests:
        req.temperature = temperature_at(cfg, step, req.env_id)
    partial = cfg.rollout.partial_budget > 0
    carried = store.carry() if partial else []
    paused = [t for t in carried if t["paused"]]
    for t in paused:  # continued at the task's temperature of this step
        t["resume"]["temperature"] = temperature_at(cfg, step, t["env_id"])
    out = concat(call(worker.rollout(requests, cfg.rollout.k, step, cfg.rollout.temperature,
                                     paused, partial), step, run_dir))
    carry = None
    trajs = out
    if partial:  # only groups whose every member finished are scored and trained
        trajs, carry = finished_groups([t for t in carried if not t["paused"]] + out,
                                       cfg.rollout.k)
    if any(t["judged"] for t in trajs):  # critic-rewarded tasks: the policy judges its groups
        t0 = time.perf_counter()
        trajs = concat(call(worker.judge(trajs, cfg.rollout.k), step, run_dir))
        timings["time/critic"] = time.perf_counter() - t0
    store.add_rollouts(step, trajs, carry)
    store.record_outcomes([f"{t['env_id']}|{t['prompt_id']}" for t in trajs],
                          [float(t["correct"]) for t in trajs])
    if cfg.critic.refresh:
        store_pairs(store, harvest(trajs, cfg.rollout.k))
    return trajs


def temperature_at(cfg: Config, step: int, env_id: str | None = None) -> float:
    """The sampling temperature of a task at a step: the global schedule or its per-task ends."""
    r = cfg.rollout
    task = next((t for t in cfg.tasks if t.id == env_id), None)
    start = task.temperature if task and task.temperature is not None else r.temperature
    end = task.temperature_end if task and task.temperature_end is not None else r.temperature_end
    if end is None:
        return start
    return decay(step, start, end, r.temperature_steps or cfg.train.steps, r.temperature_shape)


def prompt_pool(cfg: Config, store: RunStore, worker, state: dict) -> list[Request] | None:
    """The pass@k-filtered prompt pool (None: draw from the whole mix); kept in the run state."""
    if cfg.rollout.passk_filter <= 0:
        return None
    if state.get("pool"):
        return [Request(**r) for r in state["pool"]]
    pool, _ = filter_pool(cfg, lambda reqs, k, temp: concat(gather(worker.rollout(reqs, k, 0, temp))))
    store.set_state(pool=[r.__dict__ for r in pool])
    return pool


def critic_accuracy(worker, cfg: Config, store: RunStore) -> dict[str, float]:
    """The policy as judge on the run's held-out pairs (none yet: nothing to report)."""
    pairs = heldout_pairs(store, cfg.critic.eval_pairs) if cfg.critic.refresh else []
    return gather(worker.critic_eval(pairs))[0] if pairs else {}


def call(refs: list, step: int, run_dir: Path) -> list:
    """The workers' results, with a clear error when an environment crashes or a worker dies."""
    import ray

    try:
        return gather(refs)
    except ray.exceptions.RayTaskError as e:
        if isinstance(getattr(e, "cause", None), EnvCrash):
            raise RunError(f"{e.cause} at step {step}; nothing from this step was stored: fix the "
                           f"environment and resume with `k2rl train --resume {run_dir}`") from None
        raise
    except ray.exceptions.RayActorError as e:
        raise RunError(f"a hybrid worker died at step {step} ({type(e).__name__}); resume with "
                       f"`k2rl train --resume {run_dir}`") from None


def _maybe_inject_failure(step: int, worker: WorkerGroup) -> None:
    """Fault injection for the resume tests, after step N's rollouts are stored:
    K2RL_FAIL_AT_STEP=N crashes the driver; K2RL_KILL_WORKER_AT_STEP=N kills the last worker."""
    if os.environ.get("K2RL_FAIL_AT_STEP") == str(step):
        raise RunError(f"injected failure at step {step} (K2RL_FAIL_AT_STEP)")
    if os.environ.get("K2RL_KILL_WORKER_AT_STEP") == str(step):
        worker.kill(worker.size - 1)


def log(run_dir: Path, store: RunStore, step: int, metrics: dict) -> None:
    with open(run_dir / "metrics.jsonl", "a") as f:
        f.write(json.dumps({"step": step, **metrics}) + "\n")
    store.add_metrics(step, metrics)


def checkpoint(worker, run_dir: Path, store: RunStore, step: int) -> None:
    """Save policy and optimizer; the run state in Redis points at the newest checkpoint."""
    path = gather(worker.save(str(run_dir / "checkpoints" / f"step-{step:05d}"),
                              {"step": step}))[0]
    old = store.state().get("checkpoint")
    store.set_state(last_step=step, checkpoint=path)
    (run_dir / "state.json").write_text(json.dumps(store.state(), indent=1))
    if old and old != path:
        shutil.rmtree(old, ignore_errors=True)


def summarize(run_dir: Path, store: RunStore, before: dict, after: dict) -> dict:
    critic = {m["step"]: m["critic/accuracy"] for m in store.metrics() if "critic/accuracy" in m}
    summary = {"run_dir": str(run_dir), "heldout_before": before, "heldout_after": after,
               "rollouts": store.rollout_count(), "critic_accuracy": critic}
    store.set_state(status="finished", heldout_after=after)
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def start_worker(cfg: Config, state: dict) -> WorkerGroup:
    """The hybrid workers, from the newest checkpoint if resuming, else the starting model."""
    ckpt = state.get("checkpoint")
    model_dir = ckpt or str(default_model(cfg.model, progress=cfg.log.progress))
    opt_state = str(Path(ckpt) / "optimizer.pt") if ckpt else None
    try:
        return WorkerGroup.start(cfg, model_dir, opt_state)
    except PlacementError as e:
        raise RunError(str(e)) from None


@contextmanager
def services(cfg: Config, run_dir: Path):
    """Redis (own server unless redis.url) and Ray (local unless ray.address), stopped on exit."""
    import ray

    server = None if cfg.redis.url else start_redis(run_dir)
    try:
        client = connect(cfg.redis.url or server.url)
        ray.init(address=cfg.ray.address, num_cpus=None if cfg.ray.address else cfg.ray.num_cpus,
                 include_dashboard=False, log_to_driver=True, configure_logging=False,
                 ignore_reinit_error=True)
        try:
            yield RunStore(client, run_dir.name)
        finally:
            ray.shutdown()
    finally:
        if server:
            server.stop()

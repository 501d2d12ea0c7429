"""The RL loop (docs/method.md, the steps listed at its top), run on the Ray driver.

    for step in 1..steps:
        groups  = rollout(sample B prompts, K samples each)   (vLLM, multi-turn, budgets)
        groups  = critic_rank(critic-rewarded groups)           (the policy as critic)
        store   = Redis rollouts, outcomes, critic pairs        (atomic per step)
        metrics = train(groups, critic examples)                (Kimi loss, PTX, critic step)
        sync    = push weights into vLLM                        (in place)
        evaluate held-out prompts every N steps; checkpoint every M steps

A crashed run resumes from its last checkpoint: steps whose rollouts are already in Redis are
replayed from there rather than sampled again, so no trajectory is lost or written twice.
With partial rollouts on, groups with paused members are carried in Redis, written in the same
transaction as the step's rollouts.
"""
from __future__ import annotations

import json
import shutil
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import numpy as np
import redis
import yaml
from tqdm import tqdm

from critic.pairs import Pair
from k2rl import loggers, terminal
from k2rl.bootstrap.model import default_model
from k2rl.config import Config, to_dict
from k2rl.runtime import reaper
from k2rl.runtime.redis_server import connect, start_redis
from k2rl.runtime.store import RunState, RunStore
from k2rl.runtime.worker_group import (PlacementError, WorkerDied, WorkerGroup, WorkerOutOfMemory,
                                       WorkerStartError)
from k2rl.step import heldout
from k2rl.step.group import Group, Request, trajectories
from k2rl.step.reward import add_length_rewards, component_means
from k2rl.step.rollout import EnvCrash
from k2rl.step.sampling import filter_pool, sample_requests, task_key
from k2rl.step.schedules import temperature_at
from k2rl.step.critic_loop import harvest, heldout_pairs, store_pairs, training_pairs
from rewards.chat import flattery

# on_stored(step, workers): called once a step's rollouts are in Redis, before training on them.
OnStored = Callable[[int, WorkerGroup], None]


# Requests a worker rolls out at once in a phase shown under a progress bar (rollout_shown).
PHASE_PART = 128


class RunError(RuntimeError):
    """A run failed in a way the user can act on; the message says how."""


def train(cfg: Config, run_dir: Path, resume: bool = False,
          on_stored: OnStored | None = None) -> dict:
    """Run (or resume) the RL loop; returns the summary that is also written to summary.json."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
    started = time.perf_counter()
    with services(cfg, run_dir) as store, loggers.opened(cfg, run_dir):
        state = store.state() if resume else RunState()
        if resume and not state.checkpoint:
            raise RunError(f"run {run_dir} has no checkpoint to resume from; start it again instead")
        say(cfg, f"k2rl: starting {cfg.ray.num_workers} hybrid worker(s): a vLLM engine and the "
                 "trainer each")
        workers = start_workers(cfg, state)
        say(cfg, f"k2rl: workers ready after {time.perf_counter() - started:.0f} s")
        record_engine(cfg, run_dir, workers.engine_settings())
        store.set_state(worker_nodes=workers.nodes)
        try:
            with reported(run_dir, 0):
                return loop(cfg, run_dir, store, workers, state, on_stored, started)
        finally:
            workers.stop()


def loop(cfg: Config, run_dir: Path, store: RunStore, workers: WorkerGroup, state: RunState,
         on_stored: OnStored | None = None, started: float | None = None) -> dict:
    """The RL steps from the state's next one; `started` (perf_counter) is when the run began,
    for `time/to_first_step`."""
    first = state.last_step + 1
    held = heldout.eval_requests(cfg)  # the same distinct problems at every evaluation
    held += heldout.sampled_requests(cfg, held)  # and the critic-rewarded ones, sampled
    before, samples = state.heldout_before, []
    if not before:
        before, samples = evaluate(workers, held, "held-out evaluation before step 1"
                                   if cfg.log.progress else None)
    if state.critic_heldout is None and heldout.critic_evaluated(cfg):
        greedy = [r for r in held if not r.temperature]
        store.set_state(critic_heldout=draw_critic_heldout(cfg, store, workers, greedy))
    pool = prompt_pool(cfg, store, workers, state)
    if first == 1:
        store.set_state(heldout_before=before, status="running")
        start = before | critic_accuracy(workers, cfg, store)  # the critic before any step
        start["time/to_first_step"] = time.perf_counter() - (started or time.perf_counter())
        say(cfg, f"k2rl: step 1 starts {start['time/to_first_step']:.0f} s after the run did")
        log(run_dir, store, 0, start | {"filter/kept": float(len(pool or []))}, samples)
    logged = {m["step"] for m in store.metrics()}
    after = None
    bar = tqdm(range(first, cfg.train.steps + 1), desc="rl", disable=not cfg.log.progress,
               initial=first - 1, total=cfg.train.steps)
    for step in bar:
        record, samples = StepRecord(), []
        with reported(run_dir, step):
            with record.timed("time/rollout"):
                groups = (store.rollouts(step) if store.has_rollouts(step)  # replay after a crash
                          else new_groups(cfg, store, workers, step, pool, record))
            if on_stored:
                on_stored(step, workers)
            pairs = critic_pairs(cfg, store, step)
            with record.timed("time/train"):
                if groups:  # partial rollouts: a step may finish no whole group yet
                    record.add(workers.train(groups, step, pairs))
            with record.timed("time/sync"):
                record.add(workers.sync())
            record.add(step_metrics(cfg, store, step, groups))
            if step % cfg.eval.every == 0 or step == cfg.train.steps:
                after, samples = evaluate(workers, held, f"held-out evaluation at step {step}"
                                          if cfg.log.progress else None)
                record.add(after | critic_accuracy(workers, cfg, store))
            record.add(memory(store, workers))
            metrics = record.done()
            if step not in logged:
                log(run_dir, store, step, metrics, samples)
            if step % cfg.log.checkpoint_every == 0 or step == cfg.train.steps:
                checkpoint(workers, run_dir, store, step)
        bar.set_postfix(reward=f"{metrics.get('train/all/reward', float('nan')):.2f}",
                        acc=f"{metrics.get('train/all/accuracy', float('nan')):.2f}",
                        s_step=f"{metrics['time/step']:.1f}", refresh=False)
    after = after or evaluate(workers, held)[0]  # a resumed run that had nothing left to do
    return summarize(run_dir, store, before, after)


def new_groups(cfg: Config, store: RunStore, workers: WorkerGroup, step: int,
               pool: list[Request] | None, record: StepRecord) -> list[Group]:
    """The step's finished groups, rewarded and stored before training: rolled out
    (`roll_out`), judged where their task's reward is the critic's, given their length
    rewards, then kept (`keep`)."""
    groups, carry = roll_out(cfg, store, workers, step, pool)
    if any(g.judged for g in groups):  # critic-rewarded tasks: the policy judges its groups
        with record.timed("time/critic"):
            groups = workers.critic_rank(groups)
    if cfg.train.length_reward_weight > 0 and step > cfg.train.length_reward_warmup:
        add_length_rewards(groups, cfg.train.length_reward_weight)
    keep(cfg, store, step, groups, carry)
    return groups


def roll_out(cfg: Config, store: RunStore, workers: WorkerGroup, step: int,
             pool: list[Request] | None) -> tuple[list[Group], list[Group] | None]:
    """Sample the step's prompts and roll them out with the groups paused last step; returns
    the finished groups and, with partial rollouts, those paused again (None without)."""
    rates = store.success_rates if cfg.rollout.prioritized else None
    requests = sample_requests(cfg, step, pool, rates)
    partial = cfg.rollout.partial_budget > 0
    carried = store.carry() if partial else []
    for g in carried:  # paused members go on at their task's temperature of this step
        g.request.temperature = temperature_at(cfg, step, g.request.env_id)
    groups = workers.rollout(requests, step, carried, partial)
    carry = [g for g in groups if g.paused] if partial else None
    return [g for g in groups if not g.paused], carry  # a group is scored once all of it is done


def keep(cfg: Config, store: RunStore, step: int, groups: list[Group],
         carry: list[Group] | None) -> None:
    """Store the step's groups (and the paused ones), their outcomes for prioritised sampling
    and, with the critic's refresh on, their labelled pairs."""
    store.add_rollouts(step, groups, carry)
    trajs = trajectories(groups)
    verifiable = [t for t in trajs if not t.judged]  # a judged task's `correct` is a report
    store.record_outcomes([f"{t.env_id}|{t.prompt_id}" for t in trajs]
                          + [task_key(t.env_id) for t in verifiable],
                          [float(t.correct) for t in trajs + verifiable])
    if heldout.refreshes(cfg):
        store_pairs(store, harvest(groups))


def critic_pairs(cfg: Config, store: RunStore, step: int) -> list[Pair] | None:
    """This step's critic training pairs, drawn from the stored train pairs (None: refresh
    off)."""
    if not heldout.refreshes(cfg):
        return None
    rng = np.random.default_rng([cfg.train.seed, step])
    return training_pairs(store, cfg.critic.pairs_per_step, rng)


class StepRecord:
    """The metrics of one step: `add` merges a dict, `timed(name)` adds the seconds of a block
    (time/rollout excludes time/critic, which runs inside it), `done` adds time/step."""

    def __init__(self):
        self.start = time.perf_counter()
        self.metrics: dict[str, float] = {}

    def add(self, metrics: dict[str, float]) -> None:
        self.metrics |= metrics

    @contextmanager
    def timed(self, name: str):
        start = time.perf_counter()
        yield
        self.metrics[name] = self.metrics.get(name, 0.0) + time.perf_counter() - start

    def done(self) -> dict[str, float]:
        if "time/critic" in self.metrics:
            self.metrics["time/rollout"] -= self.metrics["time/critic"]
        return self.metrics | {"time/step": time.perf_counter() - self.start}


def step_metrics(cfg: Config, store: RunStore, step: int, groups: list[Group]) -> dict:
    """Per-task figures of the trained groups, reward components, partial rollouts, schedules."""
    trajs = trajectories(groups)
    out = task_metrics(groups, "train") if groups else {}
    out |= {f"train/{k}": v for k, v in component_means(groups).items()}
    out["time/reward"] = sum(t.env_seconds for t in trajs)
    if cfg.rollout.partial_budget:
        carry = trajectories(store.carry())
        out |= {"partial/paused": float(sum(t.paused for t in carry)),
                "partial/carried": float(len(carry)),
                "partial/resumed_trained": float(sum(t.segments > 1 for t in trajs))}
    return out | {f"temperature/{t.id}": temperature_at(cfg, step, t.id) for t in cfg.tasks}


def task_metrics(groups: list[Group], prefix: str) -> dict[str, float]:
    """Mean reward, accuracy, length, truncation rate and malformed tool calls (a trajectory's,
    envs.tool_calls) per task and over all; where the verifier reads one final answer, the
    share of replies in which it found one it scores (neither hedged nor negated); for critic-rewarded tasks also the share of
    replies that flatter or vouch for themselves (rewards.chat.flattery: its own patterns,
    not the critic's guards)."""
    by_task = defaultdict(list)
    for t in trajectories(groups):
        by_task[t.task].append(t)
        by_task["all"].append(t)
    out = {}
    for task, ts in by_task.items():
        out[f"{prefix}/{task}/reward"] = float(np.mean([t.reward for t in ts]))
        out[f"{prefix}/{task}/accuracy"] = float(np.mean([t.correct for t in ts]))
        out[f"{prefix}/{task}/length"] = float(np.mean([t.n_tokens for t in ts]))
        out[f"{prefix}/{task}/truncated"] = float(np.mean([t.truncated for t in ts]))
        out[f"{prefix}/{task}/malformed_calls"] = float(np.mean([t.malformed_calls for t in ts]))
        read = [t.extracted for t in ts if t.extracted is not None]
        if read:  # a verifier that reads one final answer: how often it found one it scores
            out[f"{prefix}/{task}/answer_read"] = float(np.mean(
                [bool(x) and not x.startswith(("(hedged)", "(negated)")) for x in read]))
        judged = [t for t in ts if t.judged]
        if judged and task != "all":
            out[f"{prefix}/{task}/flattery"] = float(np.mean(
                [flattery(t.messages[-1]["content"]) for t in judged]))
    return out


def memory(store: RunStore, workers: WorkerGroup) -> dict[str, float]:
    """Resident memory of the driver and of the largest worker, and the data in Redis, in MiB:
    logged every step, so that a leak shows as a slope; and `reward/timeouts`, the verifier
    calls that hit their time limit (scored 0) in the workers since they started."""
    import psutil

    worker, peak = workers.rss_mb()
    return {"mem/driver_rss_mb": psutil.Process().memory_info().rss / 2**20,
            "mem/worker_rss_mb": worker, "mem/worker_peak_rss_mb": peak,
            "mem/redis_used_mb": store.used_mb(),
            "reward/timeouts": float(workers.reward_timeouts())}


def record_engine(cfg: Config, run_dir: Path, settings: dict) -> None:
    """Write the engine's settings to the run folder (engine.json) and name the main ones."""
    (run_dir / "engine.json").write_text(json.dumps(settings, indent=1))
    say(cfg, f"k2rl: engine {settings['dtype']}, {settings['torch_threads']} thread(s) "
             f"(bind {settings['threads_bind']}), KV cache {settings['kv_cache_tokens']} tokens, "
             f"up to {settings['max_num_seqs']} sequences, prefix caching "
             f"{'on' if settings['prefix_caching'] else 'off'}; on {settings['cpu']} "
             f"({settings['cores']} cores{', bf16' if settings['cpu_bf16'] else ''}): "
             f"engine.json")


def say(cfg: Config, line: str) -> None:
    """One line on the terminal about a phase of the run (with log.progress)."""
    if cfg.log.progress:
        tqdm.write(line)


def rollout_shown(workers: WorkerGroup, requests: list[Request], desc: str | None
                  ) -> list[Group]:
    """`workers.rollout` of requests outside the training steps, under a progress bar named
    `desc` (None: no bar, one call): on a real model such a phase takes minutes."""
    if desc is None:
        return workers.rollout(requests, 0)
    groups = []
    with tqdm(total=len(requests), desc=desc, unit="prompt", leave=False) as bar:
        for i in range(0, len(requests), PHASE_PART * workers.size):
            part = requests[i:i + PHASE_PART * workers.size]
            groups += workers.rollout(part, 0)
            bar.update(len(part))
    return groups


def evaluate(workers: WorkerGroup, requests: list[Request], desc: str | None = None
             ) -> tuple[dict[str, float], list[Group]]:
    """Greedy held-out accuracy per task over the run's distinct eval problems, with n, and
    that of the sampled requests (k2rl.step.heldout.sampled_requests) as
    `heldout/<task>/sampled_accuracy`; and the greedy held-out groups (a few are logged as
    samples with the step's metrics). `desc` names its progress bar."""
    groups = rollout_shown(workers, requests, desc)
    greedy = [g for g in groups if not g.request.temperature]
    accuracy = {k: v for k, v in task_metrics(greedy, "heldout").items()
                if k.endswith(("accuracy", "flattery"))}
    sampled = task_metrics([g for g in groups if g.request.temperature], "heldout")
    accuracy |= {f"{k.rsplit('/', 1)[0]}/sampled_{k.rsplit('/', 1)[1]}": v
                 for k, v in sampled.items()
                 if k.endswith(("/accuracy", "/flattery")) and not k.startswith("heldout/all/")}
    return accuracy | heldout.counts(greedy), greedy


def draw_critic_heldout(cfg: Config, store: RunStore, workers: WorkerGroup,
                        held: list[Request]) -> int:
    """The critic's held-out pairs, drawn once before the first step (k2rl.step.heldout): from
    eval-split rollouts of the verifiable tasks, and made by the critic-rewarded tasks' envs."""
    requests = heldout.critic_requests(cfg, held)
    groups = rollout_shown(workers, requests, "the critic's held-out pairs: sampling"
                           if cfg.log.progress else None)
    pairs = heldout.critic_pairs(groups, cfg.critic.eval_pairs) + heldout.judged_pairs(requests)
    return store_pairs(store, pairs, "heldout")


def critic_accuracy(workers: WorkerGroup, cfg: Config, store: RunStore) -> dict[str, float]:
    """The policy as critic on the run's held-out pairs (none drawn: nothing to report)."""
    pairs = heldout_pairs(store, cfg.critic.eval_pairs)
    if not pairs:
        return {}
    prompts = len({(p.task, p.prompt) for p in pairs})
    return workers.critic_eval(pairs) | {"critic/prompts": float(prompts)}


def prompt_pool(cfg: Config, store: RunStore, workers: WorkerGroup, state: RunState
                ) -> list[Request] | None:
    """The pass@k-filtered prompt pool (None: draw from the whole mix); kept in the run state."""
    if cfg.rollout.passk_filter <= 0:
        return None
    if state.pool:
        return state.pool
    pool, _ = filter_pool(cfg, lambda requests: workers.rollout(requests, 0))
    store.set_state(pool=pool)
    return pool


@contextmanager
def reported(run_dir: Path, step: int):
    """An environment's crash, a worker's death or a lost Redis as one sentence that says how
    to go on."""
    try:
        yield
    except (redis.ConnectionError, redis.TimeoutError) as e:
        raise RunError(f"the run lost its Redis at step {step} ({type(e).__name__}: {e}); "
                       "everything stored before is in its append-only file: resume with "
                       f"`k2rl train --resume {run_dir}`") from None
    except EnvCrash as e:
        raise RunError(f"{e} at step {step}; nothing from this step was stored: fix the "
                       f"environment and resume with `k2rl train --resume {run_dir}`") from None
    except WorkerOutOfMemory:
        raise RunError(f"a hybrid worker ran out of memory at step {step} (Ray's memory monitor "
                       "killed it): lower train.micro_batch_tokens, set "
                       "train.gradient_checkpointing=true or lower engine.kv_cache_gib, then "
                       f"resume with `k2rl train --resume {run_dir}` (nothing stored is lost)"
                       ) from None
    except WorkerDied as e:
        raise RunError(f"a hybrid worker died at step {step} ({e}); resume with "
                       f"`k2rl train --resume {run_dir}`") from None


def log(run_dir: Path, store: RunStore, step: int, metrics: dict,
        samples: list[Group] = ()) -> None:
    """metrics.jsonl, the run's Redis stream and the log.backends (TensorBoard, W&B), under the
    same names, with a few of `samples` (held-out groups) as text or a table (k2rl.loggers);
    all of `samples` are stored as the step's held-out answers (`k2rl rollouts --heldout`)."""
    if samples:
        store.add_heldout(step, samples)
    loggers.current(run_dir).log(step, metrics, store, samples)


def checkpoint(workers: WorkerGroup, run_dir: Path, store: RunStore, step: int) -> None:
    """Save policy and optimizer; the run state in Redis points at the newest checkpoint."""
    path = workers.save(str(run_dir / "checkpoints" / f"step-{step:05d}"), {"step": step})
    old = store.state().checkpoint
    store.set_state(last_step=step, checkpoint=path)
    (run_dir / "state.json").write_text(json.dumps(store.state().to_dict(), indent=1))
    if old and old != path:
        shutil.rmtree(old, ignore_errors=True)


def summarize(run_dir: Path, store: RunStore, before: dict, after: dict) -> dict:
    metrics = store.metrics()
    critic = {m["step"]: m["critic/accuracy"] for m in metrics if "critic/accuracy" in m}
    summary = {"run_dir": str(run_dir), "heldout_before": before, "heldout_after": after,
               "rollouts": store.rollout_count(), "critic_accuracy": critic}
    if critic:
        summary["critic_n"] = int(next(m["critic/n"] for m in metrics if "critic/n" in m))
        evals = [m for m in metrics if "critic/accuracy" in m]
        tasks = {k.split("/")[1] for k in evals[-1]
                 if k.startswith("critic/") and k.count("/") == 2 and k.endswith("/n")}
        summary["critic_by_task"] = {t: {
            "first": evals[0].get(f"critic/{t}/accuracy", float("nan")),
            "last": evals[-1][f"critic/{t}/accuracy"],
            "consistency": evals[-1].get(f"critic/{t}/swap_consistency", float("nan")),
            "n": evals[-1][f"critic/{t}/n"]} for t in tasks}
    store.set_state(status="finished", heldout_after=after)
    (run_dir / "state.json").write_text(json.dumps(store.state().to_dict(), indent=1))
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def start_workers(cfg: Config, state: RunState) -> WorkerGroup:
    """The hybrid workers, from the newest checkpoint if resuming, else the starting model."""
    ckpt = state.checkpoint
    model_dir = ckpt or str(default_model(cfg.model, progress=cfg.log.progress))
    opt_state = str(Path(ckpt) / "optimizer.pt") if ckpt else None
    try:
        return WorkerGroup.start(cfg, model_dir, opt_state)
    except (PlacementError, WorkerStartError) as e:
        raise RunError(str(e)) from None


@contextmanager
def services(cfg: Config, run_dir: Path):
    """Redis (own server unless redis.url) and Ray (local unless ray.address), stopped on exit;
    if this process is killed instead, its reaper stops them (k2rl.runtime.reaper)."""
    import ray

    reaper.watch()
    server = None if cfg.redis.url else start_redis(run_dir)
    try:
        client = connect(cfg.redis.url or server.url)
        # "local": a new Ray instance of this run's own, never one another run on this machine
        # started (without it, a second run or the tests could join the first run's cluster).
        # Ray's task events (the dashboard's task view, off here) grew the worker by about 22 KB
        # and the GCS by 15 KB a step: bench/archive/results/soak.json, soak_1500_no_task_events.
        local = {} if cfg.ray.address else {
            "_system_config": {"task_events_report_interval_ms": 0}}
        ray.init(address=cfg.ray.address or "local",
                 num_cpus=None if cfg.ray.address else cfg.ray.num_cpus,
                 include_dashboard=False, configure_logging=False, ignore_reinit_error=True,
                 **local, **terminal.ray_logging(cfg, run_dir))  # workers' output: see terminal
        try:
            yield RunStore(client, run_dir.name, run_dir, cfg.redis.keep_steps)
        finally:
            ray.shutdown()
    finally:
        if server:
            server.stop()

"""N hybrid workers as one: Ray actors in a placement group, work split, results merged.

A WorkerGroup has the methods of a k2rl.runtime.hybrid.HybridWorker (`WORKER_API`), with the same
signatures and return values, so the controller drives one worker or many the same way.
One bundle per worker (`ray.cpus_per_worker` CPUs, plus a GPU on `ray.device: cuda`), placed
with `ray.placement_strategy`. Requests go round-robin to the workers, carried groups to the
worker of their index; training and judging get whole groups per worker, and training is
data-parallel (k2rl.device.distributed), so every worker ends each update with the same weights; each
then loads them into its own engine. Checkpoints and the critic's evaluation run on rank 0.
Each call waits for every worker and fails fast when any one dies (the others would otherwise
wait in a collective): an environment's crash comes back as its EnvCrash, a dead worker as
WorkerDied.
"""
from __future__ import annotations

import os

import numpy as np

from critic.pairs import Pair
from k2rl.config import Config
from k2rl.runtime.hybrid import HybridWorker
from k2rl.step.group import Group, Request
from k2rl.step.rollout import EnvCrash

PLACEMENT_TIMEOUT_S = 120


class PlacementError(RuntimeError):
    """The cluster has no room for the workers' placement group."""


class WorkerStartError(RuntimeError):
    """A hybrid worker failed to start (its model, engine or trainer); the message says why."""


class WorkerDied(RuntimeError):
    """A hybrid worker's process died (or was killed) during a call; the message is Ray's
    error type, `report` Ray's whole account of it."""

    def __init__(self, kind: str, report: str = ""):
        super().__init__(kind)
        self.report = report


class WorkerOutOfMemory(WorkerDied):
    """Ray's memory monitor killed a hybrid worker (the machine ran out of memory)."""


def died(e: Exception) -> WorkerDied:
    """A worker's death as WorkerDied, or WorkerOutOfMemory where memory killed it."""
    import ray

    oom = isinstance(e, ray.exceptions.OutOfMemoryError) or "memory" in str(e).lower() and (
        "killed" in str(e).lower())
    return (WorkerOutOfMemory if oom else WorkerDied)(type(e).__name__, str(e))


class WorkerGroup:
    def __init__(self, actors: list, placement=None, nodes: list[str] = ()):
        self.actors = actors
        self.placement = placement
        self.nodes = list(nodes)  # Ray node id of each worker's bundle

    @property
    def size(self) -> int:
        return len(self.actors)

    @classmethod
    def start(cls, cfg: Config, model_dir: str, optimizer_state: str | None) -> WorkerGroup:
        import ray
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        n, r = cfg.ray.num_workers, cfg.ray
        bundle = {"CPU": r.cpus_per_worker} | ({"GPU": 1} if r.device == "cuda" else {})
        pg = placement_group([dict(bundle) for _ in range(n)], strategy=r.placement_strategy)
        ready, _ = ray.wait([pg.ready()], timeout=PLACEMENT_TIMEOUT_S)
        if not ready:
            ray.util.remove_placement_group(pg)
            raise PlacementError(
                f"cannot place {n} worker(s) of {bundle} with strategy {r.placement_strategy}: "
                f"the cluster has {ray.cluster_resources()} in total; lower ray.num_workers or "
                f"ray.cpus_per_worker, or add nodes")
        env = {"OMP_NUM_THREADS": str(cfg.engine.threads), "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
               "TOKENIZERS_PARALLELISM": "false",
               "VLLM_LOGGING_LEVEL": os.environ.get("VLLM_LOGGING_LEVEL", "ERROR")}
        actors = [ray.remote(HybridWorker).options(
            num_cpus=r.cpus_per_worker, num_gpus=1 if r.device == "cuda" else 0,
            runtime_env={"env_vars": env},
            scheduling_strategy=PlacementGroupSchedulingStrategy(pg, placement_group_bundle_index=i),
        ).remote(model_dir, cfg, optimizer_state, i, n) for i in range(n)]
        table = ray.util.placement_group_table(pg).get("bundles_to_node_id", {})
        group = cls(actors, pg, [table.get(i, "") for i in range(n)])
        try:  # a worker that cannot start (say, a model its engine cannot run) says so here
            gather([a.param_count.remote() for a in actors])
        except WorkerDied as e:
            group.stop()
            raise WorkerStartError(f"the hybrid workers could not start on model {model_dir}: "
                                   f"{last_error_line(e.report) or e}") from None
        if n > 1:
            address = gather([actors[0].address.remote()])[0]
            gather([a.join.remote(address) for a in actors])
        return group

    # ---- WORKER_API: work split across workers

    def rollout(self, requests: list[Request], step: int, carried: list[Group] = (),
                partial: bool = False) -> list[Group]:
        n = self.size
        shards = split(requests, n)
        waiting = [[g for g in carried if g.request.group % n == i] for i in range(n)]
        return concat(gather([a.rollout.remote(s, step, c, partial)
                              for a, s, c in zip(self.actors, shards, waiting)]))

    def critic_rank(self, groups: list[Group]) -> list[Group]:
        return concat(gather([a.critic_rank.remote(s)
                              for a, s in zip(self.actors, split(groups, self.size))]))

    def train(self, groups: list[Group], step: int, critic_pairs: list[Pair] | None = None
              ) -> dict:
        pairs = (split(critic_pairs, self.size) if critic_pairs
                 else [None] * self.size)
        return mean_metrics(gather([a.train.remote(s, step, e) for a, s, e in
                                    zip(self.actors, split(groups, self.size), pairs)]))

    def sync(self) -> dict:
        return mean_metrics(gather([a.sync.remote() for a in self.actors]))

    # ---- WORKER_API: rank 0 only

    def critic_eval(self, pairs: list[Pair]) -> dict:
        return gather([self.actors[0].critic_eval.remote(pairs)])[0]

    def save(self, path: str, extra: dict | None = None) -> str:
        return gather([self.actors[0].save.remote(path, extra)])[0]

    def param_count(self) -> int:
        return gather([self.actors[0].param_count.remote()])[0]

    def engine_settings(self) -> dict:
        """Rank 0's engine settings (every worker starts its engine with the same)."""
        return gather([self.actors[0].engine_settings.remote()])[0]

    # ---- WORKER_API: the largest over workers

    def rss_mb(self) -> tuple[float, float]:
        """The largest resident memory of the workers, and the largest peak so far, in MiB:
        the one that runs out first."""
        now, peak = zip(*gather([a.rss_mb.remote() for a in self.actors]))
        return max(now), max(peak)

    def reward_timeouts(self) -> int:
        """Verifier calls that timed out (and scored 0) in all workers since they started."""
        return sum(gather([a.reward_timeouts.remote() for a in self.actors]))

    def stop(self) -> None:
        import ray

        for a in self.actors:
            ray.kill(a, no_restart=True)
        if self.placement is not None:
            ray.util.remove_placement_group(self.placement)


def last_error_line(report: str) -> str:
    """The last "SomeError: message" line of Ray's report of a failure."""
    lines = [x.strip() for x in report.splitlines() if "Error" in x and ":" in x]
    return lines[-1] if lines else report.strip().splitlines()[-1] if report.strip() else ""


def split(items: list, n: int) -> list[list]:
    return [items[i::n] for i in range(n)]


def gather(refs: list) -> list:
    """ray.get of all refs, raising as soon as any one fails (not after the rest finish)."""
    import ray

    pending = list(refs)
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            ray.get(ready[0])  # raises the worker's error or its death right away
    except ray.exceptions.RayTaskError as e:
        if isinstance(getattr(e, "cause", None), EnvCrash):
            raise e.cause from None
        raise
    except (ray.exceptions.RayActorError, ray.exceptions.OutOfMemoryError) as e:
        raise died(e) from None
    return ray.get(list(refs))


def concat(results: list[list]) -> list:
    return [x for r in results for x in r]


def mean_metrics(results: list[dict]) -> dict[str, float]:
    """Per-key mean over workers (equal across workers for the global loss)."""
    keys = {k for r in results for k in r}
    return {k: float(np.mean([r[k] for r in results if k in r])) for k in sorted(keys)}

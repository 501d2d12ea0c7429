"""N hybrid workers as one group: Ray actors in a placement group, work split, results merged.

One bundle per worker (`ray.cpus_per_worker` CPUs, plus a GPU on `ray.device: cuda`), placed
with `ray.placement_strategy`. Rollout requests go round-robin to the workers; training gets
whole groups per worker and is data-parallel (k2rl.distributed), so every worker ends each
update with the same weights; each then loads them into its own engine. Checkpoints and the
critic's evaluation run on rank 0. Methods return Ray object refs; `gather` waits for them and
fails fast when any worker dies (the others would otherwise wait in a collective).
"""
from __future__ import annotations

import os

import numpy as np

from k2rl.config import Config
from k2rl.rollout import Request

PLACEMENT_TIMEOUT_S = 120


class PlacementError(RuntimeError):
    """The cluster has no room for the workers' placement group."""


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

        from k2rl.worker import HybridWorker

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
        env = {"OMP_NUM_THREADS": str(cfg.rollout.threads), "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
               "TOKENIZERS_PARALLELISM": "false",
               "VLLM_LOGGING_LEVEL": os.environ.get("VLLM_LOGGING_LEVEL", "ERROR")}
        actors = [ray.remote(HybridWorker).options(
            num_cpus=r.cpus_per_worker, num_gpus=1 if r.device == "cuda" else 0,
            runtime_env={"env_vars": env},
            scheduling_strategy=PlacementGroupSchedulingStrategy(pg, placement_group_bundle_index=i),
        ).remote(model_dir, cfg, optimizer_state, i, n) for i in range(n)]
        table = ray.util.placement_group_table(pg).get("bundles_to_node_id", {})
        group = cls(actors, pg, [table.get(i, "") for i in range(n)])
        if n > 1:
            address = gather([actors[0].address.remote()])[0]
            gather([a.join.remote(address) for a in actors])
        return group

    # ---- work, split across workers

    def rollout(self, requests: list[Request], k: int, step: int, temperature: float,
                resumed: list[dict] = (), partial: bool = False) -> list:
        n = self.size
        shards = [requests[i::n] for i in range(n)]
        carried = [[t for t in resumed if t["group"] % n == i] for i in range(n)]
        return [a.rollout.remote(s, k, step, temperature, c, partial)
                for a, s, c in zip(self.actors, shards, carried)]

    def train(self, trajs: list[dict], k: int, step: int, critic_examples=None) -> list:
        groups = [trajs[i:i + k] for i in range(0, len(trajs), k)]
        shards = [[t for g in groups[i::self.size] for t in g] for i in range(self.size)]
        examples = split(critic_examples or [], self.size) if critic_examples else [None] * self.size
        return [a.train.remote(s, step, e) for a, s, e in zip(self.actors, shards, examples)]

    def judge(self, trajs: list[dict], k: int) -> list:
        """Critic rewards for judged groups, the groups split across workers."""
        groups = [trajs[i:i + k] for i in range(0, len(trajs), k)]
        return [a.judge.remote([t for g in groups[i::self.size] for t in g], k)
                for i, a in enumerate(self.actors)]

    def sync(self) -> list:
        return [a.sync.remote() for a in self.actors]

    # ---- rank 0 only

    def save(self, path: str, extra: dict) -> list:
        return [self.actors[0].save.remote(path, extra)]

    def critic_eval(self, pairs: list[dict]) -> list:
        return [self.actors[0].critic_eval.remote(pairs)]

    def call(self, method: str, *args) -> list:
        """Any other worker method, on every worker."""
        return [getattr(a, method).remote(*args) for a in self.actors]

    def kill(self, rank: int) -> None:
        import ray

        ray.kill(self.actors[rank], no_restart=True)

    def stop(self) -> None:
        import ray

        for a in self.actors:
            ray.kill(a, no_restart=True)
        if self.placement is not None:
            ray.util.remove_placement_group(self.placement)


def split(items: list, n: int) -> list[list]:
    return [items[i::n] for i in range(n)]


def gather(refs: list) -> list:
    """ray.get of all refs, raising as soon as any one fails (not after the rest finish)."""
    import ray

    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        ray.get(ready[0])  # raises the worker's error or its death right away
    return ray.get(list(refs))


def concat(results: list[list]) -> list:
    return [x for r in results for x in r]


def mean_metrics(results: list[dict]) -> dict[str, float]:
    """Per-key mean over workers (equal across workers for the global loss)."""
    keys = {k for r in results for k in r}
    return {k: float(np.mean([r[k] for r in results if k in r])) for k in sorted(keys)}

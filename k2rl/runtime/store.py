"""Durable run state: Redis for what a run reads back, per-step files for what it has done.

A training run keeps everything it must not lose (rollouts, held-out answers, metrics, the run
state, critic pairs, per-prompt success statistics) in Redis, so that a crash or a restart
resumes from what was written instead of from scratch. `RunStore` puts all keys of one run
under the prefix ``k2rl:{run_id}:``. Every value is JSON; this is the one place where groups and
trajectories (k2rl.step.group) and critic pairs (critic.pairs.Pair) become dicts.

Trajectories are the bulk (kilobytes each), so Redis holds only the newest `keep_steps` steps
of them, one list per step (`rollouts:<step>`, `heldout:<step>` for an evaluation's answers):
reading a step reads that step only. Older steps move to ``RUN_DIR/rollouts/step-NNNNN.jsonl.gz``
(``RUN_DIR/heldout/`` for evaluations), one group per line, written to a temporary file, fsynced
and renamed before the step leaves Redis, so a step is always in one place or both and a crash
at any point loses nothing. Readers look in Redis first, then in the file.

The server itself (start, stop, connect) is k2rl.runtime.redis_server.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from critic.pairs import Pair
from k2rl.step.group import Group, Request

_READ_PAGE = 1000  # stream entries per XRANGE call, so huge streams never come back in one reply
_SPLITS = ("train", "heldout")
KINDS = ("rollouts", "heldout")  # per-step trajectory logs: training groups, evaluation answers
_STEPS = {"rollouts": "rollout_steps", "heldout": "heldout_steps"}  # hash: step -> trajectories
_IN_REDIS = "in_redis"  # sorted set of "<kind>:<step>" still held in Redis, scored by step


class StaleRunError(RuntimeError):
    """The run's stored rollouts were written in a layout this k2rl does not read."""


@dataclass
class RunState:
    """Where a run stands: the Redis hash ``state`` (one JSON value per field), copied to
    RUN_DIR/state.json at each checkpoint and at the end. Resume reads it back."""
    status: str = "starting"  # "running" from the held-out evaluation before step 1, "finished"
    last_step: int = 0  # the step of the newest checkpoint (0: none yet)
    checkpoint: str | None = None  # folder of the newest checkpoint
    worker_nodes: list[str] = field(default_factory=list)  # Ray node id of each worker
    heldout_before: dict[str, float] | None = None  # held-out metrics before step 1
    heldout_after: dict[str, float] | None = None  # held-out metrics at the end
    critic_heldout: int | None = None  # critic held-out pairs drawn (None: not drawn yet)
    pool: list[Request] | None = None  # the pass@k-filtered prompts (None: not filtered)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> RunState:
        """From stored fields: one that is missing (a run written by an earlier k2rl) takes its
        default, one this k2rl does not know (a later k2rl's) is left out."""
        known = {f.name for f in dataclasses.fields(cls)}
        kept = {name: value for name, value in d.items() if name in known}
        if kept.get("pool") is not None:
            kept["pool"] = [Request(**r) for r in kept["pool"]]
        return cls(**kept)


class RunStore:
    """All durable state of one run, under the key prefix ``k2rl:{run_id}:``.

    `folder` is the run folder, where steps older than `keep_steps` live as files (None: no
    files; every step stays in Redis). `keep_steps` None: this store only reads (k2rl.viewer),
    and moves no step out of Redis.
    """

    def __init__(self, client: redis.Redis, run_id: str, folder: Path | None = None,
                 keep_steps: int | None = None) -> None:
        if not run_id:
            raise ValueError("run_id must be a non-empty string")
        # Every reader below parses str; a bytes client would fail far from here.
        if not client.get_connection_kwargs().get("decode_responses"):
            raise ValueError("RunStore needs a client with decode_responses=True (use connect())")
        if keep_steps is not None and (folder is None or keep_steps < 1):
            raise ValueError("keep_steps needs a run folder to move older steps to and must be "
                             f">= 1, got {keep_steps} with folder {folder}")
        self.client = client
        self.run_id = run_id
        self.prefix = f"k2rl:{run_id}:"
        self.folder = None if folder is None else Path(folder)
        self.keep_steps = keep_steps

    def key(self, name: str) -> str:
        return self.prefix + name

    # -- rollouts (groups; dicts only here, at the Redis edge)

    def add_rollouts(self, step: int, groups: list[Group], carry: list[Group] | None = None
                     ) -> int:
        """Write the finished groups of `step` in one transaction; returns the number of
        trajectories written, 0 if the step was already written.

        `carry` (partial rollouts: groups with paused members) replaces the carried set in the
        same transaction, so a crash never loses or duplicates a trajectory. Steps older than
        `keep_steps` then move to files.
        """
        extra = None if carry is None else (
            lambda pipe: pipe.set(self.key("carry"), json.dumps([g.to_dict() for g in carry])))
        count = self._add_step("rollouts", step, groups, extra)
        self.archive(step)
        return count

    def rollouts(self, step: int | None = None) -> list[Group]:
        """Groups in write order: all of them, or those of one step (which reads only that
        step)."""
        steps = self.steps("rollouts") if step is None else [step]
        legacy = self._legacy_rollouts() if self.client.exists(self.key("rollouts")) else {}
        return [self._group(d) for s in steps
                for d in (self._read_step("rollouts", s) or legacy.get(s, []))]

    def has_rollouts(self, step: int) -> bool:
        """Whether `step` was written (possibly with no groups)."""
        return bool(self.client.hexists(self.key("rollout_steps"), str(step)))

    def carry(self) -> list[Group]:
        """Groups carried to the next step by partial rollouts (some member still paused)."""
        raw = self.client.get(self.key("carry"))
        return [self._group(g) for g in json.loads(raw)] if raw else []

    def rollout_count(self) -> int:
        """Trajectories written, over all steps."""
        return int(sum(float(n) for n in self.client.hvals(self.key("rollout_steps"))))

    # -- held-out answers: the greedy groups of each evaluation

    def add_heldout(self, step: int, groups: list[Group]) -> int:
        """Store the answers of the evaluation at `step` (0: before training); the first
        evaluation stored for a step stays, as its metrics do. Returns trajectories written."""
        count = self._add_step("heldout", step, groups)
        self.archive(step)
        return count

    def heldout(self, step: int) -> list[Group]:
        """The answers of the evaluation at `step` (empty: none stored)."""
        return [self._group(d) for d in self._read_step("heldout", step)]

    def steps(self, kind: str = "rollouts") -> list[int]:
        """The steps with stored rollouts (or, kind "heldout", evaluations), ascending."""
        return sorted(int(s) for s in self.client.hkeys(self.key(_STEPS[kind])))

    # -- where a step lives: Redis (the newest keep_steps) or its file

    def step_file(self, kind: str, step: int) -> Path | None:
        """The file a step of `kind` moves to once it is older than keep_steps."""
        return None if self.folder is None else self.folder / kind / f"step-{step:05d}.jsonl.gz"

    def archive(self, newest: int) -> int:
        """Move every step older than the newest `keep_steps` (up to `newest`) from Redis to its
        file: the file is complete on disk before the step's key is deleted, so a crash in
        between leaves both (the next call finishes the move). Returns steps moved."""
        if self.keep_steps is None:
            return 0
        names = self.client.zrangebyscore(self.key(_IN_REDIS), "-inf", newest - self.keep_steps)
        for name in names:
            kind, step = name.split(":")
            write_lines(self.step_file(kind, int(step)),
                        self.client.lrange(self.key(name), 0, -1))
            pipe = self.client.pipeline(transaction=True)
            pipe.delete(self.key(name))
            pipe.zrem(self.key(_IN_REDIS), name)
            pipe.execute()
        return len(names)

    def _add_step(self, kind: str, step: int, groups: list[Group], extra=None) -> int:
        entries = [_entry(step, group) for group in groups]
        count = sum(len(g) for g in groups)
        steps, name = self.key(_STEPS[kind]), f"{kind}:{step}"

        def write(pipe: redis.client.Pipeline) -> int:
            # WATCH makes a concurrent writer of the same step abort our EXEC;
            # the retry then sees the step and writes nothing.
            if pipe.hexists(steps, str(step)):
                return 0
            pipe.multi()
            if entries:
                pipe.rpush(self.key(name), *entries)
                pipe.zadd(self.key(_IN_REDIS), {name: step})
            pipe.hset(steps, str(step), count)
            if extra is not None:
                extra(pipe)
            return count

        return self.client.transaction(write, steps, value_from_callable=True)

    def _read_step(self, kind: str, step: int) -> list[dict]:
        """A step's group dicts from Redis, else from its file (moved there first, deleted
        from Redis after: one of the two always has it)."""
        raw = self.client.lrange(self.key(f"{kind}:{step}"), 0, -1)
        if not raw:
            path = self.step_file(kind, step)
            raw = read_lines(path) if path is not None and path.exists() else []
        return [json.loads(line) for line in raw]

    def _legacy_rollouts(self) -> dict[int, list[dict]]:
        """Group dicts by step from the one `rollouts` stream of runs written before per-step
        keys (read, resumed, never moved to files)."""
        out: dict[int, list[dict]] = {}
        for fields in self._read_stream("rollouts"):
            out.setdefault(int(fields["step"]), []).append(json.loads(fields["data"]))
        return out

    # -- metrics

    def add_metrics(self, step: int, metrics: dict[str, float]) -> None:
        if "step" in metrics and metrics["step"] != step:
            raise ValueError(f"metrics carry step={metrics['step']!r} but step={step}")
        self.client.xadd(self.key("metrics"), {"step": step, "data": json.dumps(metrics)})

    def metrics(self) -> list[dict]:
        """One dict per add_metrics call, in order: the metrics plus "step"."""
        return [
            {**json.loads(fields["data"]), "step": int(fields["step"])}
            for fields in self._read_stream("metrics")
        ]

    def used_mb(self) -> float:
        """The Redis server's own count of the memory its data takes (INFO memory
        used_memory), in MiB: every run on the server, not only this one."""
        return self.client.info("memory")["used_memory"] / 2**20

    # -- run state

    def set_state(self, **changes: Any) -> None:
        """Update some fields of the run state, named as in `RunState` (another name is a
        TypeError); the others keep their stored values."""
        if changes:
            values = dataclasses.replace(RunState(), **changes).to_dict()
            mapping = {name: json.dumps(values[name]) for name in changes}
            self.client.hset(self.key("state"), mapping=mapping)

    def state(self) -> RunState:
        raw = self.client.hgetall(self.key("state"))
        return RunState.from_dict({name: json.loads(value) for name, value in raw.items()})

    # -- critic pairs

    def add_pairs(self, split: str, pairs: list[Pair]) -> None:
        """Append labelled pairs to `split`, one JSON item each (`Pair.to_json`)."""
        key = self._pairs_key(split)
        if pairs:
            self.client.rpush(key, *(json.dumps(pair.to_json()) for pair in pairs))

    def pairs(self, split: str) -> list[Pair]:
        """The pairs of `split` in the order they were added (`Pair.from_json`: a run stored
        before pairs were typed reads back the same, and keys Pair lacks are dropped)."""
        return [Pair.from_json(json.loads(item))
                for item in self.client.lrange(self._pairs_key(split), 0, -1)]

    def _pairs_key(self, split: str) -> str:
        if split not in _SPLITS:
            raise ValueError(f"split must be one of {_SPLITS}, got {split!r}")
        return self.key(f"pairs:{split}")

    # -- per-prompt success statistics

    def record_outcomes(self, prompt_ids: list[str], correct: list[float]) -> None:
        """Add one attempt per prompt id, with its success (0..1, partial credit allowed)."""
        if len(prompt_ids) != len(correct):
            raise ValueError(f"{len(prompt_ids)} prompt ids but {len(correct)} outcomes")
        if not prompt_ids:
            return
        key = self.key("outcomes")
        # One transaction, so attempts and successes never disagree after a crash.
        pipe = self.client.pipeline(transaction=True)
        for prompt_id, value in zip(prompt_ids, correct):
            pipe.hincrbyfloat(key, f"attempts:{prompt_id}", 1.0)
            pipe.hincrbyfloat(key, f"successes:{prompt_id}", float(value))
        pipe.execute()

    def success_rate(self, prompt_id: str) -> float | None:
        """Mean success of `prompt_id`, or None if it was never attempted."""
        return self.success_rates([prompt_id])[0]

    def success_rates(self, prompt_ids: list[str]) -> list[float | None]:
        """Mean success of each prompt id (None where never attempted), in one round trip."""
        if not prompt_ids:
            return []
        fields = [f for p in prompt_ids for f in (f"attempts:{p}", f"successes:{p}")]
        values = self.client.hmget(self.key("outcomes"), fields)
        rates = []
        for attempts, successes in zip(values[::2], values[1::2]):
            ok = attempts is not None and float(attempts) > 0
            rates.append(float(successes or 0) / float(attempts) if ok else None)
        return rates

    # -- helpers

    def _group(self, data: dict) -> Group:
        if "request" not in data:  # one trajectory per entry: written before groups were typed
            raise StaleRunError(
                f"run {self.run_id} stored its rollouts in the layout of an earlier k2rl (one "
                "trajectory per entry, not one group); resume it with that version or start "
                "it again")
        return Group.from_dict(data)

    def _read_stream(self, name: str) -> list[dict[str, str]]:
        """All entries' fields of a stream, in order, fetched page by page."""
        key, start, out = self.key(name), "-", []
        while True:
            page = self.client.xrange(key, min=start, max="+", count=_READ_PAGE)
            out.extend(fields for _, fields in page)
            if len(page) < _READ_PAGE:
                return out
            start = "(" + page[-1][0]  # exclusive: continue after the last id seen


def _entry(step: int, group: Group) -> str:
    if not isinstance(group, Group):
        raise ValueError(f"rollouts of step {step} must be Groups, not {type(group).__name__}")
    return json.dumps(group.to_dict())


# --------------------------------------------------------------------------- step files


def write_lines(path: Path, lines: list[str]) -> None:
    """`lines` as gzipped JSONL at `path`, atomically: a temporary file in the same folder,
    fsynced, renamed over `path`, and the folder fsynced, so `path` is whole or absent."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as f:
            for line in lines:
                f.write(line.encode() + b"\n")
        raw.flush()
        os.fsync(raw.fileno())
    os.replace(tmp, path)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def read_lines(path: Path) -> list[str]:
    """The JSON lines of a step file."""
    with gzip.open(path, "rt") as f:
        return [line for line in f.read().splitlines() if line]

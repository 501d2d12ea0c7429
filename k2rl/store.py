"""Durable run state in Redis.

A training run keeps everything it must not lose (rollouts, metrics, the run
state, critic pairs, per-prompt success statistics) in Redis, so that a crash
or a restart resumes from what was written instead of from scratch.

`start_redis` runs a private `redis-server` with append-only persistence in
the run directory; `connect` reaches an existing one; `RunStore` puts all keys
of one run under the prefix ``k2rl:{run_id}:``. Every value is JSON; this is the one
place where groups and trajectories (k2rl.group) become dicts.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from k2rl.group import Group

HOST = "127.0.0.1"
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
_READ_PAGE = 1000  # stream entries per XRANGE call, so huge streams never come back in one reply
_PORT_TRIES = 3  # the free port we pick can be taken before redis binds it
_SPLITS = ("train", "heldout")
PID_FILE = "redis.pid"  # "PID START_TIME" of the server serving a run's folder

_NOT_INSTALLED = (
    "redis-server is not installed: run `make setup` or `apt-get install redis-server`, "
    "or set redis.url in the config to an existing server."
)


class MissingServiceError(RuntimeError):
    """Redis is not installed, did not start, or cannot be reached."""


class StaleRunError(RuntimeError):
    """The run's stored rollouts were written in a layout this k2rl does not read."""


# --------------------------------------------------------------------------- server


@dataclass
class RedisServer:
    """A `redis-server` subprocess owned by this run."""

    url: str
    process: subprocess.Popen
    port: int
    data_dir: Path
    log_path: Path
    _stopped: bool = field(default=False, repr=False)

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Shut down gracefully (AOF flushed and fsynced), killing only as a last resort."""
        if self._stopped:
            return
        self._stopped = True
        if self.process.poll() is None:
            _request_shutdown(self.url, self.process)
            _wait_or_kill(self.process, timeout)
        pid_file = self.data_dir / PID_FILE
        if pid_file.exists() and pid_file.read_text().split()[:1] == [str(self.process.pid)]:
            pid_file.unlink(missing_ok=True)

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _request_shutdown(url: str, process: subprocess.Popen) -> None:
    # Plain SHUTDOWN (not NOSAVE) fsyncs the AOF; with `--save ""` it writes no RDB.
    try:
        client = redis.Redis.from_url(url, socket_timeout=STOP_TIMEOUT_S)
        client.shutdown()  # redis-py swallows the expected connection drop
    except (redis.RedisError, OSError):
        # SIGTERM triggers the same graceful shutdown path inside redis.
        process.terminate()


def _wait_or_kill(process: subprocess.Popen, timeout: float) -> None:
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _server_command(binary: str, data_dir: Path, port: int) -> list[str]:
    return [
        binary,
        "--bind", HOST,
        "--port", str(port),
        "--dir", str(data_dir),
        "--appendonly", "yes",
        "--appendfsync", "always",  # a write is on disk before it is acknowledged
        "--save", "",  # no RDB snapshots: the AOF is the only persistence
        "--daemonize", "no",  # we own the process and must be able to wait on it
        "--protected-mode", "yes",
    ]


def _spawn(binary: str, data_dir: Path, log_path: Path, port: int) -> subprocess.Popen:
    # stdout/stderr go to the log too, so argument errors (printed before the
    # log is set up) are not lost.
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            _server_command(binary, data_dir, port),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM it when its parent dies (Linux prctl), so a killed
    driver does not leave its redis-server behind."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the reaper (k2rl.reaper) and the pid file still cover it


def _stop_stale(data_dir: Path) -> str | None:
    """Stop a redis-server that an earlier, killed process of this run left serving
    `data_dir` (its pid file names it), so two servers never share one append-only file."""
    from k2rl.reaper import start_time, stop

    pid_file = data_dir / PID_FILE
    try:
        pid, started = map(int, pid_file.read_text().split())
    except (OSError, ValueError):
        return None
    pid_file.unlink(missing_ok=True)
    if start_time(pid) != started:
        return None
    stop({pid: started})
    return f"stopped redis-server pid {pid}, left serving {data_dir} by an earlier process"


def _wait_ready(server: RedisServer, timeout: float) -> bool:
    """True once PING answers; False if the process exited first."""
    client = redis.Redis.from_url(server.url, socket_connect_timeout=1, socket_timeout=1)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                return False
            try:
                if client.ping():
                    return True
            except (redis.RedisError, OSError):
                pass  # not listening yet, or still loading the AOF
            time.sleep(0.02)
    finally:
        client.close()
    server.stop()
    raise MissingServiceError(
        f"redis-server did not answer PING within {timeout:.0f} s; see {server.log_path}"
    )


def _log_mentions_port_in_use(log_path: Path) -> bool:
    try:
        return "Address already in use" in log_path.read_text(errors="replace")[-4000:]
    except OSError:
        return False


def start_redis(run_dir: Path, timeout: float = START_TIMEOUT_S) -> RedisServer:
    """Start a private redis-server persisting to ``run_dir / "redis"`` and wait for it."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise MissingServiceError(_NOT_INSTALLED)
    data_dir = Path(run_dir) / "redis"
    data_dir.mkdir(parents=True, exist_ok=True)
    stale = _stop_stale(data_dir)
    if stale:
        print(f"k2rl: {stale}", file=sys.stderr)
    log_path = data_dir / "redis.log"
    for _ in range(_PORT_TRIES):
        port = _free_port()
        server = RedisServer(
            url=f"redis://{HOST}:{port}/0",
            process=_spawn(binary, data_dir, log_path, port),
            port=port,
            data_dir=data_dir,
            log_path=log_path,
        )
        if _wait_ready(server, timeout):
            from k2rl.reaper import start_time

            pid = server.process.pid
            (data_dir / PID_FILE).write_text(f"{pid} {start_time(pid)}\n")
            return server
        if not _log_mentions_port_in_use(log_path):
            break
    raise MissingServiceError(
        f"redis-server exited early (exit code {server.process.returncode}); see {log_path}"
    )


def connect(url: str) -> redis.Redis:
    """A client for `url` with str responses, checked with PING."""
    client = redis.Redis.from_url(url, decode_responses=True, socket_connect_timeout=5)
    try:
        client.ping()
    except (redis.RedisError, OSError) as exc:
        client.close()
        raise MissingServiceError(f"cannot reach Redis at {url}: {exc}") from exc
    return client


# --------------------------------------------------------------------------- run store


class RunStore:
    """All durable state of one run, under the key prefix ``k2rl:{run_id}:``."""

    def __init__(self, client: redis.Redis, run_id: str) -> None:
        if not run_id:
            raise ValueError("run_id must be a non-empty string")
        # Every reader below parses str; a bytes client would fail far from here.
        if not client.get_connection_kwargs().get("decode_responses"):
            raise ValueError("RunStore needs a client with decode_responses=True (use connect())")
        self.client = client
        self.run_id = run_id
        self.prefix = f"k2rl:{run_id}:"

    def key(self, name: str) -> str:
        return self.prefix + name

    # -- rollouts (groups; dicts only here, at the Redis edge)

    def add_rollouts(self, step: int, groups: list[Group], carry: list[Group] | None = None
                     ) -> int:
        """Write the finished groups of `step` in one transaction; returns the number of
        trajectories written, 0 if the step was already written.

        `carry` (partial rollouts: groups with paused members) replaces the carried set in the
        same transaction, so a crash never loses or duplicates a trajectory.
        """
        entries = [_rollout_entry(step, group) for group in groups]
        count = sum(len(g) for g in groups)
        stream, steps = self.key("rollouts"), self.key("rollout_steps")

        def write(pipe: redis.client.Pipeline) -> int:
            # WATCH makes a concurrent writer of the same step abort our EXEC;
            # the retry then sees the step and writes nothing.
            if pipe.hexists(steps, str(step)):
                return 0
            pipe.multi()
            for entry in entries:
                pipe.xadd(stream, entry)
            pipe.hset(steps, str(step), count)
            if carry is not None:
                pipe.set(self.key("carry"), json.dumps([g.to_dict() for g in carry]))
            return count

        return self.client.transaction(write, steps, value_from_callable=True)

    def rollouts(self, step: int | None = None) -> list[Group]:
        """Groups in write order: all of them, or those of one step."""
        wanted = None if step is None else str(step)
        return [
            self._group(json.loads(fields["data"]))
            for fields in self._read_stream("rollouts")
            if wanted is None or fields["step"] == wanted
        ]

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

    # -- run state

    def set_state(self, **fields: Any) -> None:
        """Update run state fields (e.g. last_step, checkpoint, status); JSON values."""
        if fields:
            mapping = {name: json.dumps(value) for name, value in fields.items()}
            self.client.hset(self.key("state"), mapping=mapping)

    def state(self) -> dict:
        raw = self.client.hgetall(self.key("state"))
        return {name: json.loads(value) for name, value in raw.items()}

    # -- critic pairs

    def add_pairs(self, split: str, pairs: list[dict]) -> None:
        key = self._pairs_key(split)
        if pairs:
            self.client.rpush(key, *(json.dumps(pair) for pair in pairs))

    def pairs(self, split: str) -> list[dict]:
        return [json.loads(item) for item in self.client.lrange(self._pairs_key(split), 0, -1)]

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


def _rollout_entry(step: int, group: Group) -> dict[str, Any]:
    if not isinstance(group, Group):
        raise ValueError(f"rollouts of step {step} must be Groups, not {type(group).__name__}")
    return {"step": step, "group_id": group.id, "data": json.dumps(group.to_dict())}

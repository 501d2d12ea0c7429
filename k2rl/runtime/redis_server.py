"""The run's own redis-server: started in the run folder, stopped with the run.

`start_redis` runs a private `redis-server` with append-only persistence (`appendfsync always`)
in ``RUN_DIR/redis``; `connect` reaches an existing one. What is kept in it: k2rl.runtime.store.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis

from k2rl.runtime.reaper import start_time, stop

HOST = "127.0.0.1"
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
_PORT_TRIES = 3  # the free port we pick can be taken before redis binds it
PID_FILE = "redis.pid"  # "PID START_TIME" of the server serving a run's folder

_NOT_INSTALLED = (
    "redis-server is not installed: run `make setup` or `apt-get install redis-server`, "
    "or set redis.url in the config to an existing server."
)


class MissingServiceError(RuntimeError):
    """Redis is not installed, did not start, or cannot be reached."""


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
        pass  # not Linux: the reaper (k2rl.runtime.reaper) and the pid file still cover it


def _stop_stale(data_dir: Path) -> str | None:
    """Stop a redis-server that an earlier, killed process of this run left serving
    `data_dir` (its pid file names it), so two servers never share one append-only file."""
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

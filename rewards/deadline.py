"""Hard time limits for verifiers, in any thread: run the work in a worker process, kill it late.

A verifier that may run long on a hostile reply (SymPy on ``9^{9^{9}}``) cannot be bounded
in its own process: ``signal.alarm`` works only in the main thread, and a thread stuck in
one C call (a huge integer power) holds the GIL, so even the process's other threads stop.
So ``within(fn, *args, seconds=...)`` sends the call to a persistent worker process (a plain
``python -c`` child, one per ``setup``, started on first use) and waits at most ``seconds``
for the answer; past that the worker is killed (SIGKILL) and the call returns ``default``
with ``timed_out=True``. The next call starts a fresh worker. ``fn`` and its arguments must
pickle (a module-level function and plain values), and so must its value, which should be
plain data too: it is unpickled in the caller's process, where a SymPy expression such as
``9**(9**9)`` would be rebuilt, and evaluated, outside any limit. ``fn`` should not raise on
bad input; if it does, the error is raised here as ``WorkerError``.

Cost: one round trip through two pipes and two pickles per call, about 0.1 ms (see
bench/results/verifier_cost.json), and the worker's start (its imports, ``setup``) once, and
again after each timeout. The start is not charged to any call's time limit.

Timeouts are counted: ``TIMEOUTS[name]`` (a ``collections.Counter``, ``name`` defaulting to
the function's qualified name) is how many calls timed out in this process, and
``timeouts()`` is their total; a caller that reports metrics reads or resets it (e.g. a
``reward/timeouts`` metric per step), and a caller that wants the flag per call reads
``Timed.timed_out``. Calls to one worker are serialised (a lock): verifiers hold the GIL
anyway, so threads would not have run them in parallel.
"""

from __future__ import annotations

import atexit
import collections
import os
import pickle
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

STARTUP_SECONDS = 120.0  # a worker's imports and setup, under load; not charged to a call
TIMEOUTS: collections.Counter[str] = collections.Counter()
_COUNT_LOCK = threading.Lock()

# The worker: read (fn, args) pickles from stdin, answer each on the saved stdout. Its own
# stdout is stderr, so that a stray print cannot corrupt the answers.
WORKER = r"""
import os, pickle, sys
answers = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)
requests = sys.stdin.buffer

def receive():
    header = requests.read(8)
    if len(header) < 8:
        sys.exit(0)  # the parent closed the pipe or died
    return pickle.loads(requests.read(int.from_bytes(header, "little")))

def send(message):
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    answers.write(len(data).to_bytes(8, "little") + data)
    answers.flush()

for fn in receive():
    fn()
send(("ready", None))
while True:
    fn, args = receive()
    try:
        send(("ok", fn(*args)))
    except BaseException as error:
        send(("error", f"{type(error).__name__}: {error}"))
"""


class WorkerError(RuntimeError):
    """The function raised in the worker, or the worker could not start or died."""


@dataclass(frozen=True)
class Timed:
    """What a limited call returned: its value (``default`` if it ran out of time) and a flag."""

    value: Any
    timed_out: bool


class Worker:
    """One worker process that runs calls with a hard time limit (see the module doc).

    ``setup``: module-level functions the worker calls once when it starts (imports,
    warm-up), before any call's clock runs.
    """

    def __init__(self, setup: tuple[Callable[[], Any], ...] = ()) -> None:
        self.setup = setup
        self._process: subprocess.Popen | None = None
        self._owner = os.getpid()
        self._lock = threading.Lock()

    def call(self, fn: Callable[..., Any], *args: Any, seconds: float, default: Any = None,
             name: str | None = None) -> Timed:
        """``fn(*args)`` in the worker, or ``default`` with ``timed_out`` after ``seconds``."""
        with self._lock:
            process = self._started()
            try:
                _send(process, (fn, args))
                kind, value = _receive(process, time.monotonic() + seconds)
            except TimeoutError:
                self._kill()
                with _COUNT_LOCK:
                    TIMEOUTS[name or fn.__qualname__] += 1
                return Timed(default, True)
            except (EOFError, OSError) as error:
                self._kill()
                raise WorkerError(f"the verifier worker died running {fn.__qualname__}") \
                    from error
        if kind == "error":
            raise WorkerError(value)
        return Timed(value, False)

    def close(self) -> None:
        """Stop the worker (a later call starts a new one)."""
        with self._lock:
            self._kill()

    def _started(self) -> subprocess.Popen:
        """The live worker, started (and set up) if there is none in this process."""
        if self._owner != os.getpid():  # forked: the worker belongs to the parent
            self._process, self._owner = None, os.getpid()
        if self._process is not None and self._process.poll() is None:
            return self._process
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        process = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, env=env, bufsize=0)
        self._process = process
        try:
            _send(process, self.setup)
            kind, _ = _receive(process, time.monotonic() + STARTUP_SECONDS)
        except (TimeoutError, EOFError, OSError) as error:
            self._kill()
            raise WorkerError(f"the verifier worker did not start within {STARTUP_SECONDS:g} s "
                              f"(setup {[fn.__qualname__ for fn in self.setup]})") from error
        return process

    def _kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            for pipe in (self._process.stdin, self._process.stdout):
                pipe.close()
            self._process = None


def _send(process: subprocess.Popen, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    process.stdin.write(len(data).to_bytes(8, "little") + data)


def _receive(process: subprocess.Popen, deadline: float) -> tuple[str, Any]:
    """The worker's next answer; TimeoutError at ``deadline``, EOFError if it died."""
    fd = process.stdout.fileno()
    header = _read(fd, 8, deadline)
    return pickle.loads(_read(fd, int.from_bytes(header, "little"), deadline))


def _read(fd: int, size: int, deadline: float) -> bytes:
    data = bytearray()
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while len(data) < size:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not poller.poll(remaining * 1000):
            raise TimeoutError
        chunk = os.read(fd, size - len(data))
        if not chunk:
            raise EOFError("the verifier worker exited")
        data += chunk
    return bytes(data)


_workers: dict[tuple, Worker] = {}
_workers_lock = threading.Lock()


def within(fn: Callable[..., Any], *args: Any, seconds: float, default: Any = None,
           setup: tuple[Callable[[], Any], ...] = (), name: str | None = None) -> Timed:
    """``fn(*args)`` with a hard limit of ``seconds``, in the shared worker for ``setup``.

    >>> within(pow, 2, 10, seconds=30.0)
    Timed(value=1024, timed_out=False)
    """
    with _workers_lock:
        worker = _workers.setdefault(setup, Worker(setup))
    return worker.call(fn, *args, seconds=seconds, default=default, name=name)


@atexit.register
def _close_workers() -> None:
    with _workers_lock:
        for worker in _workers.values():
            worker.close()


def timeouts() -> int:
    """How many limited calls timed out in this process so far (all names)."""
    with _COUNT_LOCK:
        return sum(TIMEOUTS.values())

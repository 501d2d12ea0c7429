"""Nothing of a run outlives its driver: a watchdog process that stops the driver's descendants.

`k2rl train` starts services that are processes of their own: its redis-server, and a local
Ray cluster (GCS, raylet, the workers, Ray's dashboard and runtime-env agents). When the driver
exits normally it stops them; when it is killed (SIGKILL, the OOM killer) nothing in it runs,
and its children are re-parented to init and live on.

`watch()` starts `python -m k2rl.runtime.reaper DRIVER_PID` with the read end of a pipe whose write end
only the driver holds. Every half second the reaper records the driver's descendants (pid and
start time, from /proc); when the pipe reaches end-of-file, the driver is gone, however it
died, and the reaper sends SIGTERM to every recorded process still running (the same pid *and*
start time, so a recycled pid is never hit), then SIGKILL to any left after a grace period.
Linux only (/proc); elsewhere `watch` does nothing.
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

POLL_S = 0.5
GRACE_S = 5.0


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (None if it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[19])  # field 22, after "pid (comm) "


def parents() -> dict[int, int]:
    """pid -> parent pid of every process."""
    out = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
                out[int(entry.name)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                continue  # exited while we looked
    return out


def descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in parents().items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def stop(recorded: dict[int, int]) -> int:
    """SIGTERM, then SIGKILL after GRACE_S, to every recorded process still the same one;
    returns how many were running."""
    alive = {pid for pid, t in recorded.items() if start_time(pid) == t}
    for pid in alive:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and any(start_time(p) == recorded[p] for p in alive):
        time.sleep(0.1)
    for pid in alive:
        if start_time(pid) == recorded[pid]:
            _signal(pid, signal.SIGKILL)
    return len(alive)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass  # already gone


def reap(driver: int, pipe_fd: int) -> None:
    """Record the driver's descendants until `pipe_fd` reaches EOF, then stop them."""
    recorded: dict[int, int] = {}
    me = os.getpid()
    while True:
        for pid in descendants(driver) - {me}:
            t = start_time(pid)
            if t is not None:
                recorded.setdefault(pid, t)
        ready, _, _ = select.select([pipe_fd], [], [], POLL_S)
        if ready and not os.read(pipe_fd, 1):  # EOF: the driver has exited
            break
    stop(recorded)


def watch() -> subprocess.Popen | None:
    """Start the reaper of this process's descendants (see the module docstring), once per
    process."""
    if _keep or not Path("/proc/self/stat").exists():
        return None
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "k2rl.runtime.reaper", str(os.getpid())],
                            stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # a Ctrl-C to the driver's group spares it
    os.close(read_end)
    os.set_inheritable(write_end, False)  # only the driver holds it: its exit is the EOF
    _keep.append(write_end)
    return proc


_keep: list[int] = []  # the write ends, open for the driver's lifetime


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    reap(int(sys.argv[1]), sys.stdin.fileno())

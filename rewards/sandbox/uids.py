"""A uid of its own for each run, leased, and the processes of a uid found and swept.

As root each run gets one of ``SANDBOX_UIDS`` (ids known to the user database are
skipped, so that no real account's processes are ever swept), no supplementary groups
and no new privileges. Why a uid per run rather than one shared ``nobody``:
RLIMIT_NPROC counts the processes of a uid, so runs sharing one would starve each
other, and "kill everything of this uid" (the fallback sweep, ``kill_user``, where no
jail and cgroup reap a run's processes themselves) would hit neighbours. A uid is also
locked in the private folder while a run holds it, so that host processes with pools of
their own never share one.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import os
import pwd
import signal
import threading
import time
from dataclasses import dataclass
from typing import Container, Iterator

from rewards.sandbox.cgroups import SWEEP_SECONDS
from rewards.sandbox.private import private_folder

# Candidate uids for runs, one per concurrent run.
SANDBOX_UIDS = range(64_000, 64_064)

_free_uids: collections.deque[int] | None = None
_zombie_uids: set[int] = set()  # released while dead processes of theirs awaited reaping
_uid_locks: dict[int, int] = {}  # uid -> the fd of its lock file, while this process holds it
_uids_changed = threading.Condition()


@dataclass
class Lease:
    """A run's uid (None without root: no uid drop) and whether it still has unreaped
    processes when it is given back."""

    uid: int | None
    zombies: bool = False


@contextlib.contextmanager
def leased_uid(root: bool) -> Iterator[Lease]:
    """A uid of its own for one run (as ``root``; else none), given back at the end."""
    lease = Lease(acquire_uid() if root else None)
    try:
        yield lease
    finally:
        if lease.uid is not None:
            release_uid(lease.uid, lease.zombies)


def acquire_uid() -> int:
    """A uid that no current run uses and no process holds; blocks while there is none.

    A uid released with zombies is skipped until they are reaped: they still
    count against its RLIMIT_NPROC and would starve the next run. A uid is
    also locked (``flock`` on a root-only file) for as long as a run uses it,
    so that host processes with pools of their own never share one: they
    would share its RLIMIT_NPROC, and one's uid sweep would kill the other's run.
    """
    global _free_uids
    with _uids_changed:
        if _free_uids is None:
            _free_uids = collections.deque(uid for uid in SANDBOX_UIDS if not _known_uid(uid))
            if not _free_uids:
                raise RuntimeError(f"every sandbox uid in {SANDBOX_UIDS} belongs to an account")
        while True:
            for _ in range(len(_free_uids)):
                uid = _free_uids.popleft()
                if (uid not in _zombie_uids or not processes_of((uid,))) and lock_uid(uid):
                    _zombie_uids.discard(uid)
                    return uid
                _free_uids.append(uid)
            _uids_changed.wait(0.05)  # for a release, zombies to be reaped, or a lock


def release_uid(uid: int, zombies: bool) -> None:
    """Return ``uid`` to the free list; ``zombies``: it still has unreaped processes."""
    with _uids_changed:
        assert _free_uids is not None
        os.close(_uid_locks.pop(uid))  # unlocks it for other processes
        if zombies:
            _zombie_uids.add(uid)
        _free_uids.append(uid)
        _uids_changed.notify()


def lock_uid(uid: int) -> bool:
    """Whether this process now holds ``uid``'s lock (no other process does)."""
    fd = os.open(os.path.join(private_folder(), f"uid-{uid}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    _uid_locks[uid] = fd
    return True


def _known_uid(uid: int) -> bool:
    """Whether ``uid`` belongs to an account in the user database."""
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def processes_of(uids: Container[int]) -> list[tuple[int, str, int]]:
    """(pid, state letter, parent pid) of each process whose real uid is in ``uids``.

    Read from /proc/PID/status rather than from the owner of /proc/PID, which
    a process can turn into root by making itself non-dumpable. Parsed by
    hand: this runs after runs, over every process of the host.
    """
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as status:
                text = status.read()
        except OSError:
            continue  # exited while we looked
        if int(_status_field(text, b"Uid")) in uids:
            found.append((int(entry), _status_field(text, b"State").decode(),
                          int(_status_field(text, b"PPid"))))
    return found


def _status_field(status: bytes, name: bytes) -> bytes:
    """The first word of field ``name`` in a /proc/PID/status text."""
    start = status.index(b"\n" + name + b":") + len(name) + 2
    return status[start:].split(None, 1)[0]


def kill_user(uid: int) -> bool:
    """SIGKILL every process of ``uid``; whether dead but unreaped ones remain.

    The fallback sweep, where no cgroup counts the run's processes. Zombies
    are left to their parent (orphans to init, which may reap them only after
    a while), except those reparented to this process (when it is PID 1 or a
    subreaper): nobody else would reap them.
    """
    deadline = time.monotonic() + SWEEP_SECONDS
    while True:
        leftovers = processes_of((uid,))
        live = [pid for pid, state, _ in leftovers if state != "Z"]
        for pid, state, parent in leftovers:
            if state == "Z" and parent == os.getpid():
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
        if not live or time.monotonic() >= deadline:
            return bool(leftovers)
        for pid in live:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.001)

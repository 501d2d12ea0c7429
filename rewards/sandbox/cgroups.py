"""Cgroups: memory and processes of a run's whole process tree, or caps by arithmetic.

As root, a run gets a cgroup of its own (v2 if the memory controller is delegated to
this process's cgroup, else v1's memory and pids controllers) that caps the memory and
the process count of its whole process tree, not of each process. The host moves the
launcher into it before the launcher may go on (``add_process``), and kills whatever is
left in it afterwards (``kill_cgroups``). ``memory_peak_mb`` is the tree's peak.

Where no cgroup can be made (``memory_cap()`` tells which is in force, and a warning
says so once), the tree is capped by arithmetic instead (``fallback_caps``): the private
tmpfs mounts together get a quarter of ``memory_mb`` (``size=``), and the rest is split
between at most ``max_processes`` processes, each of at least ``FALLBACK_PROCESS_MB``,
so that RLIMIT_NPROC (processes of the run's uid, threads included) times RLIMIT_AS
(each process's address space) plus the tmpfs sizes is at most ``memory_mb``. With the
defaults (512 MB, 32 processes) a run gets 4 processes of 96 MB and 128 MB of tmpfs:
four children of 300 MB or 1.2 GB of /tmp files cannot be made. A ``memory_mb`` too
small for one process is refused with a ValueError.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Sequence

from rewards.sandbox.jail import TMPFS_MOUNTS

logger = logging.getLogger(__name__)

SWEEP_SECONDS = 1.0  # how long to wait for killed leftovers to disappear
LAUNCHER_PROCESSES = 2  # the jail's launcher and init count against the cgroup's pids.max
# Without a cgroup: the smallest address space a run's process gets (the interpreter,
# the launcher's imports and the code harness fit in about 40 MB), and the share of
# memory_mb the private tmpfs mounts get between them.
FALLBACK_PROCESS_MB = 96
FALLBACK_TMPFS_SHARE = 4  # a quarter


@dataclass(frozen=True)
class CgroupBackend:
    """Where this process may make one cgroup per run."""

    version: int  # 1 or 2
    parents: tuple[str, ...]  # v2: the unified folder; v1: the memory folder, then pids if any


_cgroup_lock = threading.Lock()
_cgroup_probed = False
_cgroup: CgroupBackend | None = None


def memory_cap() -> str:
    """How a run's memory is capped here: "cgroup v1", "cgroup v2" or "rlimit" (per process)."""
    backend = cgroup_backend()
    return f"cgroup v{backend.version}" if backend else "rlimit"


def cgroup_backend() -> CgroupBackend | None:
    """The cgroup hierarchy runs are made in, probed once (None: per-process limits only)."""
    global _cgroup_probed, _cgroup
    with _cgroup_lock:
        if not _cgroup_probed:
            _cgroup_probed = True
            _cgroup = _probe_cgroups() if os.geteuid() == 0 else None
            if _cgroup is not None:
                logger.info("k2rl sandbox: memory and processes capped per run's process tree "
                            "by cgroup v%d under %s", _cgroup.version, ", ".join(_cgroup.parents))
            else:
                logger.warning("k2rl sandbox: no cgroup can be made here; a run's memory_mb is "
                               "split between a sized tmpfs and a few processes of RLIMIT_AS "
                               "each, their number capped by RLIMIT_NPROC (fallback_caps)")
        return _cgroup


def _probe_cgroups() -> CgroupBackend | None:
    """A v2 backend if the memory controller is delegated to our cgroup, else v1, else None."""
    own, mounts = _own_cgroups(), _cgroup_mounts()
    for mount_root, mount_point, fstype, options in mounts:
        if fstype == "cgroup2" and "" in own:
            folder = _cgroup_folder(mount_root, mount_point, own[""])
            if folder and "memory" in _read(os.path.join(folder, "cgroup.subtree_control")).split():
                backend = CgroupBackend(2, (folder,))
                if _can_make_child(backend):
                    return backend
    memory = pids = None
    for mount_root, mount_point, fstype, options in mounts:
        for controller in ("memory", "pids"):
            if fstype == "cgroup" and controller in options.split(",") and controller in own:
                folder = _cgroup_folder(mount_root, mount_point, own[controller])
                memory, pids = (folder, pids) if controller == "memory" else (memory, folder)
    if memory:
        backend = CgroupBackend(1, (memory,) + ((pids,) if pids else ()))
        if _can_make_child(backend):
            return backend
        if _can_make_child(CgroupBackend(1, (memory,))):
            return CgroupBackend(1, (memory,))
    return None


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under "" its v2 path."""
    own = {}
    for line in _read("/proc/self/cgroup").splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            own[controller] = path
    return own


def _cgroup_mounts() -> list[tuple[str, str, str, str]]:
    """(root, mount point, fstype, super options) of each cgroup filesystem mounted here."""
    mounts = []
    for line in _read("/proc/self/mountinfo").splitlines():
        fields, _, tail = line.partition(" - ")
        fields, tail = fields.split(), tail.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            mounts.append((fields[3], fields[4], tail[0], tail[2]))
    return mounts


def _cgroup_folder(mount_root: str, mount_point: str, path: str) -> str | None:
    """The folder of cgroup ``path`` under a mount of the hierarchy at ``mount_root``."""
    if mount_root != "/" and not (path + "/").startswith(mount_root.rstrip("/") + "/"):
        return None
    relative = path[len(mount_root.rstrip("/")):].lstrip("/")
    folder = os.path.join(mount_point, relative)
    return folder if os.path.isdir(folder) else None


def _can_make_child(backend: CgroupBackend) -> bool:
    """Whether a child cgroup with the limit files can be made (and removed) there."""
    try:
        folders = make_cgroups(backend, f"k2rl-sandbox-probe-{os.getpid()}", 64, 8)
    except OSError:
        return False
    remove_cgroups(folders)
    return True


def make_cgroups(backend: CgroupBackend, name: str, memory_mb: int,
                  max_processes: int) -> list[str]:
    """The run's cgroup folders, made with their limits (OSError if they cannot be)."""
    limit = str(memory_mb * 2**20)
    processes = str(max_processes + LAUNCHER_PROCESSES)
    if backend.version == 2:
        files = [{"memory.max": limit, "memory.swap.max": "0", "pids.max": processes}]
    else:
        files = [{"memory.limit_in_bytes": limit, "memory.memsw.limit_in_bytes": limit},
                 {"pids.max": processes}]
    folders = []
    try:
        for parent, limits in zip(backend.parents, files):
            folder = os.path.join(parent, name)
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder)  # left by a crashed process with our pid: emptied below
            folders.append(folder)
            kill_cgroups([folder])
            for index, (file_name, value) in enumerate(limits.items()):
                try:
                    _write(os.path.join(folder, file_name), value)
                except OSError:
                    if index == 0:
                        raise  # the main limit; the others (swap) are optional
    except OSError:
        remove_cgroups(folders)
        raise
    return folders


def add_process(folders: Sequence[str], pid: int) -> None:
    """Move process ``pid`` into the cgroups (OSError if it cannot be moved)."""
    for folder in folders:
        _write(os.path.join(folder, "cgroup.procs"), str(pid))


def kill_cgroups(folders: Sequence[str], spare: int | None = None) -> None:
    """SIGKILL every process in the cgroups but ``spare`` until none is left (or SWEEP_SECONDS).

    A process with a pending SIGKILL cannot fork, so the sweeps converge.
    """
    kill_files = [os.path.join(folder, "cgroup.kill") for folder in folders]
    deadline = time.monotonic() + SWEEP_SECONDS
    while True:
        pids = {int(pid) for folder in folders
                for pid in _read(os.path.join(folder, "cgroup.procs")).split()} - {spare}
        if not pids or time.monotonic() >= deadline:
            return
        if spare is None:
            for kill_file in kill_files:
                with contextlib.suppress(OSError):
                    _write(kill_file, "1")  # v2: the whole tree at once
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.001)


def cgroups_reap(folders: list[str]) -> bool:
    """Whether the cgroups count no process at all, zombies included (pids.current is 0).

    Only the pids controller counts zombies; without it the uid sweep is needed.
    """
    deadline = time.monotonic() + SWEEP_SECONDS
    counters = [os.path.join(f, "pids.current") for f in folders
                if os.path.exists(os.path.join(f, "pids.current"))]
    if not counters:
        return False
    while any(_read(counter).strip() not in ("", "0") for counter in counters):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.001)
    return True


def memory_peak_mb(folders: list[str]) -> float | None:
    """The highest memory use of the run's process tree, in MiB, if the kernel records it."""
    for folder in folders:
        for name in ("memory.max_usage_in_bytes", "memory.peak"):
            text = _read(os.path.join(folder, name)).strip()
            if text.isdigit():
                return int(text) / 2**20
    return None


def remove_cgroups(folders: list[str]) -> None:
    """Remove the (emptied) cgroups; a busy one is retried for a while, then left with a warning."""
    for folder in folders:
        deadline = time.monotonic() + SWEEP_SECONDS
        while True:
            try:
                os.rmdir(folder)
                break
            except FileNotFoundError:
                break
            except OSError as error:
                if error.errno != errno.EBUSY or time.monotonic() >= deadline:
                    logger.warning("k2rl sandbox: could not remove cgroup %s: %s", folder, error)
                    break
                time.sleep(0.002)


def fallback_caps(memory_mb: int, max_processes: int) -> tuple[int, int, int]:
    """(processes, MB per process, MB per tmpfs mount) that keep a run's whole tree within
    ``memory_mb`` where no cgroup counts it (module doc).

    >>> fallback_caps(512, 32), fallback_caps(512, 2), fallback_caps(1024, 32)
    ((4, 96, 42), (2, 192, 42), (8, 96, 85))
    """
    tmpfs_total = memory_mb // FALLBACK_TMPFS_SHARE
    processes = min(max_processes, (memory_mb - tmpfs_total) // FALLBACK_PROCESS_MB)
    if processes < 1:
        raise ValueError(
            f"memory_mb={memory_mb} is too small for a sandbox run without a cgroup: after a "
            f"quarter for its tmpfs, one process needs {FALLBACK_PROCESS_MB} MB")
    return processes, (memory_mb - tmpfs_total) // processes, tmpfs_total // len(TMPFS_MOUNTS)


def _read(path: str) -> str:
    """The text of ``path``, or "" if it cannot be read."""
    try:
        with open(path) as file:
            return file.read()
    except OSError:
        return ""


def _write(path: str, text: str) -> None:
    with open(path, "w") as file:
        file.write(text)

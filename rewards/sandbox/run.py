"""Running code in the sandbox: ``run_python``, its ``SandboxResult``, and a pool of runs.

One run, as root: a uid leased for it (``uids``), a folder of its own (``process``), a
cgroup that caps its tree (``cgroups``, or ``fallback_caps`` without one), the jail
where the kernel allows it (``jail``, ``probes``), and the launcher (``launcher``) that
builds the walls and runs the script; afterwards everything of the run is killed and
removed, processes before files. ``SandboxPool`` runs several at once on threads, so
that sandbox latency overlaps generation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterable, Literal

from rewards.sandbox.cgroups import (
    cgroup_backend,
    cgroups_reap,
    fallback_caps,
    kill_cgroups,
    make_cgroups,
    memory_peak_mb,
    remove_cgroups,
)
from rewards.sandbox.jail import CLONE_NEWNET, JAIL_NAMESPACES, jail_config, jail_cwd
from rewards.sandbox.private import module_folder
from rewards.sandbox.probes import NetworkIsolation, jail_available, network_isolation
from rewards.sandbox.process import (
    SCRIPT_NAME,
    make_folders,
    remove_tree,
    rlimits,
    run_launcher,
)
from rewards.sandbox.uids import Lease, kill_user, leased_uid

_python_lock = threading.Lock()
_sandbox_python: str | None = None


@dataclass(frozen=True)
class SandboxResult:
    """What one run did."""

    returncode: int  # negative: killed by that signal (e.g. -9 after a timeout)
    stdout: str  # the first max_output bytes, decoded as UTF-8 (errors replaced)
    stderr: str
    truncated: bool  # stdout or stderr was longer than max_output bytes
    timed_out: bool  # killed at the wall-clock timeout
    wall_seconds: float
    network_isolation: NetworkIsolation
    memory_peak_mb: float | None = None  # of the whole process tree; None without a cgroup


def run_python(
    code: str,
    stdin: str = "",
    *,
    timeout: float = 5.0,
    cpu_seconds: int = 5,
    memory_mb: int = 512,
    max_processes: int = 32,
    max_output: int = 64_000,
    network: Literal["auto", "netns", "prelude"] = "auto",
    python: str | None = None,
    preload: dict[str, str] | None = None,
) -> SandboxResult:
    """Run ``code`` as a script in the sandbox, feeding it ``stdin``.

    ``memory_mb`` caps the run's whole process tree, its private tmpfs
    included: by a cgroup where one can be made, else (as root) by splitting it
    between a quarter for tmpfs and a few processes (``fallback_caps``);
    ``max_processes`` likewise caps the tree's processes. ``network``
    forces an isolation mode ("auto": the namespace where it works, else the
    prelude); ``python`` names the interpreter (default: the first one that
    runs in the sandbox, see ``sandbox_python``).
    ``preload`` maps module names to trusted source that the run imports
    before it is confined (so the script can import them, though the jail has
    no copy), from bytecode cached across runs. Limits that are exceeded end
    the run; they never raise here (a ``memory_mb`` too small for the fallback
    does, see ``fallback_caps``). Errors of the host (no usable interpreter,
    a namespace that was promised but failed) do.
    """
    isolation = network_isolation() if network == "auto" else network
    interpreter = python or sandbox_python()
    root = os.geteuid() == 0
    jail = root and jail_available()
    with leased_uid(root) as lease:
        uid = lease.uid
        cgroups: list[str] = []
        base = tempfile.mkdtemp(prefix="k2rl-sandbox-")
        try:
            work = make_folders(base, uid)
            backend = cgroup_backend()
            if backend is not None and uid is not None:
                cgroups = make_cgroups(backend, f"k2rl-sandbox-{os.getpid()}-{uid}",
                                       memory_mb, max_processes)
            # Without a cgroup, only as root do per-uid process counts cap the tree.
            processes, process_mb, tmpfs_mb = (
                (max_processes, memory_mb, memory_mb) if cgroups or uid is None
                else fallback_caps(memory_mb, max_processes))
            config = {
                "script": SCRIPT_NAME, "work": work, "uid": uid,
                "cwd": jail_cwd(base) if jail else work,
                "unshare": (JAIL_NAMESPACES if jail else 0)
                           | (CLONE_NEWNET if isolation == "netns" else 0),
                "jail": jail_config(base, tmpfs_mb) if jail else None,
                "limits": rlimits(cpu_seconds, process_mb, processes),
                "prelude": isolation == "prelude",
                "preload": [(module_folder(name, source), name)
                            for name, source in (preload or {}).items()],
            }
            result = run_launcher(code, stdin, base, config, interpreter, timeout, max_output,
                                  cgroups)
            return SandboxResult(*result, isolation, memory_peak_mb(cgroups))
        finally:
            _clean_up(base, cgroups, lease, jail)


def _clean_up(base: str, cgroups: list[str], lease: Lease, jail: bool) -> None:
    """Kill what is left of a run, then remove its cgroups and folder.

    Processes before files: a live one could still write into the folder. Only in a
    jail is every process of the run reaped when its cgroup empties; elsewhere orphans
    wait for the host's init, and the uid keeps them (``lease.zombies``) until then.
    """
    try:
        if cgroups:
            kill_cgroups(cgroups)
        if lease.uid is not None and not (jail and cgroups_reap(cgroups)):
            lease.zombies = kill_user(lease.uid)
    finally:
        remove_cgroups(cgroups)
        remove_tree(base)


def sandbox_python() -> str:
    """The interpreter runs use: the first candidate that works in the sandbox.

    As root the code runs under an unprivileged uid and, in a jail, sees only
    the system folders, so this process's own interpreter (e.g. a venv whose
    Python lives in /root) may not work there: candidates are tried with a
    real run that imports from the standard library; the answer is cached.
    """
    global _sandbox_python
    if os.geteuid() != 0:
        return sys.executable
    with _python_lock:
        if _sandbox_python is None:
            candidates = [sys.executable, os.path.realpath(sys.executable),
                          shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")]
            for candidate in dict.fromkeys(c for c in candidates if c):
                if _starts(candidate):
                    _sandbox_python = candidate
                    break
            else:
                raise RuntimeError(f"no Python the sandbox user can run among {candidates}")
        return _sandbox_python


def _starts(interpreter: str) -> bool:
    """Whether ``interpreter`` runs a script that imports from its standard library."""
    try:
        result = run_python("import json, textwrap", timeout=10.0, python=interpreter)
    except (OSError, subprocess.SubprocessError, RuntimeError):
        return False  # e.g. exec refused: a folder on the way is closed to the uid
    return result.returncode == 0



# --- many runs ---------------------------------------------------------------


class SandboxPool:
    """Runs sandboxes on a few threads, so tests run while the model generates.

    Each job is a subprocess, so threads suffice: they only wait. ``defaults``
    are ``run_python`` keyword arguments applied to every job unless a call
    overrides them.
    """

    def __init__(self, workers: int = 2, **defaults: Any) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.defaults = defaults
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="k2rl-sandbox")

    def submit(self, code: str, stdin: str = "", **kwargs: Any) -> Future[SandboxResult]:
        """Start one run; its result (or host error) arrives in the future."""
        return self._executor.submit(run_python, code, stdin, **{**self.defaults, **kwargs})

    def map(
        self, codes: Iterable[str], stdins: Iterable[str] | None = None, **kwargs: Any
    ) -> list[SandboxResult]:
        """Run every code (with the matching stdin) in parallel; results in order."""
        codes = list(codes)
        stdins = [""] * len(codes) if stdins is None else list(stdins)
        if len(stdins) != len(codes):
            raise ValueError(f"map got {len(codes)} codes but {len(stdins)} stdins")
        futures = [self.submit(code, stdin, **kwargs) for code, stdin in zip(codes, stdins)]
        return [future.result() for future in futures]

    def close(self) -> None:
        """Wait for the running jobs and stop the threads; idempotent."""
        self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

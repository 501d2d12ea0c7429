"""One launcher process, from the host's side: start it, wait for it, kill what is left.

The run's folder (``make_folders``) holds the script; its outputs go to unnamed files
bounded by RLIMIT_FSIZE, not pipes. ``run_launcher`` starts ``launcher.py`` (from its
copy in the private folder) with a scrubbed environment and ``python -I -S``, moves it
into the run's cgroups, lets it go, waits up to the wall-clock timeout and then kills
everything: the cgroups' processes and the process group.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, BinaryIO, Callable, Sequence

from rewards.sandbox import launcher
from rewards.sandbox.cgroups import SWEEP_SECONDS, add_process, kill_cgroups
from rewards.sandbox.private import module_folder

Limits = list[tuple[int, int, int]]  # (resource.RLIMIT_*, soft, hard)

SCRIPT_NAME = "main.py"
ENV_PATH = "/usr/bin:/bin"
FILE_SIZE_MB = 16  # largest file a run may write, its stdout and stderr included
MAX_OPEN_FILES = 64
LAUNCHER_MODULE = "k2rl_sandbox_launcher"  # launcher.py's name in the private folder
LAUNCHER_SOURCE = Path(launcher.__file__).read_text(encoding="utf-8")


def make_folders(base: str, uid: int | None) -> str:
    """The run's folder (``base``/work, owned by ``uid``: its cwd without a jail, the
    script's only copy in the jail) and the jail's mount point (``base``/root)."""
    os.chmod(base, 0o711)  # the uid may pass through to its folder, not list the others
    work = os.path.join(base, "work")
    os.mkdir(work, 0o700)
    os.mkdir(os.path.join(base, "root"), 0o700)
    if uid is not None:
        os.chown(work, uid, uid)  # the run's own folder is all it may write
    return work


def remove_tree(path: str) -> None:
    """Delete the run's folder even where the code locked its own subfolders.

    Root ignores permissions; as another user, a folder the code made
    unreadable (chmod 0) is opened up and removed in turn, once per path.
    """
    retried: set[str] = set()

    def unlock_and_retry(function: Callable, failed: str, _: object) -> None:
        if failed in retried:
            return  # it failed even when unlocked: leave it rather than loop
        retried.add(failed)
        for target in (os.path.dirname(failed), failed):
            with contextlib.suppress(OSError):
                os.chmod(target, 0o700)
        with contextlib.suppress(OSError):
            if function in (os.open, os.scandir, os.listdir):
                shutil.rmtree(failed, onerror=unlock_and_retry)  # rmtree skips what it cannot open
            else:
                function(failed)

    shutil.rmtree(path, onerror=unlock_and_retry)


def rlimits(cpu_seconds: int, memory_mb: int, max_processes: int) -> Limits:
    """The rlimits to set, never above this process's own hard limits."""
    wanted = {
        # One second between soft (SIGXCPU) and hard (SIGKILL) limits.
        resource.RLIMIT_CPU: (cpu_seconds, cpu_seconds + 1),
        resource.RLIMIT_AS: (memory_mb * 2**20,) * 2,
        resource.RLIMIT_NPROC: (max_processes,) * 2,
        resource.RLIMIT_FSIZE: (FILE_SIZE_MB * 2**20,) * 2,
        resource.RLIMIT_NOFILE: (MAX_OPEN_FILES,) * 2,
        resource.RLIMIT_CORE: (0, 0),
    }
    limits = []
    for resource_id, (soft, hard) in wanted.items():
        _, current_hard = resource.getrlimit(resource_id)
        if current_hard != resource.RLIM_INFINITY:
            hard = min(hard, current_hard)
        limits.append((int(resource_id), min(soft, hard), hard))
    return limits


def run_launcher(
    code: str, stdin: str, base: str, config: dict[str, Any], interpreter: str,
    timeout: float, max_output: int, cgroups: Sequence[str] = (),
) -> tuple[int, str, str, bool, bool, float]:
    """Start the launcher in ``cgroups``, wait (or time out), kill it all, read its output.

    Returns (returncode, stdout, stderr, truncated, timed_out, wall_seconds).
    """
    with open(os.path.join(config["work"], SCRIPT_NAME), "w", encoding="utf-8",
              errors="surrogatepass") as script:
        script.write(code)
    # Outputs go to files, not pipes: RLIMIT_FSIZE bounds them on disk and
    # nothing is buffered in this process, however much the code prints.
    # The files are unnamed and outside the run's folder: the code cannot swap them.
    with tempfile.TemporaryFile(dir=base) as stdin_file, \
            tempfile.TemporaryFile(dir=base) as out, \
            tempfile.TemporaryFile(dir=base) as err:
        stdin_file.write(stdin.encode("utf-8", errors="surrogatepass"))
        stdin_file.seek(0)
        (ready_r, ready_w), (go_r, go_w) = os.pipe(), os.pipe()
        try:
            config = {**config, "ready": ready_w, "go": go_r}
            env = {"PATH": ENV_PATH, "HOME": config["cwd"], "TMPDIR": config["cwd"],
                   "LANG": "C.UTF-8"}
            started = time.monotonic()
            process = subprocess.Popen(
                [interpreter, "-I", "-S", "-c", launch_line(config)],
                stdin=stdin_file, stdout=out, stderr=err, cwd=base, env=env,
                start_new_session=True, pass_fds=(ready_w, go_r))
            try:
                add_process(cgroups, process.pid)
                os.write(go_w, b"1")
                timed_out = not _wait_for_exit(process.pid, timeout)
            finally:
                returncode = _stop(process, cgroups, spare_launcher=bool(config["jail"]))
            wall_seconds = time.monotonic() - started
            started_program = _was_ready(ready_r)
        finally:
            for fd in (ready_r, ready_w, go_r, go_w):
                os.close(fd)
        stdout, stdout_cut = _read_capped(out, max_output)
        stderr, stderr_cut = _read_capped(err, max_output)
    if not started_program and not timed_out:
        raise RuntimeError(f"the sandbox failed to start the program (exit {returncode}): "
                           f"{stderr[-2000:]}")
    return returncode, stdout, stderr, stdout_cut or stderr_cut, timed_out, wall_seconds


def launch_line(config: dict[str, Any]) -> str:
    """The ``-c`` program: import the launcher (cached bytecode) and launch the run."""
    folder = module_folder(LAUNCHER_MODULE, LAUNCHER_SOURCE)
    return (f"import sys\nsys.path.insert(0, {folder!r})\nimport {LAUNCHER_MODULE}\n"
            f"del sys.path[0]\n{LAUNCHER_MODULE}.launch({config!r})\n")


def _stop(process: subprocess.Popen, cgroups: Sequence[str], spare_launcher: bool) -> int:
    """Kill whatever is left of the run and reap its launcher; its exit status.

    With a jail and a cgroup, all but the launcher die first: the launcher then
    reaps the jail's init (whose death reaped everything in the jail) and exits,
    leaving no orphan for the host's init to reap. The group is killed last if
    the launcher is not reaped yet: its pid (the group id) cannot have been
    reused then, so killing the group hits only the run.
    """
    if cgroups:
        kill_cgroups(cgroups, spare=process.pid if spare_launcher else None)
        if spare_launcher:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=SWEEP_SECONDS)
    if process.returncode is None:
        _kill_group(process.pid)
    return process.wait()


def _was_ready(ready_r: int) -> bool:
    """Whether the launcher reported the program started (its byte is in the pipe)."""
    os.set_blocking(ready_r, False)
    try:
        return os.read(ready_r, 1) == b"1"
    except BlockingIOError:
        return False


def _wait_for_exit(pid: int, timeout: float) -> bool:
    """Whether child ``pid`` exited within ``timeout`` seconds, leaving it unreaped."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return _poll_for_exit(pid, timeout)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)  # readable once the process has exited
        return bool(poller.poll(max(0, int(timeout * 1000))))
    finally:
        os.close(pidfd)


def _poll_for_exit(pid: int, timeout: float) -> bool:
    """``_wait_for_exit`` for kernels without pidfds: poll, backing off to 20 ms."""
    deadline, pause = time.monotonic() + timeout, 0.001
    while True:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def _kill_group(pgid: int) -> None:
    """SIGKILL the process group ``pgid`` if anything is left in it."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_capped(file: BinaryIO, max_output: int) -> tuple[str, bool]:
    """The first ``max_output`` bytes of ``file`` as text, and whether there was more."""
    file.seek(0)
    data = file.read(max_output + 1)
    return data[:max_output].decode("utf-8", errors="replace"), len(data) > max_output

"""Run untrusted Python (a model's answer) in a contained subprocess.

Verifiers for code tasks must execute what the policy wrote, and a policy
under RL pressure writes infinite loops, fork bombs and output floods long
before it writes anything malicious. ``run_python`` contains one run with the
standard library alone:

- a fresh private working directory, removed afterwards whatever happens;
- ``python -I -S`` with a scrubbed environment, so none of the parent's
  variables (tokens, paths) leak in;
- a new session (the whole process group can be killed) and resource limits
  on CPU time, address space, processes, file size, open files and core dumps;
- as root, a fresh network namespace (only a downed loopback: nothing is
  reachable), then a drop to a dedicated unprivileged uid for this run alone;
  without the namespace, a prelude that disables the ``socket`` module instead;
- a wall-clock timeout that kills the process group, and afterwards every
  process left with the run's uid, including those that left the group.

Why a uid per run rather than one shared ``nobody``: RLIMIT_NPROC counts the
processes of a uid, so runs sharing one would starve each other (a fork bomb
in one run would make its neighbours fail to start), and "kill everything of
this uid" would hit neighbours and system daemons. With a uid of its own a run
can be swept clean even of processes that called ``setsid`` to escape the
process group.

Not contained: reading world-readable files, writing to world-writable
directories (``/tmp``, ``/dev/shm``; ``TMPDIR`` points into the run's folder so
well-behaved code stays there), and disk use beyond one file's size limit
while the run lasts. Orphans that were killed are reaped by init, which may
take a moment (about a second here). When not root, there is no uid drop and RLIMIT_NPROC
counts all of the user's processes; the prelude, when used, is a guard against
accidents, not a wall (ctypes or a fresh interpreter get past it).
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import os
import pwd
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Container, Iterable, Literal

NetworkIsolation = Literal["netns", "prelude"]
Limits = list[tuple[int, tuple[int, int]]]  # (resource.RLIMIT_*, (soft, hard))

# Candidate uids for runs, one per concurrent run; ids known to the user
# database are skipped so that no real account's processes are ever swept.
SANDBOX_UIDS = range(64_000, 64_064)
SCRIPT_NAME = "main.py"
ENV_PATH = "/usr/bin:/bin"
FILE_SIZE_MB = 16  # largest file a run may write, its stdout and stderr included
MAX_OPEN_FILES = 64
SWEEP_SECONDS = 1.0  # how long to wait for killed leftovers to disappear

CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38

# The prelude used when no network namespace can be made. The user code then
# runs in a fresh namespace as __main__, as it would from the script itself.
NO_NETWORK_PRELUDE = f"""\
import _socket, socket, sys
def _k2rl_no_network(*args, **kwargs):
    raise PermissionError("network access is disabled in the k2rl sandbox")
for _module in (socket, _socket):
    for _name in ("socket", "SocketType", "socketpair", "fromfd", "create_connection",
                  "create_server", "getaddrinfo", "gethostbyname", "gethostbyname_ex"):
        if hasattr(_module, _name):
            setattr(_module, _name, _k2rl_no_network)
sys.argv[0] = {SCRIPT_NAME!r}
with open({SCRIPT_NAME!r}, "rb") as _file:
    _code = compile(_file.read(), {SCRIPT_NAME!r}, "exec")
exec(_code, {{"__name__": "__main__", "__builtins__": __builtins__}})
"""


def _load_libc() -> ctypes.CDLL | None:
    """The C library with argument types set, or None where it cannot be loaded."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.unshare.argtypes = [ctypes.c_int]
        # prctl takes unsigned longs: passing plain ints would leave the upper
        # register halves undefined, and the kernel rejects nonzero unused args.
        libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
        return libc
    except (OSError, AttributeError):
        return None


_LIBC = _load_libc()


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


# --- one run ---------------------------------------------------------------


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
) -> SandboxResult:
    """Run ``code`` as a script in the sandbox, feeding it ``stdin``.

    ``network`` forces an isolation mode ("auto": the namespace where it
    works, else the prelude); ``python`` names the interpreter (default: the
    first one the sandbox user can run, see ``sandbox_python``). Limits that
    are exceeded end the run; they never raise here. Errors of the host (no
    usable interpreter, a namespace that was promised but failed) do raise.
    """
    isolation = network_isolation() if network == "auto" else network
    interpreter = python or sandbox_python()
    limits = _limits(cpu_seconds, memory_mb, max_processes)
    uid = _acquire_uid() if os.geteuid() == 0 else None
    zombies = False
    try:
        workdir = tempfile.mkdtemp(prefix="k2rl-sandbox-")
        try:
            if uid is not None:
                os.chown(workdir, uid, uid)  # the run's own folder is all it may write
            return _run(code, stdin, workdir, uid, isolation, interpreter, timeout,
                        max_output, limits)
        finally:
            # Processes before files: a live one could still write into the folder.
            # The sweep is also what meets a process that left the group by
            # calling setsid, and whatever a failed spawn or read left behind.
            try:
                zombies = uid is not None and _kill_user(uid)
            finally:
                _remove_tree(workdir)
    finally:
        if uid is not None:
            _release_uid(uid, zombies)


def _run(
    code: str,
    stdin: str,
    workdir: str,
    uid: int | None,
    isolation: NetworkIsolation,
    interpreter: str,
    timeout: float,
    max_output: int,
    limits: Limits,
) -> SandboxResult:
    """Start the code in ``workdir``, wait (or time out), kill its group, read its output."""
    with open(os.path.join(workdir, SCRIPT_NAME), "w", encoding="utf-8",
              errors="surrogatepass") as script:
        script.write(code)
    # Outputs go to files, not pipes: RLIMIT_FSIZE bounds them on disk and
    # nothing is buffered in this process, however much the code prints.
    # The files are unnamed, so the code cannot swap them either.
    with tempfile.TemporaryFile(dir=workdir) as stdin_file, \
            tempfile.TemporaryFile(dir=workdir) as out, \
            tempfile.TemporaryFile(dir=workdir) as err:
        stdin_file.write(stdin.encode("utf-8", errors="surrogatepass"))
        stdin_file.seek(0)
        args = ["-c", NO_NETWORK_PRELUDE] if isolation == "prelude" else [SCRIPT_NAME]
        env = {"PATH": ENV_PATH, "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8"}
        started = time.monotonic()
        # start_new_session makes the group to kill; namespace and uid come in
        # preexec_fn, since Popen's own user= would drop root before unshare.
        process = subprocess.Popen(
            [interpreter, "-I", "-S", *args], stdin=stdin_file, stdout=out, stderr=err,
            cwd=workdir, env=env, start_new_session=True,
            preexec_fn=_confine(limits, uid, isolation == "netns"),
        )
        try:
            timed_out = not _wait_for_exit(process.pid, timeout)
        finally:
            # The group leader is not reaped yet, so its pid (the group id)
            # cannot have been reused: killing the group hits only the run.
            _kill_group(process.pid)
            returncode = process.wait()
        wall_seconds = time.monotonic() - started
        stdout, stdout_cut = _read_capped(out, max_output)
        stderr, stderr_cut = _read_capped(err, max_output)
    return SandboxResult(returncode, stdout, stderr, stdout_cut or stderr_cut,
                         timed_out, wall_seconds, isolation)


def _limits(cpu_seconds: int, memory_mb: int, max_processes: int) -> Limits:
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
        limits.append((resource_id, (min(soft, hard), hard)))
    return limits


def _confine(limits: Limits, uid: int | None, netns: bool) -> Callable[[], None]:
    """The preexec_fn: namespace first (it needs root), then limits, then the uid drop.

    Everything it uses is computed beforehand: it runs in the forked child of
    a possibly multithreaded process, where less Python is safer.
    """

    def confine() -> None:
        if netns and (_LIBC is None or _LIBC.unshare(CLONE_NEWNET) != 0):
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET) failed")
        for resource_id, limit in limits:
            resource.setrlimit(resource_id, limit)
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        if _LIBC is not None:
            # Best-effort hardening, so failures are ignored: setuid binaries
            # gain nothing, and the run dies with the thread that started it.
            # PDEATHSIG is cleared by the uid change, hence after it.
            _LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return confine


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


def _remove_tree(path: str) -> None:
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


# --- uids and leftover processes --------------------------------------------

_free_uids: collections.deque[int] | None = None
_zombie_uids: set[int] = set()  # released while dead processes of theirs awaited reaping
_uids_changed = threading.Condition()


def _acquire_uid() -> int:
    """A uid that no current run uses and no process holds; blocks while there is none.

    A uid released with zombies is skipped until they are reaped: they still
    count against its RLIMIT_NPROC and would starve the next run.
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
                if uid not in _zombie_uids or not processes_of((uid,)):
                    _zombie_uids.discard(uid)
                    return uid
                _free_uids.append(uid)
            _uids_changed.wait(0.05)  # for a release, or for zombies to be reaped


def _release_uid(uid: int, zombies: bool) -> None:
    """Return ``uid`` to the free list; ``zombies``: it still has unreaped processes."""
    with _uids_changed:
        assert _free_uids is not None
        if zombies:
            _zombie_uids.add(uid)
        _free_uids.append(uid)
        _uids_changed.notify()


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
    hand: this runs after every run, over every process of the host.
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


def _kill_user(uid: int) -> bool:
    """SIGKILL every process of ``uid``; whether dead but unreaped ones remain.

    A process with a pending SIGKILL cannot fork, so repeated sweeps converge
    even on a fork bomb. Zombies are left to their parent (orphans to init,
    which may reap them only after a while), except those reparented to this
    process (when it is PID 1 or a subreaper): nobody else would reap them.
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


# --- host probes ----------------------------------------------------------

_network_lock = threading.Lock()
_python_lock = threading.Lock()
_network_isolation: NetworkIsolation | None = None
_sandbox_python: str | None = None


def network_isolation() -> NetworkIsolation:
    """"netns" where this process can make network namespaces, else "prelude" (probed once)."""
    global _network_isolation
    with _network_lock:
        if _network_isolation is None:
            try:
                subprocess.run([sys.executable, "-I", "-S", "-c", ""], check=True,
                               preexec_fn=_confine([], None, True))
                _network_isolation = "netns"
            except (OSError, subprocess.SubprocessError):
                _network_isolation = "prelude"
        return _network_isolation


def sandbox_python() -> str:
    """The interpreter runs use: the first candidate that starts as the sandbox user.

    As root the code runs under an unprivileged uid, which may be unable to
    reach this process's own interpreter (e.g. a venv whose Python lives in
    /root), so candidates are tried with a real run; the answer is cached.
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
    """Whether ``interpreter`` runs a trivial script in the sandbox."""
    try:
        result = run_python("pass", timeout=10.0, network="prelude", python=interpreter)
    except (OSError, subprocess.SubprocessError):
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

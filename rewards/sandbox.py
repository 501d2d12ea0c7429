"""Run untrusted Python (a model's answer) in a contained subprocess.

Verifiers for code tasks must execute what the policy wrote, and a policy under
RL pressure writes infinite loops, fork bombs, memory bombs and output floods
long before it writes anything malicious; it also learns whatever pays, so the
sandbox must hold against code that probes its walls on purpose. Threat model:
the code is hostile for as long as its run lasts. It must not read or write
anything of the host (files, sockets, other processes), must not outlive its
run, and must not take more than its share of memory, processes, CPU time, disk
or output. The kernel is trusted: there is no seccomp filter, so a kernel bug
reachable from an unprivileged process (user namespaces included, which this
kernel lets any process make) is out of scope.

Each run is started by a small trusted launcher (``LAUNCHER``, run by the
sandbox's Python as root) that imports the run's trusted ``preload`` modules,
builds the walls, drops privileges and then runs the script in the same
interpreter (no second interpreter start). Their bytecode is cached in a
root-only folder of the host (``private_folder()``, which also holds the
locks that keep host processes from sharing a run uid). As root, where the
kernel allows it, a run gets:

- **a cgroup of its own** (v2 if the memory controller is delegated to this
  process's cgroup, else v1's memory and pids controllers) that caps the memory
  and the process count of the run's whole process tree, not of each process.
  The host moves the launcher into it before the launcher may go on, and kills
  whatever is left in it afterwards. ``SandboxResult.memory_peak_mb`` is the
  tree's peak. Where no cgroup can be made (``memory_cap()`` tells which is in
  force, and a warning says so once), the tree is capped by arithmetic instead
  (``fallback_caps``): the private tmpfs mounts together get a quarter of
  ``memory_mb`` (``size=``), and the rest is split between at most
  ``max_processes`` processes, each of at least ``FALLBACK_PROCESS_MB``, so that
  RLIMIT_NPROC (processes of the run's uid, threads included) times RLIMIT_AS
  (each process's address space) plus the tmpfs sizes is at most ``memory_mb``.
  With the defaults (512 MB, 32 processes) a run gets 4 processes of 96 MB and
  128 MB of tmpfs: four children of 300 MB or 1.2 GB of /tmp files cannot be made.
  A ``memory_mb`` too small for one process is refused with a ValueError.
- **a jail**: new mount, PID, IPC, UTS and network namespaces. Its root is a
  fresh read-only tmpfs with read-only, nosuid binds of the system folders
  (/usr, /etc and the /bin, /lib links), five device nodes (null, zero, full,
  random, urandom), a new /proc that shows the run's processes only, and
  private tmpfs at /tmp, /var/tmp and /dev/shm (charged to the cgroup, or
  sized to a share of ``memory_mb`` without one; gone with the jail). The
  cwd is a folder in the jail's /tmp holding a copy of the script. Nothing
  else of the host exists in it: not the project, not /root or /home, not
  /run, /sys or the host's /tmp, so no host Unix socket can be
  reached (filesystem sockets need a path; abstract ones belong to the network
  namespace, which has only a downed loopback), and no SysV IPC object of the
  host either. The jail's PID 1 is a trusted init that reaps orphans; when the
  program ends the init exits and the kernel kills every process left in the
  namespace, setsid or not: nothing outlives a run. ``jail_available()`` says
  whether the kernel allowed it; if not, a warning says so once and runs fall
  back to a network namespace alone (or the no-network prelude) and the host's
  view of files, within their uid's rights.
- **a uid of its own** (see below), no supplementary groups, no new privileges,
  and resource limits on CPU time, address space, processes, file size, open
  files and core dumps; a scrubbed environment and ``python -I -S``.
- a wall-clock timeout, after which everything is killed: the cgroup's
  processes, the process group, and (without a jail and a cgroup, which reap
  everything themselves) every process left with the run's uid.

Why a uid per run rather than one shared ``nobody``: RLIMIT_NPROC counts the
processes of a uid, so runs sharing one would starve each other, and "kill
everything of this uid" (the fallback sweep) would hit neighbours.

Not contained: CPU share (the cgroup caps memory and processes, not CPU time
beyond RLIMIT_CPU), and, without a jail, disk use in the run's folder beyond one
file's size limit while the run lasts. Without root there is no uid drop, no
jail and no cgroup: the limits and the prelude are guards against accidents,
not walls (ctypes or a fresh interpreter get past the prelude).
"""

from __future__ import annotations

import collections
import contextlib
import errno
import fcntl
import hashlib
import logging
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

logger = logging.getLogger(__name__)

NetworkIsolation = Literal["netns", "prelude"]
Limits = list[tuple[int, int, int]]  # (resource.RLIMIT_*, soft, hard)

# Candidate uids for runs, one per concurrent run; ids known to the user
# database are skipped so that no real account's processes are ever swept.
SANDBOX_UIDS = range(64_000, 64_064)
SCRIPT_NAME = "main.py"
ENV_PATH = "/usr/bin:/bin"
FILE_SIZE_MB = 16  # largest file a run may write, its stdout and stderr included
MAX_OPEN_FILES = 64
SWEEP_SECONDS = 1.0  # how long to wait for killed leftovers to disappear
LAUNCHER_PROCESSES = 2  # the jail's launcher and init count against the cgroup's pids.max
# Without a cgroup (see the module doc): the smallest address space a run's process gets
# (the interpreter, the launcher's imports and the code harness fit in about 40 MB), and
# the share of memory_mb the private tmpfs mounts get between them.
FALLBACK_PROCESS_MB = 96
FALLBACK_TMPFS_SHARE = 4  # a quarter
TMPFS_MOUNTS = ("/tmp", "/var/tmp", "/dev/shm")

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
JAIL_NAMESPACES = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS

# What the jail shows of the host, read-only (the ones that exist; symlinks are copied).
JAIL_SYSTEM_PATHS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
JAIL_DEVICES = ("null", "zero", "full", "random", "urandom")
PIVOT_ROOT_SYSCALLS = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}

# The launcher: a module (kept with its cached bytecode in ``private_folder()``)
# that ``python -I -S -c`` imports to call ``launch({...})``. It is trusted code
# and imports little (it is on every run's critical path). It first waits for the host's "go": meanwhile the
# host moves it into the run's cgroup (a cgroup v1 move waits for an RCU grace
# period, ~5-10 ms here, which so overlaps the interpreter's start). In a jail
# it forks twice: the launcher stays outside the new PID namespace and waits;
# its child is the namespace's init (root: builds the mounts, reaps orphans);
# the init's child drops to the run's uid and runs the script. The program's
# status flows back up so that the launcher exits as the program did. The
# "ready" fd gets one byte just before the script runs: a run that never wrote
# it failed to start (a host error, raised as such).
LAUNCHER = r'''
import os, resource, sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE, MNT_DETACH = 4096, 8192, 16384, 1 << 18, 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, SIGKILL, SIGSTOP = 1, 38, 9, 19


def launch(config):
    if os.read(config["go"], 1) != b"1":
        os._exit(125)  # the host could not move this process into the run's cgroup
    os.close(config["go"])
    for folder, name in config["preload"]:  # trusted modules, imported while still outside
        sys.path.insert(0, folder)
        __import__(name)
        del sys.path[0]
    libc = load_libc()
    import gc
    gc.freeze()  # what the launcher made stays put: forked children copy fewer pages
    if config["unshare"]:
        check(libc, libc.unshare(config["unshare"]), "unshare")
    if config["jail"]:
        enter_jail(libc, config)
    become_program(libc, config)


def load_libc():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.unshare.argtypes = [ctypes.c_int]
    libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    libc.get_errno = ctypes.get_errno
    return libc


def check(libc, result, what):
    if result != 0:
        code = libc.get_errno()
        raise OSError(code, what + ": " + os.strerror(code))


def enter_jail(libc, config):
    """Returns in the program's process, pid 2 of a new PID namespace, inside the jail."""
    status_r, status_w = os.pipe()
    init = os.fork()
    if init:
        os.close(status_w)
        os.close(config["ready"])
        mirror_init(init, status_r)
    os.close(status_r)
    libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
    build_jail(libc, config, config["jail"])
    program = os.fork()
    if program:
        os.close(config["ready"])
        reap_until(program, status_w)
    os.close(status_w)


def mirror_init(init, status_r):
    """The launcher: wait for the init, then end as the program ended."""
    _, status = os.waitpid(init, 0)
    reported = os.read(status_r, 32)
    status = int(reported) if reported else status
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        import _signal
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if -code not in (SIGKILL, SIGSTOP):
            _signal.signal(-code, _signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code
    os._exit(code)


def reap_until(program, status_w):
    """The init: reap every child until the program ends, pass its status up, exit.

    The init's exit makes the kernel kill whatever else is left in the namespace.
    """
    while True:
        pid, status = os.wait()
        if pid == program:
            os.write(status_w, str(status).encode())
            os._exit(0)


def build_jail(libc, config, jail):
    """Mount the jail at jail["root"] and enter it; the script is copied to its cwd, in /tmp."""
    root = jail["root"]

    def mount(source, target, fstype, flags, data=None):
        check(libc, libc.mount(source and source.encode(), target.encode(),
                               fstype and fstype.encode(), flags, data and data.encode()),
              "mount " + target)

    def bind(source, target, read_only):
        mount(source, target, None, MS_BIND)
        if read_only:
            mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)

    mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing below propagates to the host
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
    for path in jail["system"]:
        if os.path.islink(path):
            os.symlink(os.readlink(path), root + path)
        elif os.path.isdir(path):
            os.makedirs(root + path)
            bind(path, root + path, True)
    os.mkdir(root + "/dev")
    mount("tmpfs", root + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755")
    for name in jail["devices"]:
        open(root + "/dev/" + name, "w").close()
        bind("/dev/" + name, root + "/dev/" + name, False)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, root + "/dev/" + name)
    for path in jail["tmpfs"]:
        os.makedirs(root + path)
        mount("tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV,
              "size=%dm,mode=1777" % jail["tmpfs_mb"])
    os.mkdir(root + "/proc")
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    cwd = root + config["cwd"]  # in the jail's /tmp: a tmpfs, in memory, gone with the jail
    os.makedirs(cwd, mode=0o700)
    with open(os.path.join(config["work"], config["script"]), "rb") as source:
        with open(os.path.join(cwd, config["script"]), "wb") as copy:
            copy.write(source.read())
    if config["uid"] is not None:
        os.chown(cwd, config["uid"], config["uid"])
    os.chdir(root)
    if jail["pivot_root"]:
        check(libc, libc.syscall(jail["pivot_root"], b".", b"."), "pivot_root")
        check(libc, libc.umount2(b".", MNT_DETACH), "umount the host's root")
    else:
        mount(".", "/", None, MS_MOVE)
        os.chroot(".")
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def become_program(libc, config):
    os.chdir(config["cwd"])
    for resource_id, soft, hard in config["limits"]:
        resource.setrlimit(resource_id, (soft, hard))
    if config["uid"] is not None:
        os.setgroups([])
        os.setgid(config["uid"])
        os.setuid(config["uid"])
    # After the uid change, which clears PDEATHSIG: the run dies with its parent.
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
    if config["prelude"]:
        disable_network()
    os.write(config["ready"], b"1")
    os.close(config["ready"])
    run_script(config["script"])


def disable_network():
    import _socket, socket
    def refuse(*args, **kwargs):
        raise PermissionError("network access is disabled in the k2rl sandbox")
    for module in (socket, _socket):
        for name in ("socket", "SocketType", "socketpair", "fromfd", "create_connection",
                     "create_server", "getaddrinfo", "gethostbyname", "gethostbyname_ex"):
            if hasattr(module, name):
                setattr(module, name, refuse)


def run_script(path):
    """Run the script as __main__ in a fresh module, as ``python path`` would."""
    sys.argv[:] = [path]
    sys.path[:] = [entry for entry in sys.path if entry not in ("", ".")]
    main = type(sys)("__main__")
    main.__file__ = path
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    try:
        with open(path, "rb") as file:
            code = compile(file.read(), path, "exec")
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as error:
        error = error.with_traceback(error.__traceback__.tb_next)  # from the script's frame on
        sys.excepthook(type(error), error, error.__traceback__)
        sys.exit(1)
'''


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
    uid = _acquire_uid() if root else None
    zombies = False
    cgroups: list[str] = []
    try:
        base = tempfile.mkdtemp(prefix="k2rl-sandbox-")
        try:
            work = _make_folders(base, uid)
            backend = _cgroup_backend()
            if backend is not None and uid is not None:
                cgroups = _make_cgroups(backend, f"k2rl-sandbox-{os.getpid()}-{uid}",
                                        memory_mb, max_processes)
            # Without a cgroup, only as root do per-uid process counts cap the tree.
            processes, process_mb, tmpfs_mb = (
                (max_processes, memory_mb, memory_mb) if cgroups or uid is None
                else fallback_caps(memory_mb, max_processes))
            config = {
                "script": SCRIPT_NAME, "work": work, "uid": uid,
                "cwd": _jail_cwd(base) if jail else work,
                "unshare": (JAIL_NAMESPACES if jail else 0)
                           | (CLONE_NEWNET if isolation == "netns" else 0),
                "jail": _jail_config(base, tmpfs_mb) if jail else None,
                "limits": _limits(cpu_seconds, process_mb, processes),
                "prelude": isolation == "prelude",
                "preload": [(module_folder(name, source), name)
                            for name, source in (preload or {}).items()],
            }
            result = _run(code, stdin, base, config, interpreter, timeout, max_output, cgroups)
            peak = _memory_peak_mb(cgroups)
            return SandboxResult(*result, isolation, peak)
        finally:
            # Processes before files: a live one could still write into the folder.
            try:
                if cgroups:
                    _kill_cgroups(cgroups)
                # Only in a jail is every process of the run reaped when its
                # cgroup empties; elsewhere orphans wait for the host's init.
                if uid is not None and not (jail and _cgroups_reap(cgroups)):
                    zombies = _kill_user(uid)
            finally:
                _remove_cgroups(cgroups)
                _remove_tree(base)
    finally:
        if uid is not None:
            _release_uid(uid, zombies)


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


def _make_folders(base: str, uid: int | None) -> str:
    """The run's folder (``base``/work, owned by ``uid``: its cwd without a jail, the
    script's only copy in the jail) and the jail's mount point (``base``/root)."""
    os.chmod(base, 0o711)  # the uid may pass through to its folder, not list the others
    work = os.path.join(base, "work")
    os.mkdir(work, 0o700)
    os.mkdir(os.path.join(base, "root"), 0o700)
    if uid is not None:
        os.chown(work, uid, uid)  # the run's own folder is all it may write
    return work


def _jail_cwd(base: str) -> str:
    """The run's cwd in the jail: in its /tmp, named like the host folder."""
    return f"/tmp/{os.path.basename(base)}/work"


def _jail_config(base: str, tmpfs_mb: int) -> dict[str, Any]:
    """What the launcher needs to build the jail in ``base``/root (``tmpfs_mb`` per mount)."""
    return {
        "root": os.path.join(base, "root"),
        "system": [path for path in JAIL_SYSTEM_PATHS if os.path.lexists(path)],
        "devices": [name for name in JAIL_DEVICES if os.path.exists("/dev/" + name)],
        "tmpfs_mb": tmpfs_mb,
        "tmpfs": TMPFS_MOUNTS,
        "pivot_root": PIVOT_ROOT_SYSCALLS.get(os.uname().machine),
    }


def _run(
    code: str, stdin: str, base: str, config: dict[str, Any], interpreter: str,
    timeout: float, max_output: int, cgroups: list[str] = (),
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
                [interpreter, "-I", "-S", "-c", _launch_line(config)],
                stdin=stdin_file, stdout=out, stderr=err, cwd=base, env=env,
                start_new_session=True, pass_fds=(ready_w, go_r))
            try:
                for folder in cgroups:
                    _write(os.path.join(folder, "cgroup.procs"), str(process.pid))
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


def _launch_line(config: dict[str, Any]) -> str:
    """The ``-c`` program: import the launcher (cached bytecode) and launch the run."""
    folder = module_folder("k2rl_sandbox_launcher", LAUNCHER)
    return (f"import sys\nsys.path.insert(0, {folder!r})\nimport k2rl_sandbox_launcher\n"
            f"del sys.path[0]\nk2rl_sandbox_launcher.launch({config!r})\n")


def _stop(process: subprocess.Popen, cgroups: list[str], spare_launcher: bool) -> int:
    """Kill whatever is left of the run and reap its launcher; its exit status.

    With a jail and a cgroup, all but the launcher die first: the launcher then
    reaps the jail's init (whose death reaped everything in the jail) and exits,
    leaving no orphan for the host's init to reap. The group is killed last if
    the launcher is not reaped yet: its pid (the group id) cannot have been
    reused then, so killing the group hits only the run.
    """
    if cgroups:
        _kill_cgroups(cgroups, spare=process.pid if spare_launcher else None)
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
        limits.append((int(resource_id), min(soft, hard), hard))
    return limits


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


# --- cgroups: memory and processes of a whole run ------------------------------


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
    backend = _cgroup_backend()
    return f"cgroup v{backend.version}" if backend else "rlimit"


def _cgroup_backend() -> CgroupBackend | None:
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
        folders = _make_cgroups(backend, f"k2rl-sandbox-probe-{os.getpid()}", 64, 8)
    except OSError:
        return False
    _remove_cgroups(folders)
    return True


def _make_cgroups(backend: CgroupBackend, name: str, memory_mb: int,
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
            _kill_cgroups([folder])
            for index, (file_name, value) in enumerate(limits.items()):
                try:
                    _write(os.path.join(folder, file_name), value)
                except OSError:
                    if index == 0:
                        raise  # the main limit; the others (swap) are optional
    except OSError:
        _remove_cgroups(folders)
        raise
    return folders


def _kill_cgroups(folders: list[str], spare: int | None = None) -> None:
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


def _cgroups_reap(folders: list[str]) -> bool:
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


def _memory_peak_mb(folders: list[str]) -> float | None:
    """The highest memory use of the run's process tree, in MiB, if the kernel records it."""
    for folder in folders:
        for name in ("memory.max_usage_in_bytes", "memory.peak"):
            text = _read(os.path.join(folder, name)).strip()
            if text.isdigit():
                return int(text) / 2**20
    return None


def _remove_cgroups(folders: list[str]) -> None:
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


# --- uids and leftover processes --------------------------------------------

_free_uids: collections.deque[int] | None = None
_zombie_uids: set[int] = set()  # released while dead processes of theirs awaited reaping
_uid_locks: dict[int, int] = {}  # uid -> the fd of its lock file, while this process holds it
_uids_changed = threading.Condition()


def _acquire_uid() -> int:
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
                if (uid not in _zombie_uids or not processes_of((uid,))) and _lock_uid(uid):
                    _zombie_uids.discard(uid)
                    return uid
                _free_uids.append(uid)
            _uids_changed.wait(0.05)  # for a release, zombies to be reaped, or a lock


def _release_uid(uid: int, zombies: bool) -> None:
    """Return ``uid`` to the free list; ``zombies``: it still has unreaped processes."""
    with _uids_changed:
        assert _free_uids is not None
        os.close(_uid_locks.pop(uid))  # unlocks it for other processes
        if zombies:
            _zombie_uids.add(uid)
        _free_uids.append(uid)
        _uids_changed.notify()


def _lock_uid(uid: int) -> bool:
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


def _kill_user(uid: int) -> bool:
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


# --- the host's private folder: uid locks and trusted modules -------------------

PRIVATE_FOLDERS = ("/run/k2rl-sandbox", os.path.join(tempfile.gettempdir(),
                                                     f"k2rl-sandbox-{os.geteuid()}"))
_private_lock = threading.Lock()
_private_folder: str | None = None


def private_folder() -> str:
    """A folder only this user may enter (root's, as root): no run can see or touch it.

    It holds the uid locks and the trusted modules runs import before they are
    confined (the launcher, and ``preload`` modules such as the code harness):
    written once, their bytecode is cached there instead of compiled per run.
    """
    global _private_folder
    with _private_lock:
        if _private_folder is None:
            for folder in PRIVATE_FOLDERS:
                with contextlib.suppress(OSError):
                    os.makedirs(folder, mode=0o700, exist_ok=True)
                    if os.lstat(folder).st_uid == os.geteuid() and os.path.isdir(folder):
                        os.chmod(folder, 0o700)
                        _private_folder = folder
                        break
            else:
                raise RuntimeError(f"no private folder for the sandbox among {PRIVATE_FOLDERS}")
        return _private_folder


def module_folder(name: str, source: str) -> str:
    """The private folder holding module ``name`` with this ``source`` (written if new)."""
    digest = hashlib.sha256(f"{name}\0{source}".encode()).hexdigest()[:16]
    folder = os.path.join(private_folder(), "modules", digest)
    path = os.path.join(folder, name + ".py")
    if not os.path.exists(path):
        os.makedirs(folder, mode=0o700, exist_ok=True)
        temporary = f"{path}.{os.getpid()}.{threading.get_ident()}"
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(source)
        os.replace(temporary, path)  # atomic: a concurrent run sees all of it or none
    return folder


# --- host probes ----------------------------------------------------------

_probe_lock = threading.Lock()
_python_lock = threading.Lock()
_network_isolation: NetworkIsolation | None = None
_jail: bool | None = None
_sandbox_python: str | None = None


def network_isolation() -> NetworkIsolation:
    """"netns" where this process can make network namespaces, else "prelude" (probed once)."""
    global _network_isolation
    with _probe_lock:
        if _network_isolation is None:
            works = _launcher_works({"unshare": CLONE_NEWNET, "jail": None})
            _network_isolation = "netns" if works else "prelude"
        return _network_isolation


def jail_available() -> bool:
    """Whether runs get the jail (mount, PID and other namespaces); probed once, as root only."""
    global _jail
    with _probe_lock:
        if _jail is None:
            root = os.geteuid() == 0
            _jail = root and _launcher_works({"unshare": JAIL_NAMESPACES}, jail=True)
            if _jail:
                logger.info("k2rl sandbox: runs are jailed (private mount, PID, IPC, UTS and "
                            "network namespaces; a minimal read-only root)")
            else:
                logger.warning("k2rl sandbox: no jail (%s); runs see the host's files and "
                               "processes, within their uid's rights",
                               "the kernel refused mount/PID namespaces" if root else "not root")
        return _jail


def _launcher_works(overrides: dict[str, Any], jail: bool = False) -> bool:
    """Whether the launcher, run by this interpreter without a uid drop, gets a script going."""
    base = tempfile.mkdtemp(prefix="k2rl-sandbox-probe-")
    try:
        work = _make_folders(base, None)
        config = {"script": SCRIPT_NAME, "work": work, "uid": None, "preload": [],
                  "cwd": _jail_cwd(base) if jail else work,
                  "limits": [], "prelude": False, "jail": _jail_config(base, 16) if jail else None,
                  **overrides}
        _run("import sys\nsys.exit(0 if sys.argv == ['main.py'] else 1)", "", base, config,
             sys.executable, 30.0, 10_000)
        return True
    except (OSError, subprocess.SubprocessError, RuntimeError):
        return False
    finally:
        _remove_tree(base)


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

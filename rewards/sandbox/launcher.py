"""The sandbox's launcher: the trusted code that starts a run, as root, and confines it.

It is not imported by the host. ``process.launch_line`` copies this file into the
root-only private folder (``private.module_folder``, as module ``k2rl_sandbox_launcher``,
where its bytecode is cached) and the sandbox's interpreter runs it with
``python -I -S -c``, which imports it from there and calls ``launch({...})`` with the
run's config as a literal dict. So it must stand alone: the standard library only,
imported late and little (it is on every run's critical path; no ``__future__`` or
``typing``, so annotations that older Pythons cannot evaluate are quoted), and it must
run on whichever Python the sandbox picks (``run.sandbox_python``).

What it does, in order: it first waits for the host's "go": meanwhile the host moves it
into the run's cgroup (a cgroup v1 move waits for an RCU grace period, ~5-10 ms here,
which so overlaps the interpreter's start). It imports the run's trusted ``preload``
modules while still unconfined. In a jail it forks twice: the launcher stays outside the
new PID namespace and waits; its child is the namespace's init (root: builds the mounts,
reaps orphans); the init's child drops to the run's uid and runs the script. The
program's status flows back up so that the launcher exits as the program did. The
"ready" fd gets one byte just before the script runs: a run that never wrote it failed
to start (a host error, raised as such).
"""

import os
import resource
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE, MNT_DETACH = 4096, 8192, 16384, 1 << 18, 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, SIGKILL, SIGSTOP = 1, 38, 9, 19
# A read-only view of a host folder: no set-uid binaries, no device nodes.
READ_ONLY = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV
# The jail's /dev links into its own /proc.
DEV_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"))
# The names that disable_network replaces in socket and _socket.
NETWORK_NAMES = ("socket", "SocketType", "socketpair", "fromfd", "create_connection",
                 "create_server", "getaddrinfo", "gethostbyname", "gethostbyname_ex")


def launch(config: dict) -> None:
    """Start the run that ``config`` describes; returns only in the program's process."""
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
    """libc through ctypes, with the argument types of the calls the launcher makes."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.unshare.argtypes = [ctypes.c_int]
    libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    libc.get_errno = ctypes.get_errno
    return libc


def check(libc, result: int, what: str) -> None:
    """Raise the call's errno as an OSError naming ``what`` if ``result`` is not 0."""
    if result != 0:
        code = libc.get_errno()
        raise OSError(code, what + ": " + os.strerror(code))


def enter_jail(libc, config: dict) -> None:
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


def mirror_init(init: int, status_r: int) -> None:
    """The launcher: wait for the init, then end as the program ended."""
    _, status = os.waitpid(init, 0)
    code = program_exit_code(status, os.read(status_r, 32))
    if code < 0:
        import _signal
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if -code not in (SIGKILL, SIGSTOP):
            _signal.signal(-code, _signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code
    os._exit(code)


def program_exit_code(init_status: int, reported: bytes) -> int:
    """The program's exit code (negative: its signal) from what its init reported.

    The init writes the program's wait status before it exits; if it wrote nothing
    (it died first), the init's own status stands.

    >>> program_exit_code(0, b"256"), program_exit_code(0, b"9"), program_exit_code(9, b"")
    (1, -9, -9)
    """
    status = int(reported) if reported else init_status
    return os.waitstatus_to_exitcode(status)


def reap_until(program: int, status_w: int) -> None:
    """The init: reap every child until the program ends, pass its status up, exit.

    The init's exit makes the kernel kill whatever else is left in the namespace.
    """
    while True:
        pid, status = os.wait()
        if pid == program:
            os.write(status_w, str(status).encode())
            os._exit(0)


def mount(libc, source: "str | None", target: str, fstype: "str | None", flags: int,
          data: "str | None" = None) -> None:
    """mount(2), raising OSError if it fails."""
    check(libc, libc.mount(source and source.encode(), target.encode(),
                           fstype and fstype.encode(), flags, data and data.encode()),
          "mount " + target)


def bind(libc, source: str, target: str, read_only: bool) -> None:
    """Bind ``source`` at ``target``; ``read_only``: remounted read-only, nosuid and nodev."""
    mount(libc, source, target, None, MS_BIND)
    if read_only:
        mount(libc, None, target, None, READ_ONLY)


def build_jail(libc, config: dict, jail: dict) -> None:
    """Mount the jail at jail["root"] and enter it; the script is copied to its cwd, in /tmp."""
    root = jail["root"]
    mount(libc, None, "/", None, MS_REC | MS_PRIVATE)  # nothing below propagates to the host
    mount(libc, "tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
    for path in jail["system"]:
        if os.path.islink(path):
            os.symlink(os.readlink(path), root + path)
        elif os.path.isdir(path):
            os.makedirs(root + path)
            bind(libc, path, root + path, True)
    build_dev(libc, root, jail["devices"])
    for path in jail["tmpfs"]:
        os.makedirs(root + path)
        mount(libc, "tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV,
              "size=%dm,mode=1777" % jail["tmpfs_mb"])
    os.mkdir(root + "/proc")
    mount(libc, "proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    copy_script(root + config["cwd"], config)
    os.chdir(root)
    if jail["pivot_root"]:
        check(libc, libc.syscall(jail["pivot_root"], b".", b"."), "pivot_root")
        check(libc, libc.umount2(b".", MNT_DETACH), "umount the host's root")
    else:
        mount(libc, ".", "/", None, MS_MOVE)
        os.chroot(".")
    os.chdir("/")
    mount(libc, None, "/", None, READ_ONLY)


def build_dev(libc, root: str, devices: list) -> None:
    """The jail's /dev: a tmpfs (noexec) with binds of the host's ``devices`` and the fd links."""
    os.mkdir(root + "/dev")
    mount(libc, "tmpfs", root + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755")
    for name in devices:
        open(root + "/dev/" + name, "w").close()
        bind(libc, "/dev/" + name, root + "/dev/" + name, False)
    for name, target in DEV_LINKS:
        os.symlink(target, root + "/dev/" + name)


def copy_script(cwd: str, config: dict) -> None:
    """Make the run's cwd (in the jail's /tmp: in memory, gone with the jail) and copy the
    script into it; the run's uid owns it."""
    os.makedirs(cwd, mode=0o700)
    script = config["script"]
    with open(os.path.join(config["work"], script), "rb") as source, \
            open(os.path.join(cwd, script), "wb") as copy:
        copy.write(source.read())
    if config["uid"] is not None:
        os.chown(cwd, config["uid"], config["uid"])


def become_program(libc, config: dict) -> None:
    """Set the limits, drop to the run's uid for good, then run the script."""
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


def disable_network() -> None:
    """The prelude, where there is no network namespace: the socket API refuses.

    A guard against accidents, not a wall: ctypes or a fresh interpreter get past it.
    """
    import _socket
    import socket

    def refuse(*args, **kwargs):
        raise PermissionError("network access is disabled in the k2rl sandbox")

    for module in (socket, _socket):
        for name in NETWORK_NAMES:
            if hasattr(module, name):
                setattr(module, name, refuse)


def run_script(path: str) -> None:
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

"""Containment tests for the code sandbox: each one breaks out if the sandbox does.

Tests marked ``needs_root`` rely on the uid drop (the parent is root in CI
and here), ``needs_jail`` on the mount and PID namespaces and ``needs_cgroup``
on a per-run cgroup; where those are not to be had they are skipped rather
than falsely passed (and the sandbox logs a warning saying what it fell back to).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

import rewards.sandbox.cgroups
import rewards.sandbox.probes
from rewards.code import unit_test_fraction
from rewards.sandbox import (
    FALLBACK_PROCESS_MB,
    SANDBOX_UIDS,
    SandboxPool,
    fallback_caps,
    jail_available,
    memory_cap,
    network_isolation,
    processes_of,
    run_python,
)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop needs root")
needs_jail = pytest.mark.skipif(not jail_available(), reason="no mount/PID namespaces here")
needs_cgroup = pytest.mark.skipif(memory_cap() == "rlimit", reason="no cgroup can be made here")
PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(rewards.__file__)))


def leftovers() -> list[tuple[int, str, int]]:
    """Every process (zombies included) running as a sandbox uid."""
    return processes_of(SANDBOX_UIDS)


def live_leftovers() -> list[int]:
    """The pids of sandbox processes that are not dead yet: none may survive a run."""
    return [pid for pid, state, _ in leftovers() if state != "Z"]


def settled_leftovers(seconds: float = 5.0) -> list[tuple[int, str, int]]:
    """``leftovers()`` once orphaned zombies are reaped (init takes its time: ~1 s here)."""
    deadline = time.monotonic() + seconds
    while (found := leftovers()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def sandbox_dirs() -> set[str]:
    """Entries of the temp dir that runs made, by name or by owner."""
    root = tempfile.gettempdir()
    found = set()
    for name in os.listdir(root):
        try:
            owner = os.lstat(os.path.join(root, name)).st_uid
        except FileNotFoundError:
            continue  # someone else's, removed while we looked
        if name.startswith("k2rl-sandbox-") or owner in SANDBOX_UIDS:
            found.add(name)
    return found


def test_infinite_loop_is_killed_at_the_timeout() -> None:
    started = time.monotonic()
    result = run_python("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                        "while True:\n    pass", timeout=1.0)
    assert result.timed_out and result.returncode == -9
    assert time.monotonic() - started < 1.0 + 2.0


@needs_root
def test_fork_bomb_is_capped_and_swept() -> None:
    before = leftovers()
    # Children that sleep show the cap: forking stops at max_processes.
    capped = run_python(
        "import os, time\nn = 0\ntry:\n    while True:\n        if os.fork() == 0:\n"
        "            time.sleep(60)\n            os._exit(0)\n        n += 1\n"
        "except OSError:\n    print(n)", max_processes=8, timeout=5.0)
    assert not capped.timed_out and 0 < int(capped.stdout) < 8
    # The real thing: every process forks forever until the timeout.
    bomb = run_python("import os\nwhile True:\n    try:\n        os.fork()\n"
                      "    except OSError:\n        pass", timeout=1.5)
    assert bomb.timed_out
    assert live_leftovers() == []
    assert settled_leftovers() == before == []


@needs_root
def test_process_that_leaves_the_group_is_killed_too() -> None:
    # setsid puts the child out of reach of killpg; the jail's init (or the uid sweep) gets it.
    # A double fork makes a grandchild whose parent is gone before the run ends.
    result = run_python("import os, time\nif os.fork() == 0:\n    os.setsid()\n"
                        "    if os.fork() == 0:\n        time.sleep(60)\n    os._exit(0)\n"
                        "time.sleep(0.2)\nprint('parent done')")
    assert result.stdout == "parent done\n"
    assert live_leftovers() == []
    assert settled_leftovers() == []


@pytest.mark.parametrize("code", [
    "x = bytearray(4 * 2**30)",
    "chunks = []\nwhile True:\n    chunks.append(bytearray(2**26))",
])
def test_memory_bomb_fails_inside(code: str) -> None:
    result = run_python(code, memory_mb=512)
    assert result.returncode != 0 and not result.timed_out
    assert "MemoryError" in result.stderr
    assert run_python("print(1)").stdout == "1\n"  # and the host carries on


@needs_root
def test_cannot_write_or_delete_outside_its_folder() -> None:
    outside = tempfile.mkdtemp(prefix="k2rl-test-outside-")
    try:
        # Readable and enterable by everyone, writable by root only.
        os.chmod(outside, 0o755)
        victim = os.path.join(outside, "victim.txt")
        with open(victim, "w") as file:
            file.write("intact")
        os.chmod(victim, 0o644)
        code = (f"import os\nfor attempt in (lambda: open({victim!r}, 'w').write('pwned'),\n"
                f"                lambda: os.remove({victim!r}),\n"
                f"                lambda: open({outside!r} + '/new.txt', 'w')):\n"
                "    try:\n        attempt()\n        print('done')\n"
                "    except OSError as error:\n        print(type(error).__name__)")
        result = run_python(code)
        # In the jail the host's /tmp is not there at all; without it, the uid may not write.
        hidden = "FileNotFoundError" if jail_available() else "PermissionError"
        assert result.stdout.split() == [hidden] * 3
        with open(victim) as file:
            assert file.read() == "intact"
        assert os.listdir(outside) == ["victim.txt"]
    finally:
        for name in os.listdir(outside):
            os.remove(os.path.join(outside, name))
        os.rmdir(outside)


@pytest.mark.parametrize("network", ["auto", "prelude"])
def test_cannot_reach_the_network(network: str) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        code = ("import socket\ntry:\n"
                f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
                "    print('connected')\nexcept OSError as error:\n"
                "    print(type(error).__name__)")
        result = run_python(code, network=network)
        assert result.stdout.strip() in {"PermissionError", "OSError", "ConnectionRefusedError"}
        assert result.network_isolation == (network_isolation() if network == "auto" else network)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing arrived
        # The control: the listener does accept connections from outside the sandbox.
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            time.sleep(0.05)
            listener.accept()[0].close()


def test_root_uses_a_network_namespace() -> None:
    if os.geteuid() == 0:
        assert network_isolation() == "netns"


def test_parent_environment_does_not_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("K2RL_SECRET", "hunter2-do-not-leak")
    result = run_python("import json, os\nprint(json.dumps(dict(os.environ)))")
    seen = json.loads(result.stdout)
    assert "hunter2-do-not-leak" not in result.stdout
    assert set(seen) <= {"PATH", "HOME", "TMPDIR", "LANG"}


@pytest.mark.parametrize("code", [
    "while True:\n    print('x' * 1000)",
    "import sys\nsys.stdout.write('x' * 100_000_000)",
    "import sys\nwhile True:\n    sys.stderr.write('y' * 1000)",
])
def test_output_flood_is_truncated_promptly(code: str) -> None:
    result = run_python(code, max_output=10_000, timeout=5.0)
    assert result.truncated and not result.timed_out and result.wall_seconds < 4.0
    assert len(result.stdout) <= 10_000 and len(result.stderr) <= 10_000


def test_working_directory_is_removed() -> None:
    # Even with files in it that the sandbox made hard to delete.
    result = run_python("import os\nos.makedirs('a/b')\nopen('a/b/f', 'w').write('x')\n"
                        "os.chmod('a/b', 0)\nos.chmod('a', 0)\nprint(os.getcwd())")
    workdir = result.stdout.strip()
    run_folder = os.path.dirname(workdir)  # the run's folder holds its cwd and the jail's root
    assert os.path.dirname(run_folder) == tempfile.gettempdir()
    assert not os.path.exists(run_folder)


def test_stdin_is_delivered() -> None:
    assert run_python("print(input()[::-1])", "abc\n").stdout == "cba\n"


def test_pool_maps_in_order_and_closes() -> None:
    threads = threading.active_count()
    with SandboxPool(workers=2, timeout=5.0) as pool:
        results = pool.map([f"print({i} * 2)" for i in range(6)])
        assert pool.submit("print(input())", "hi").result().stdout == "hi\n"
    assert [r.stdout for r in results] == [f"{i * 2}\n" for i in range(6)]
    assert threading.active_count() == threads


def test_no_leaks_over_many_runs() -> None:
    """200 programs through the pool leave no process, folder or file descriptor."""
    fds = len(os.listdir("/proc/self/fd"))
    dirs, procs = sandbox_dirs(), leftovers()
    programs = {
        "def f(x):\n    return x + 1": 1.0,
        "def f(x):\n    return x": 0.0,
        "def f(x):\n    return 2 if x == 1 else x": 0.5,
        "raise RuntimeError('boom')": 0.0,
        "import sys\nsys.exit(3)": 0.0,
        "import os\nos._exit(0)": 0.0,
        # A background child that would outlive the run if not swept.
        "import os, time\nif os.fork() == 0:\n    time.sleep(60)\ndef f(x):\n    return x + 1": 1.0,
        "def f(x) return": 0.0,
    }
    responses = [code for _, code in zip(range(200), list(programs) * 25)]
    tests = [["assert f(1) == 2", "assert f(5) == 6"]] * len(responses)
    with SandboxPool(workers=2) as pool:
        scores = unit_test_fraction(responses, tests, pool=pool)
    assert scores == [programs[code] for code in responses]
    assert live_leftovers() == []
    assert settled_leftovers() == procs
    assert sandbox_dirs() == dirs
    assert len(os.listdir("/proc/self/fd")) == fds


# --- the whole process tree: cgroup caps ----------------------------------------------


def test_root_gets_a_jail_and_a_cgroup() -> None:
    """On this machine (root, cgroup v1 memory and pids) nothing falls back."""
    if os.geteuid() == 0:
        assert jail_available()
        assert memory_cap() in ("cgroup v1", "cgroup v2")


def test_the_memory_cap_in_force_is_logged_once(caplog: pytest.LogCaptureFixture,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rewards.sandbox.cgroups, "_cgroup_probed", False)
    with caplog.at_level("INFO", logger="rewards.sandbox"):
        first, second = memory_cap(), memory_cap()
    assert first == second
    lines = [r.getMessage() for r in caplog.records if "capped" in r.getMessage()]
    assert len(lines) == 1 and ("cgroup" in lines[0] or "RLIMIT_AS" in lines[0])


@needs_cgroup
def test_memory_is_capped_over_the_whole_process_tree() -> None:
    # Three children of 400 MB each under a 512 MB cap: alone each fits its RLIMIT_AS,
    # together they would need 1.2 GB. The kernel kills some; the tree never exceeds 512 MB.
    code = ("import os, time\npids = []\nfor i in range(3):\n    pid = os.fork()\n"
            "    if pid == 0:\n        block = bytearray(400 * 2**20)\n"
            "        print('allocated', flush=True)\n        time.sleep(1)\n        os._exit(0)\n"
            "    pids.append(pid)\n"
            "print([os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids])")
    result = run_python(code, memory_mb=512, timeout=10.0)
    assert result.memory_peak_mb is not None and result.memory_peak_mb <= 512
    statuses = eval(result.stdout.splitlines()[-1])
    assert -9 in statuses  # killed by the cgroup's OOM killer
    assert result.stdout.count("allocated") < 3


# --- the jail: a private view of files, sockets and processes ---------------------------


def _outcomes(result_stdout: str) -> dict[str, str]:
    """``name outcome`` lines printed by a probe as a dict."""
    return dict(line.split(" ", 1) for line in result_stdout.splitlines())


PROBE = """\
import os, socket
def attempt(name, action):
    try:
        action()
        print(name, 'done')
    except OSError as error:
        print(name, type(error).__name__)
"""


@needs_jail
def test_temporary_files_stay_in_the_run() -> None:
    marker = f"k2rl-test-marker-{os.getpid()}-{time.monotonic_ns()}"
    folders = ["/tmp", "/var/tmp", "/dev/shm"]
    code = PROBE + "".join(f"attempt({folder!r}, lambda: open({folder!r} + '/{marker}', 'w')"
                           f".write('x'))\n" for folder in folders)
    result = run_python(code)
    assert _outcomes(result.stdout) == {folder: "done" for folder in folders}  # writable inside
    for folder in folders:
        assert not os.path.exists(os.path.join(folder, marker))  # and nothing on the host


@needs_jail
def test_host_unix_sockets_cannot_be_reached_or_replaced() -> None:
    folder = tempfile.mkdtemp(prefix="k2rl-test-sockets-")
    os.chmod(folder, 0o777)  # world-writable and not sticky, like Ray's session sockets
    path = os.path.join(folder, "service.sock")
    abstract = f"\0k2rl-test-{os.getpid()}-{time.monotonic_ns()}"
    try:
        with socket.socket(socket.AF_UNIX) as listener, socket.socket(socket.AF_UNIX) as hidden:
            listener.bind(path)
            os.chmod(path, 0o777)
            listener.listen(8)
            listener.setblocking(False)
            hidden.bind(abstract)
            hidden.listen(8)
            hidden.setblocking(False)
            code = PROBE + (
                f"def connect(address):\n    with socket.socket(socket.AF_UNIX) as client:\n"
                f"        client.connect(address)\n"
                f"attempt('connect', lambda: connect({path!r}))\n"
                f"attempt('abstract', lambda: connect({abstract!r}))\n"
                f"attempt('replace', lambda: os.unlink({path!r}))\n")
            result = run_python(code)
            outcomes = _outcomes(result.stdout)
            assert outcomes["connect"] == outcomes["replace"] == "FileNotFoundError"
            assert outcomes["abstract"] == "ConnectionRefusedError"  # another network namespace
            for server in (listener, hidden):
                with pytest.raises(BlockingIOError):
                    server.accept()  # nothing arrived
            assert os.path.exists(path)
            # The control: the sockets do accept connections from outside the sandbox.
            for address, server in ((path, listener), (abstract, hidden)):
                with socket.socket(socket.AF_UNIX) as client:
                    client.connect(address)
                    time.sleep(0.05)
                    server.accept()[0].close()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.rmdir(folder)


@needs_jail
def test_project_home_and_host_folders_are_not_there() -> None:
    paths = [PROJECT, os.path.join(PROJECT, "rewards", "sandbox", "launcher.py"), "/root",
             "/home", "/run", "/work", "/sys/fs/cgroup"]
    code = PROBE + "".join(f"attempt({p!r}, lambda: os.listdir({p!r}) if os.path.isdir({p!r}) "
                           f"else open({p!r}).read())\n" for p in paths)
    result = run_python(code)
    assert _outcomes(result.stdout) == {path: "FileNotFoundError" for path in paths}
    # What is there: the system, read-only, and the run's own folder, writable.
    result = run_python(PROBE + "attempt('usr', lambda: open('/usr/k2rl-test', 'w'))\n"
                        "attempt('root', lambda: os.mkdir('/k2rl-test'))\n"
                        "attempt('cwd', lambda: open('mine.txt', 'w').write('x'))\n"
                        "print('listing', sorted(os.listdir('/')))")
    outcomes = _outcomes(result.stdout)
    assert outcomes["usr"] == outcomes["root"] == "OSError"  # EROFS
    assert outcomes["cwd"] == "done"
    assert set(eval(outcomes["listing"])) <= {"bin", "dev", "etc", "lib", "lib32", "lib64",
                                              "libx32", "proc", "sbin", "tmp", "usr", "var"}


@needs_jail
def test_host_processes_are_not_visible() -> None:
    me = os.getpid()
    code = PROBE + ("print('pids', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
                    f"attempt('cmdline', lambda: open('/proc/{me}/cmdline').read())\n"
                    "print('mine', os.getpid(), os.getppid())\n")
    result = run_python(code)
    outcomes = _outcomes(result.stdout)
    assert eval(outcomes["pids"]) == [1, 2]  # the jail's init and the program
    assert outcomes["mine"] == "2 1"
    assert outcomes["cmdline"] == "FileNotFoundError"  # this process, seen from the jail


@needs_root
def test_without_jail_or_cgroup_the_fallbacks_still_contain(monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture
                                                            ) -> None:
    """The fallback (rlimits, uid sweep, network namespace) is what other machines may get."""
    monkeypatch.setattr(rewards.sandbox.probes, "_jail", False)
    monkeypatch.setattr(rewards.sandbox.cgroups, "_cgroup_probed", True)
    monkeypatch.setattr(rewards.sandbox.cgroups, "_cgroup", None)
    assert memory_cap() == "rlimit"
    escaped = run_python("import os, time\nif os.fork() == 0:\n    os.setsid()\n"
                         "    time.sleep(60)\nprint(os.getpid() > 2)")
    assert escaped.stdout == "True\n" and escaped.memory_peak_mb is None  # not in a PID namespace
    assert live_leftovers() == []
    assert "MemoryError" in run_python("x = bytearray(2**31)", memory_mb=256).stderr
    tests = [["assert f(1) == 2"]] * 2
    assert unit_test_fraction(["def f(x):\n    return x + 1", "def f(x):\n    return x"],
                              tests) == [1.0, 0.0]
    assert settled_leftovers() == []


@needs_root
def test_host_processes_never_share_a_run_uid() -> None:
    """Pools in different host processes (e.g. several workers on a node) lock their uids."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time\nimport rewards.sandbox.uids as s\n"
         "print([u for u in s.SANDBOX_UIDS[:-8] if s.lock_uid(u)], flush=True)\n"
         "time.sleep(30)"],
        stdout=subprocess.PIPE, text=True, cwd=PROJECT)
    try:
        held = set(eval(holder.stdout.readline()))  # all but 8, less any another process holds
        assert held
        uids = {int(run_python("import os\nprint(os.getuid())").stdout) for _ in range(10)}
        assert uids and uids.isdisjoint(held)
    finally:
        holder.kill()
        holder.wait()


# --- issue 29: the fallback without a cgroup caps the whole tree and its tmpfs -----------

@pytest.fixture
def no_cgroup(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs as on a host where no cgroup can be made (the jail stays, if there is one)."""
    monkeypatch.setattr(rewards.sandbox.cgroups, "_cgroup_probed", True)
    monkeypatch.setattr(rewards.sandbox.cgroups, "_cgroup", None)
    assert memory_cap() == "rlimit"


# Four children of 300 MB each, all alive at once: the run held 1,240 MB under a
# 512 MB "cap" (each child alone fits a per-process RLIMIT_AS of 512 MB).
FOUR_CHILDREN = """\
import os, time
held, pids = 0, []
for _ in range(4):
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        try:
            block = bytearray(300 * 2**20)
            block[::4096] = b"x" * len(block[::4096])
            os.write(write, b"1")
        except MemoryError:
            os.write(write, b"0")
        time.sleep(2)
        os._exit(0)
    held += os.read(read, 1) == b"1"
    pids.append(pid)
print(held * 300)
"""
# 400 MB of files in each private tmpfs (16 MB files: RLIMIT_FSIZE), 1,200 MB in all.
TMPFS_FILES = """\
import os
total = 0
for folder in ("/tmp", "/var/tmp", "/dev/shm"):
    for index in range(25):
        try:
            with open(os.path.join(folder, f"fill{index}"), "wb") as file:
                for _ in range(16):
                    file.write(b"x" * 2**20)
                    total += 1
        except OSError:
            break
print(total)
"""


@needs_root
def test_without_a_cgroup_children_cannot_hold_more_than_the_cap(no_cgroup: None) -> None:
    result = run_python(FOUR_CHILDREN, memory_mb=512, timeout=20.0)
    assert int(result.stdout.split()[-1]) + 128 <= 512, result  # tmpfs's quarter aside
    assert live_leftovers() == []


@needs_root
@needs_jail
def test_without_a_cgroup_the_private_tmpfs_is_sized(no_cgroup: None) -> None:
    result = run_python(TMPFS_FILES, memory_mb=512, timeout=20.0)
    assert int(result.stdout.split()[-1]) <= 512 // 4, result


@needs_root
def test_without_a_cgroup_code_rewards_still_run(no_cgroup: None) -> None:
    tests = [["assert f(1) == 2", "assert f(2) == 3"]] * 2
    assert unit_test_fraction(["def f(x):\n    return x + 1", "def f(x):\n    return x"],
                              tests) == [1.0, 0.0]


def test_fallback_caps_add_up_to_memory_mb() -> None:
    for memory_mb in (128, 256, 512, 1000, 4096):
        for max_processes in (1, 2, 8, 32):
            processes, process_mb, tmpfs_mb = fallback_caps(memory_mb, max_processes)
            assert 1 <= processes <= max_processes
            assert process_mb >= FALLBACK_PROCESS_MB
            assert processes * process_mb + 3 * tmpfs_mb <= memory_mb
    with pytest.raises(ValueError, match="memory_mb=64 is too small for a sandbox run"):
        fallback_caps(64, 32)

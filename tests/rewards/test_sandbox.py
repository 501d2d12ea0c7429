"""Containment tests for the code sandbox: each one breaks out if the sandbox does.

Tests marked ``needs_root`` rely on the uid drop (the parent is root in CI
and here); as another user they are skipped rather than falsely passed.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
import time

import pytest

from rewards.code import unit_test_fraction
from rewards.sandbox import (
    SANDBOX_UIDS,
    SandboxPool,
    network_isolation,
    processes_of,
    run_python,
)

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop needs root")


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
    # setsid puts the child out of reach of killpg; only the uid sweep finds it.
    result = run_python("import os, time\npid = os.fork()\nif pid == 0:\n    os.setsid()\n"
                        "    time.sleep(60)\nelse:\n    print(pid)")
    escaped = int(result.stdout)
    assert escaped not in live_leftovers()
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
        assert result.stdout.split() == ["PermissionError"] * 3
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
    assert os.path.dirname(workdir) == tempfile.gettempdir()
    assert not os.path.exists(workdir)


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

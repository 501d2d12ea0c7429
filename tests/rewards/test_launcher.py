"""The sandbox's launcher (rewards/sandbox/launcher.py) as a module: its pieces, run here.

The containment tests (test_sandbox.py) run the launcher as the sandbox does, as root in
new namespaces; these import it and check its parts directly: that it stands alone, how
it reports failed calls and exit codes, the mounts of the jail it builds (against a libc
that records the calls instead of making them), how it runs the script, and that its
copy in the private folder keeps its bytecode there.
"""

from __future__ import annotations

import ast
import errno
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from rewards.sandbox import jail, launcher, process, run_python
from rewards.sandbox.launcher import (
    MNT_DETACH,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    READ_ONLY,
)
from rewards.sandbox.private import module_folder

PROJECT = str(Path(launcher.__file__).resolve().parents[2])
# What the launcher may import: it runs alone, from a copy, on the sandbox's interpreter.
TOP_LEVEL_IMPORTS = {"os", "resource", "sys"}
LATE_IMPORTS = {"ctypes", "gc", "_signal", "_socket", "socket"}  # in the functions using them


class RecordingLibc:
    """A libc whose calls succeed and are recorded instead of made."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def mount(self, source: bytes | None, target: bytes, fstype: bytes | None, flags: int,
              data: bytes | None) -> int:
        self.calls.append(("mount", source, target.decode(), fstype, flags, data))
        return 0

    def umount2(self, target: bytes, flags: int) -> int:
        self.calls.append(("umount2", target, flags))
        return 0

    def syscall(self, number: int, *args: bytes) -> int:
        self.calls.append(("syscall", number, *args))
        return 0

    def get_errno(self) -> int:
        return errno.EPERM


def test_the_launcher_stands_alone() -> None:
    """Only the standard library, nothing of the project, no __future__ or typing."""
    tree = ast.parse(process.LAUNCHER_SOURCE)
    top, late = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = ({alias.name for alias in node.names} if isinstance(node, ast.Import)
                     else {node.module})
            (top if node in tree.body else late).update(names)
    assert top == TOP_LEVEL_IMPORTS
    assert late <= LATE_IMPORTS
    assert process.LAUNCHER_SOURCE == Path(launcher.__file__).read_text(encoding="utf-8")


def test_a_failed_call_raises_its_errno() -> None:
    launcher.check(RecordingLibc(), 0, "mount /x")  # success: nothing
    with pytest.raises(OSError, match="mount /x: Operation not permitted") as raised:
        launcher.check(RecordingLibc(), -1, "mount /x")
    assert raised.value.errno == errno.EPERM


@pytest.mark.parametrize("init_status, reported, code", [
    (0, b"0", 0), (0, b"256", 1), (0, b"9", -9), (0, b"15", -15),
    (9, b"", -9),  # the init died before it reported: its own status stands
    (256, b"", 1),
])
def test_the_launcher_ends_as_the_program_did(init_status: int, reported: bytes,
                                              code: int) -> None:
    assert launcher.program_exit_code(init_status, reported) == code


def test_bind_is_read_only_nosuid_nodev_when_asked() -> None:
    libc = RecordingLibc()
    launcher.bind(libc, "/usr", "/j/usr", True)
    launcher.bind(libc, "/dev/null", "/j/dev/null", False)
    assert libc.calls == [("mount", b"/usr", "/j/usr", None, MS_BIND, None),
                          ("mount", None, "/j/usr", None, READ_ONLY, None),
                          ("mount", b"/dev/null", "/j/dev/null", None, MS_BIND, None)]
    assert READ_ONLY == MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV


def test_the_jail_is_built_with_its_walls(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = str(tmp_path / "k2rl-sandbox-test")
    os.mkdir(base)
    work = process.make_folders(base, None)
    with open(os.path.join(work, "main.py"), "w") as script:
        script.write("print('hi')\n")
    config = {"script": "main.py", "work": work, "uid": None, "cwd": jail.jail_cwd(base),
              "jail": {**jail.jail_config(base, 16), "pivot_root": 155}}
    root = config["jail"]["root"]
    monkeypatch.chdir(tmp_path)  # build_jail ends in the jail's "/": here, the host's
    libc = RecordingLibc()
    launcher.build_jail(libc, config, config["jail"])

    mounts = [call[1:] for call in libc.calls if call[0] == "mount"]
    assert mounts[0] == (None, "/", None, MS_REC | MS_PRIVATE, None)  # nothing leaks to the host
    assert mounts[1] == (b"tmpfs", root, b"tmpfs", MS_NOSUID | MS_NODEV, b"size=1m,mode=755")
    assert mounts[-1] == (None, "/", None, READ_ONLY, None)  # the jail's root, read-only
    binds = {target: source for source, target, _, flags, _ in mounts if flags == MS_BIND}
    system = {root + path: path.encode() for path in config["jail"]["system"]
              if not os.path.islink(path)}
    devices = {root + "/dev/" + name: f"/dev/{name}".encode()
               for name in config["jail"]["devices"]}
    assert binds == {**system, **devices}  # nothing else of the host
    for target in system:  # every system folder is remounted read-only, nosuid, nodev
        assert (None, target, None, READ_ONLY, None) in mounts
    for target in devices:  # the devices are written to (/dev/null): not remounted
        assert not any(flags & MS_REMOUNT for _, t, _, flags, _ in mounts if t == target)
    assert (b"tmpfs", root + "/dev", b"tmpfs", MS_NOSUID | MS_NOEXEC,
            b"size=64k,mode=755") in mounts
    for path in jail.TMPFS_MOUNTS:
        assert (b"tmpfs", root + path, b"tmpfs", MS_NOSUID | MS_NODEV,
                b"size=16m,mode=1777") in mounts
    assert (b"proc", root + "/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) in mounts
    assert libc.calls[-3:-1] == [("syscall", 155, b".", b"."), ("umount2", b".", MNT_DETACH)]

    cwd = root + config["cwd"]  # the script's copy, in the jail's /tmp
    assert stat.S_IMODE(os.stat(cwd).st_mode) == 0o700
    with open(os.path.join(cwd, "main.py")) as copy:
        assert copy.read() == "print('hi')\n"
    for name, target in launcher.DEV_LINKS:
        assert os.readlink(os.path.join(root, "dev", name)) == target


def _in_python(code: str, cwd: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter that can import the project."""
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": PROJECT}, timeout=60)


def test_the_script_runs_as_main_and_its_traceback_is_its_own(tmp_path) -> None:
    (tmp_path / "main.py").write_text(
        "import sys\nprint(__name__, sys.argv, '' in sys.path, __file__)\n"
        "def f():\n    raise ValueError('boom')\nf()\n")
    result = _in_python("from rewards.sandbox.launcher import run_script\n"
                        "run_script('main.py')", str(tmp_path))
    assert result.returncode == 1
    assert result.stdout == "__main__ ['main.py'] False main.py\n"
    assert result.stderr.startswith("Traceback (most recent call last):\n"
                                    '  File "main.py", line 5, in <module>\n')
    assert "launcher" not in result.stderr and "ValueError: boom" in result.stderr


def test_the_prelude_refuses_the_socket_api(tmp_path) -> None:
    result = _in_python(
        "import socket\nfrom rewards.sandbox.launcher import NETWORK_NAMES, disable_network\n"
        "disable_network()\nfor name in ('socket', 'create_connection', 'getaddrinfo'):\n"
        "    try:\n        getattr(socket, name)()\n    except PermissionError as error:\n"
        "        print(name, error)\n", str(tmp_path))
    assert result.stdout.splitlines() == [
        f"{name} network access is disabled in the k2rl sandbox"
        for name in ("socket", "create_connection", "getaddrinfo")]


def test_the_launch_line_imports_the_private_copy() -> None:
    config = {"go": 5, "jail": None}
    line = process.launch_line(config)
    folder = module_folder(process.LAUNCHER_MODULE, process.LAUNCHER_SOURCE)
    assert line == (f"import sys\nsys.path.insert(0, {folder!r})\nimport k2rl_sandbox_launcher\n"
                    f"del sys.path[0]\nk2rl_sandbox_launcher.launch({config!r})\n")
    with open(os.path.join(folder, "k2rl_sandbox_launcher.py"), encoding="utf-8") as copy:
        assert copy.read() == process.LAUNCHER_SOURCE
    compile(line, "<launch line>", "exec")


def test_the_launcher_bytecode_is_cached_in_the_private_folder() -> None:
    assert run_python("print(1)").stdout == "1\n"
    folder = module_folder(process.LAUNCHER_MODULE, process.LAUNCHER_SOURCE)
    cache = os.path.join(folder, "__pycache__")
    assert any(name.startswith("k2rl_sandbox_launcher.") and name.endswith(".pyc")
               for name in os.listdir(cache))
    private = os.path.dirname(os.path.dirname(folder))
    for path in (private, folder):  # this user's alone (root's, as root): no run may enter
        assert os.stat(path).st_uid == os.geteuid()
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    assert os.stat(cache).st_uid == os.geteuid()

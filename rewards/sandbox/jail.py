"""The jail's layout, as the host describes it to the launcher.

A jailed run gets new mount, PID, IPC, UTS (and network) namespaces; its root is a
fresh read-only tmpfs with read-only, nosuid binds of the system folders
(``JAIL_SYSTEM_PATHS`` that exist; symlinks such as /bin are copied), the
``JAIL_DEVICES``, a new /proc, and private tmpfs at ``TMPFS_MOUNTS``. The launcher
(``launcher.build_jail``, as root in the new namespaces) makes those mounts from
``jail_config``; this module only says what they are.
"""

from __future__ import annotations

import os
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
JAIL_NAMESPACES = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS

# What the jail shows of the host, read-only (the ones that exist; symlinks are copied).
JAIL_SYSTEM_PATHS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
JAIL_DEVICES = ("null", "zero", "full", "random", "urandom")
TMPFS_MOUNTS = ("/tmp", "/var/tmp", "/dev/shm")
PIVOT_ROOT_SYSCALLS = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}


def jail_cwd(base: str) -> str:
    """The run's cwd in the jail: in its /tmp, named like the host folder."""
    return f"/tmp/{os.path.basename(base)}/work"


def jail_config(base: str, tmpfs_mb: int) -> dict[str, Any]:
    """What the launcher needs to build the jail in ``base``/root (``tmpfs_mb`` per mount)."""
    return {
        "root": os.path.join(base, "root"),
        "system": [path for path in JAIL_SYSTEM_PATHS if os.path.lexists(path)],
        "devices": [name for name in JAIL_DEVICES if os.path.exists("/dev/" + name)],
        "tmpfs_mb": tmpfs_mb,
        "tmpfs": TMPFS_MOUNTS,
        "pivot_root": PIVOT_ROOT_SYSCALLS.get(os.uname().machine),
    }

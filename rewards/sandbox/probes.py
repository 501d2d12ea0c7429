"""What this host lets the sandbox do, probed once with the launcher itself.

``network_isolation()``: "netns" where this process can make network namespaces, else
"prelude" (the launcher disables the socket API: a guard against accidents, not a
wall). ``jail_available()``: whether runs get the jail (as root only); if not, a
warning says so once and runs fall back to a network namespace alone (or the prelude)
and the host's view of files, within their uid's rights. The memory cap in force is
probed in ``cgroups.memory_cap`` and the interpreter in ``run.sandbox_python``.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import threading
from typing import Any, Literal

from rewards.sandbox.jail import CLONE_NEWNET, JAIL_NAMESPACES, jail_config, jail_cwd
from rewards.sandbox.process import SCRIPT_NAME, make_folders, remove_tree, run_launcher

logger = logging.getLogger(__name__)

NetworkIsolation = Literal["netns", "prelude"]

_probe_lock = threading.Lock()
_network_isolation: NetworkIsolation | None = None
_jail: bool | None = None


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
        work = make_folders(base, None)
        config = {"script": SCRIPT_NAME, "work": work, "uid": None, "preload": [],
                  "cwd": jail_cwd(base) if jail else work,
                  "limits": [], "prelude": False, "jail": jail_config(base, 16) if jail else None,
                  **overrides}
        run_launcher("import sys\nsys.exit(0 if sys.argv == ['main.py'] else 1)", "", base,
                     config, sys.executable, 30.0, 10_000)
        return True
    except (OSError, subprocess.SubprocessError, RuntimeError):
        return False
    finally:
        remove_tree(base)

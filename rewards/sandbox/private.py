"""The host's private folder: the uid locks and the trusted modules runs import.

Only this user (root, as root) may enter it, so no run can see or touch what is in it:
the uid locks (``uids.lock_uid``), the launcher and the ``preload`` modules such as the
code harness, which runs import before they are confined. Each module is written once,
under a digest of its source, and its bytecode is cached there (the launcher imports
it as root, before the uid drop) instead of compiled per run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading

PRIVATE_FOLDERS = ("/run/k2rl-sandbox", os.path.join(tempfile.gettempdir(),
                                                     f"k2rl-sandbox-{os.geteuid()}"))
_private_lock = threading.Lock()
_private_folder: str | None = None


def private_folder() -> str:
    """A folder only this user may enter (root's, as root): no run can see or touch it."""
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

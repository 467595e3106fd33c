"""The process environment GPU drivers expect, made valid before any driver loads.

Mesa's Vulkan drivers print "error: XDG_RUNTIME_DIR is invalid or not set in the
environment." once per adapter they probe when the variable is unset, which is
common over SSH, in containers and under sudo: four lines of noise before
`vajra-tui devices` says anything. A private folder for it ends that; the GPU
worker and the adapter probe inherit it.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def _usable(path: str) -> bool:
    try:
        info = os.stat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and os.access(path, os.W_OK)


def ensure_runtime_dir() -> str | None:
    """Point XDG_RUNTIME_DIR at a private, existing folder when it is unset; returns it.

    A value the user set is kept as it is, even a bad one: that is theirs to fix.
    """
    if os.environ.get("XDG_RUNTIME_DIR"):
        return None
    system = f"/run/user/{os.getuid()}"  # systemd's, when a login session made one
    private = str(Path(tempfile.gettempdir()) / f"vajra-tui-runtime-{os.getuid()}")
    if not _usable(system):
        try:
            os.mkdir(private, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
        if not _usable(private):  # someone else's folder of that name: not ours to use
            return None
        os.chmod(private, 0o700)
    path = system if _usable(system) else private
    os.environ["XDG_RUNTIME_DIR"] = path
    return path

"""Writes that never leave a half-written file where a user's file was."""

from __future__ import annotations

import io
import os
import stat
import tempfile
import threading
from pathlib import Path
from typing import IO

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask, read without changing it where Linux allows (/proc), else briefly set."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def sync(handle: IO[str]) -> None:
    """fsync a file object's descriptor (some filesystems report a full disk only now);
    a file object without one (an in-memory stand-in) has nothing to sync."""
    try:
        fd = handle.fileno()
    except (AttributeError, io.UnsupportedOperation):
        return
    os.fsync(fd)


def atomic_write(path: Path, text: str) -> None:
    """Write to a temporary file beside the target, then rename it into place.

    The temporary file is created 0600 (mkstemp); before the rename it gets the
    mode a plain ``open()`` would have given: the replaced file's, or 0666 less the
    umask. Exported kernels and lockfiles are meant to be shared and committed. A
    write that fails (a full disk) removes the temporary file and raises OSError: the
    target keeps its old content, never a truncated one.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~current_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            sync(handle)  # a full disk reported only now is never renamed into place
            os.fchmod(handle.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

"""Writes that never leave a half-written file where a user's file was."""

from __future__ import annotations

import io
import os
import stat
import tempfile
import threading
from pathlib import Path
from typing import IO, Collection

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


def atomic_write(path: Path, text: str, replace: bool = True) -> None:
    """Write to a temporary file beside the target, then rename it into place.

    The temporary file is created 0600 (mkstemp); before the rename it gets the
    mode a plain ``open()`` would have given: the replaced file's, or 0666 less the
    umask. Exported kernels and lockfiles are meant to be shared and committed. A
    write that fails (a full disk) removes the temporary file and raises OSError: the
    target keeps its old content, never a truncated one.
    ``replace=False``: a file that appeared at ``path`` meanwhile (another program's, or
    another output of the same run) is kept and FileExistsError raised: a link, unlike a
    rename, never replaces.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _staged(path, text)  # a full disk reported only now is never renamed into place
    try:
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _staged(path: Path, text: str) -> Path:
    """``text`` in a hidden temporary file beside ``path``, synced, with the mode a plain
    ``open()`` would give (the replaced file's, or 0666 less the umask)."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~current_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            sync(handle)
            os.fchmod(handle.fileno(), mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def write_together(files: dict[Path, str], fresh: Collection[Path] = ()) -> None:
    """Every file written, or none of the new ones left behind: all are written to temporary
    files first (where a full disk or a kill stops it, nothing of the user's has changed),
    then renamed into place in order. A failure while renaming removes the files this call
    created; one it replaced keeps its new content. A path in ``fresh`` is never replaced:
    a file that appeared there meanwhile is kept (FileExistsError), as :func:`atomic_write`
    with ``replace=False`` does.

    An export wrote its .wgsl, .ts and lockfile one after another: a full disk after the
    first left the .wgsl alone, and the next export into that folder was refused for it."""
    staged: dict[Path, Path] = {}
    placed: list[Path] = []
    try:
        for path in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            staged[path] = _staged(path, files[path])
        for path, tmp in staged.items():
            existed = path.exists()
            if path in fresh:
                os.link(tmp, path)
                tmp.unlink()
            else:
                os.replace(tmp, path)
            if not existed:
                placed.append(path)
    except BaseException:
        for path in placed:
            path.unlink(missing_ok=True)
        raise
    finally:
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)

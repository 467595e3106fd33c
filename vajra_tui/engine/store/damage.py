"""Damaged user folders: rebuild what can be rebuilt, else say in one line what to remove.

The cache directory holds things Vajra can always make again (the calibration,
the GPU worker's log). When one of them is damaged (``calibration.json`` turned
into a directory, ``worker.log`` a directory or a named pipe, the cache directory itself
a file), a run must not end in a traceback, or hang, on this run or any later one. An empty
directory where a file belongs is removed and the file written again; anything
else is left alone (it may be the user's), the run goes on without it, and one
line says what to remove. Front ends print these lines (:func:`take`): the CLI
on stderr, the TUI as a notification.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from vajra_tui.safe_text import one_line
from vajra_tui.engine.store.atomic import atomic_write

_lock = threading.Lock()
_notes: list[str] = []
_said: set[str] = set()


def note(message: str) -> None:
    """Remember a one-line problem, once per process."""
    with _lock:
        if message not in _said:
            _said.add(message)
            _notes.append(message)


def said_elsewhere(message: str) -> None:
    """A front end showed ``message`` its own way (the TUI, as a Notice): not taken again."""
    with _lock:
        _said.add(message)
        if message in _notes:
            _notes.remove(message)


def take() -> list[str]:
    """The problems noted since the last call (each is said once)."""
    with _lock:
        out, _notes[:] = list(_notes), []
    return out


# errnos that mean "no room": the disk, the user's quota, or a file size limit (RLIMIT_FSIZE)
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def disk_problem(exc: OSError) -> str:
    """'disk full (No space left on device)' for a write with no room, else 'cannot write (...)'."""
    words = one_line(exc.strerror or exc, 80)
    return f"disk full ({words})" if exc.errno in _FULL else f"cannot write ({words})"


def _folder_problem(folder: Path) -> str | None:
    """Why files cannot be created in ``folder`` (created if missing), or None."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return f"{one_line(folder)} is a file, not a directory"
    except NotADirectoryError:
        probe = folder
        while probe.parent != probe and not probe.exists():
            probe = probe.parent
        return f"{one_line(probe)} is a file, not a directory"
    except OSError as exc:
        return f"{one_line(folder)}: {one_line(exc.strerror or exc)}"
    return None


_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _kind(mode: int) -> str:
    return next((words for test, words in _KINDS if test(mode)), "a special file")


class NotRegularFile(OSError):
    """A cache file's path holds a named pipe, a socket or a device: opening one could wait forever."""

    def __init__(self, path: Path, kind: str) -> None:
        super().__init__(f"{one_line(path)} is {kind}, not a regular file")
        self.path, self.kind = Path(path), kind


def not_regular(path: Path) -> str | None:
    """What stands at ``path`` when it is neither a regular file nor a directory
    ("a named pipe (FIFO)"); None for a file, a directory or nothing. Never opens it."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else _kind(mode)


def open_regular(path: Path, flags: int, mode: int = 0o666) -> int:
    """``os.open`` that never waits on a named pipe: opened non-blocking, then a descriptor
    that is no regular file is closed and :class:`NotRegularFile` raised. The descriptor
    returned is blocking again."""
    nonblock = getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags | nonblock, mode)
    try:
        st_mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(st_mode):
            raise NotRegularFile(path, "a directory" if stat.S_ISDIR(st_mode) else _kind(st_mode))
        if nonblock:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def file_slot(path: Path, what: str) -> bool:
    """Can a file be written at ``path``? Repairs an empty directory there; notes anything else."""
    path = Path(path)
    problem = _folder_problem(path.parent)
    if problem is not None:
        note(f"{problem}: remove it (or set VAJRA_CACHE_DIR elsewhere) so that caches and logs are kept")
        return False
    if path.is_dir() and not path.is_symlink():
        try:
            path.rmdir()  # an empty directory where a file belongs: rebuilt, nothing lost
        except OSError:
            note(f"{one_line(path)} is a directory, not a file: remove it so that {what} can be kept")
            return False
    kind = not_regular(path)  # a named pipe would make every open wait forever
    if kind is not None:
        note(f"{one_line(path)} is {kind}, not a regular file: remove it so that {what} can be kept")
        return False
    return True


def read_json(path: Path) -> dict[str, Any]:
    """A cache file's JSON object; {} when it is missing or damaged (it is rewritten next store;
    a named pipe or a device there is never opened for long: :func:`file_slot` says what to remove)."""
    try:
        with open(open_regular(Path(path), os.O_RDONLY), encoding="utf-8") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError):  # missing, a directory, a named pipe, not JSON, not UTF-8
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: dict[str, Any], what: str, otherwise: str) -> None:
    """Keep a cache file atomically; a folder that cannot take it costs ``otherwise`` (what
    happens next run instead, e.g. "the roofline is measured again"), never this run."""
    if not file_slot(path, what):
        return
    try:
        atomic_write(Path(path), json.dumps(data, indent=2))
    except OSError as exc:
        note(f"cannot write {one_line(path)} ({one_line(exc.strerror or exc)}): {otherwise} next run")


def open_log(path: Path) -> IO[bytes]:
    """The log file to append to, or (when it cannot be) a private one in the temp folder."""
    if file_slot(path, "the GPU worker's log"):
        try:
            return open(open_regular(Path(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab")
        except NotRegularFile as exc:  # made between the look and the open
            note(f"{exc}: remove it so that the GPU worker's log can be kept")
        except OSError as exc:
            note(f"cannot write {one_line(path)} ({one_line(exc.strerror or exc)}): the GPU worker logs "
                 "elsewhere for now")
    fallback = Path(tempfile.gettempdir()) / f"vajra-tui-worker-{os.getuid() if hasattr(os, 'getuid') else 0}.log"
    try:
        return open(open_regular(fallback, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab")
    except OSError:
        return open(os.devnull, "ab")

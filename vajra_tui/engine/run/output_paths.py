"""Output paths checked before a run starts, so a long tune never ends in a traceback.

``--record`` under ``/proc`` or under a path whose parent is a file, and ``--export``
pointing at a file, used to fail only when the first byte was written, for
``--export`` after the whole tune had run. These checks leave nothing behind: a
folder that does not exist yet is not created here, and the write probe (a
temporary directory in the nearest existing folder) is removed at once.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from vajra_tui.engine.errors import UsageError
from vajra_tui.safe_text import one_line


class OutputPathError(UsageError):
    """An output path that cannot be written; the message is one line for the user."""


def _reason(exc: OSError) -> str:
    return one_line(exc.strerror or exc.__class__.__name__)


def _existing_ancestor(folder: Path) -> Path:
    """The nearest folder on the way up that exists (whatever it is)."""
    probe = folder
    while True:
        try:
            os.stat(probe)
            return probe
        except FileNotFoundError:
            pass
        except NotADirectoryError:  # a component of the path is a file: keep going up
            pass
        except OSError:
            return probe
        if probe.parent == probe:
            return probe
        probe = probe.parent


def check_writable_folder(folder: Path, what: str) -> None:
    """``folder`` is, or can become, a directory this process can create files in."""
    folder = Path(folder)
    base = _existing_ancestor(folder.absolute())
    shown = one_line(base)
    if not base.is_dir():
        raise OutputPathError(f"cannot write {what} under {one_line(folder)}: {shown} is a file, "
                              "not a directory")
    try:  # access() says yes to root even in /proc; only trying tells
        os.rmdir(tempfile.mkdtemp(prefix=".vajra-probe-", dir=base))
    except FileNotFoundError:  # the folder exists, yet creating in it "is not found": /proc, /sys
        raise OutputPathError(f"cannot write {what} under {one_line(folder)}: {shown} does not take new "
                              "files (a virtual file system such as /proc or /sys)") from None
    except OSError as exc:
        raise OutputPathError(f"cannot write {what} under {one_line(folder)}: {shown}: "
                              f"{_reason(exc)}") from None


def _given(flag: str, path: Path) -> str:
    """The option as the user wrote it: ``--export out`` on the command line, ``export='out'`` in the API."""
    return f"{flag}{str(path)!r}" if flag.endswith("=") else f"{flag} {one_line(path)}"


def check_new_file(path: Path, what: str = "recording", flag: str = "--record",
                   folder_must_exist: bool = False) -> None:
    """A new file can be written at ``path`` and none is there to be overwritten.

    ``folder_must_exist``: a file beside the user's others (``--csv``, ``lock merge -o``) goes into a folder
    that is there already; a typo in its folder would otherwise create that folder, and
    the file would land where nobody looks. A recording's folder is created (``--record``
    names a place of its own, as ``--export`` does)."""
    path = Path(path)
    if path.is_dir():
        raise OutputPathError(f"{_given(flag, path)} is a directory; give a file name")
    if path.exists() or path.is_symlink():
        raise OutputPathError(f"{one_line(path)} exists; choose another file for {flag}")
    folder = path.parent
    if folder_must_exist and not folder.is_dir():
        base = _existing_ancestor(folder.absolute())
        if base.is_dir():  # a file on the way is said by check_writable_folder
            raise OutputPathError(f"{flag} {one_line(path)}: the folder {one_line(folder)} does not exist "
                                  f"(create it first; no folder is created for {flag})")
    check_writable_folder(folder, what)


def check_export_folder(folder: Path, names: list[str], overwrite: bool = False,
                        flag: str = "--export") -> None:
    """An export can go to ``folder``: a directory (or creatable), no file of ours already there."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise OutputPathError(f"{_given(flag, folder)} is a file, not a directory")
    check_writable_folder(folder, "the export")
    if not overwrite:
        for name in names:
            target = folder / name
            if target.exists():
                raise OutputPathError(f"{one_line(target)} exists; choose another directory for {flag} "
                                      "(nothing is overwritten)")

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
    _check_lockfile(folder / "vajra.lock.json", flag, overwrite)
    if not overwrite:
        for name in names:
            target = folder / name
            if target.exists():
                raise OutputPathError(f"{one_line(target)} exists; choose another directory for {flag} "
                                      "(nothing is overwritten)")


def _same(a: Path, b: Path) -> bool:
    return Path(os.path.abspath(a)) == Path(os.path.abspath(b))


def written_by_export(path: Path, folder: Path) -> bool:
    """Whether an export into ``folder`` writes (or holds its claim at) ``path``: the kernels
    (``*.wgsl``, ``*.ts``), the lockfile, the claim, or the folder itself."""
    path = Path(path)
    if _same(path, folder):
        return True
    return _same(path.parent, folder) and (path.suffix in (".wgsl", ".ts") or path.name in
                                           ("vajra.lock.json", ".vajra-export.lock"))


def check_distinct(outputs: list[tuple[str, Path | None]], export: tuple[str, Path | None] = ("", None)) -> None:
    """Refuse two outputs at one place before the run: ``--csv same.jsonl --record same.jsonl``
    wrote the CSV over the recording and said "wrote" for both; a recording or CSV named like
    an exported file was replaced by it (or replaced it). ``outputs``: (flag, path) of files."""
    given = [(flag, Path(path)) for flag, path in outputs if path is not None]
    for k, (flag, path) in enumerate(given):
        for other, there in given[k + 1:]:
            if _same(path, there) or _same(path, Path(f"{there}.partial")) or _same(there, Path(f"{path}.partial")):
                raise OutputPathError(f"{flag} {one_line(path)} and {other} {one_line(there)} are one file; "
                                      "give each its own")
        flag_e, folder = export
        if folder is not None and written_by_export(path, Path(folder)):
            raise OutputPathError(f"{flag} {one_line(path)} is where {flag_e} {one_line(folder)} writes its "
                                  "kernels and lockfile; give it another name")


def _check_lockfile(path: Path, flag: str, overwrite: bool) -> None:
    """A lockfile already in the export folder is one the export can update: found only after
    the tune, a foreign or broken one lost the export, with advice (--force) tune does not take."""
    if not (path.exists() or path.is_symlink()):
        return
    from vajra_tui.engine.export.lockfile import load_lock

    try:
        load_lock(path)
    except (ValueError, OSError) as exc:
        if overwrite and path.is_file():
            return
        reason = str(exc).removeprefix(f"{path}: ")
        why = "is a directory" if path.is_dir() else f"is not a Vajra lockfile ({one_line(reason, 80)})"
        raise OutputPathError(f"{one_line(path)} {why}: move it away or choose another directory "
                              f"for {flag} (nothing is overwritten)") from None

"""Where workloads come from: names, files, modules, installed packages and the user's folder.

``--workload`` (and the Python API, and the picker) accept:

- a registered name: every workload an installed package declares in the entry-point
  group ``vajra_tui.workloads``. Vajra's own built-ins are registered the same way
  (see ``pyproject.toml``), so a third-party package's workloads sit beside them;
- a path to a ``.py`` file defining a module-level ``WORKLOAD`` (``mine.py:OTHER`` for
  another name);
- ``package.module:ATTR``, an importable module;
- the name of a ``*.py`` in ``<config dir>/workloads/``, the user's folder, which the
  TUI's picker lists beside the built-ins.

The GPU worker is another process, so it imports the workload again from the same
*spec*; :func:`provenance` says what that spec is for any loaded workload (and finds
one that a script declared at module level). A broken file never stops the others:
each problem is one :class:`WorkloadError` line naming the file and the field.

Registered names come from the packages' metadata (:func:`entry_point_names`); a
registered workload's module is imported when that name is asked for, or when a listing
shows the loaded objects (:func:`registered`, the picker's :func:`everything`), so a slow
or broken plugin costs nothing to a run that does not use it.

This module resolves a spec and loads files, modules and the folder. What it grew
into is split by concern, each name still importable from here: ``registry.py`` (the
entry-point group), ``origins.py`` (:class:`Provenance`, :func:`provenance`) and
``load_checks.py`` (what a loader checks, and an import's failure in one line).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import queue
import re
import sys
import threading
from pathlib import Path
from typing import Iterator

from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.workloads import timed_import
from vajra_tui.engine.workloads.base import Workload, WorkloadError
from vajra_tui.engine.workloads.errors import raised
from vajra_tui.engine.workloads.load_checks import as_workload, import_error, static_check
from vajra_tui.engine.workloads.origins import (
    WORKLOAD_ATTR, Provenance, digest, is_known, of_file, provenance, remember,
)
from vajra_tui.engine.workloads.registry import (
    GROUP, Found, each_other_package, entry_point_names, named, registered, registered_by_name, registered_in_two,
    registered_names,
)

__all__ = ["GROUP", "WORKLOAD_ATTR", "Found", "Provenance", "UnknownWorkload", "each_in_folder",
           "each_in_folder_as_loaded", "each_other_package", "entry_point_names", "everything", "folder", "folder_names", "folder_paths",
           "in_folder", "load", "load_file", "load_module", "provenance", "registered", "registered_by_name",
           "registered_in_two", "registered_names"]


class UnknownWorkload(UsageError, KeyError):
    def __str__(self) -> str:
        names = ", ".join(n for n in [*registered_names(), *folder_names()])
        return (f"unknown workload {self.args[0]!r}; choose one of: {names}, or give a .py file "
                "or package.module:ATTR")


# ---- the user's folder --------------------------------------------------------------
def folder() -> Path:
    """``<config dir>/workloads``: every ``*.py`` there appears in the TUI's picker."""
    from vajra_tui.settings import config_dir

    return config_dir() / "workloads"


def _folder_files() -> list[Path]:
    """The folder's workload files (``_private.py`` and dotfiles left out); OSError when unreadable."""
    return [p for p in folder().glob("*.py") if not p.name.startswith(("_", "."))]


def folder_paths() -> list[Path]:
    """The folder's workload files, sorted, none loaded (an unreadable folder has none): what a
    listing can show at once, before :func:`in_folder` imports them."""
    try:
        return sorted(_folder_files())
    except OSError:
        return []


def in_folder(paths: list[Path] | None = None) -> list[Found]:
    """The folder's files (or ``paths``, as :func:`folder_paths` listed them), each loaded
    (again when it changed); broken ones carry their error."""
    return list(each_in_folder(paths))


def each_in_folder(paths: list[Path] | None = None) -> Iterator[Found]:
    """:func:`in_folder` one file at a time, in folder order: a listing shows the files that
    loaded while a slow one is still importing."""
    taken: set[str] = set()  # this folder's names so far; registered ones are looked up one by one
    for path in folder_paths() if paths is None else paths:
        yield _named(path, _loaded(path), taken)


def each_in_folder_as_loaded(paths: list[Path]) -> Iterator[Found]:
    """Each of ``paths`` imported at once, on a thread of its own, and yielded as its import
    finishes: a file that takes long, or never finishes, holds back none of the others (the
    picker). A name two files share goes to the one first in folder order, as in
    :func:`each_in_folder`: a later file that loaded first holds it until then, and is yielded
    again, refused, once the earlier one has loaded (a listing keyed by path replaces its row)."""
    done: queue.SimpleQueue[tuple[Path, Workload | WorkloadError]] = queue.SimpleQueue()
    for path in paths:
        threading.Thread(target=lambda p=path: done.put((p, _loaded(p))), name=f"vajra-load {path.name[-40:]}",
                         daemon=True).start()
    order = {path: i for i, path in enumerate(paths)}
    holders: dict[str, tuple[Path, Workload]] = {}  # a name, and the file holding it so far
    for _ in paths:
        path, got = done.get()
        held = holders.get(got.name) if isinstance(got, Workload) else None
        if held is not None and order[path] < order[held[0]]:
            del holders[got.name]  # the earlier file takes the name from the later one
            yield _named(path, got, set(holders))
            holders[got.name] = (path, got)
            yield _named(*held, {got.name})
            continue
        found = _named(path, got, set(holders))
        if found.workload is not None:
            holders[found.name] = (path, found.workload)
        yield found


def _loaded(path: Path) -> Workload | WorkloadError:
    try:
        return load_file(path)
    except WorkloadError as exc:
        return exc


def _named(path: Path, got: Workload | WorkloadError, taken: set[str]) -> Found:
    """The folder's row for ``path``: its workload, unless its name is taken already (by a
    registered workload, or a file of ``taken``), or the one line that says why not."""
    try:
        if isinstance(got, WorkloadError):
            raise got
        if got.name in taken or registered_by_name(got.name) is not None:
            raise WorkloadError("name", f"{got.name!r} is taken by another workload: give this one "
                                "its own", str(path))
        taken.add(got.name)
        return Found(str(path), got.name, "folder", got)
    except WorkloadError as exc:
        return Found(str(path), path.stem, "folder", error=str(exc))


def folder_names() -> list[str]:
    try:
        return sorted(p.stem for p in _folder_files())
    except OSError:
        return []


def everything() -> list[Found]:
    """What the picker lists: registered workloads, then the user's folder."""
    return [*registered(), *in_folder()]


# ---- files and modules --------------------------------------------------------------
def load_file(path: str | Path, attr: str = WORKLOAD_ATTR) -> Workload:
    """Import a workload file (a fresh module each time: an edited file is read anew)."""
    path = Path(path).expanduser()
    shown = str(path)
    if not path.is_file():
        raise WorkloadError("", "no such file" if not path.exists() else "not a regular file", shown)
    resolved = path.resolve()
    name = "vajra_workload_" + hashlib.sha1(str(resolved).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise WorkloadError("", "cannot be imported as a Python file", shown)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up here
    try:
        timed_import.exec_module(spec.loader, module, shown)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's file: one line, no traceback
        sys.modules.pop(name, None)
        raise import_error(exc, resolved, shown) from None
    w = as_workload(getattr(module, attr, None), shown, attr)
    registered_one = registered_by_name(w.name)
    if registered_one is not None and _declared_in(registered_one, resolved):
        return registered_one  # the file of a registered workload: the registered object
    if registered_one is not None:
        raise WorkloadError("name", f"{w.name!r} is a registered workload's name: give yours its own", shown)
    return remember(static_check(w, shown), of_file(resolved, attr, shown))


def load_module(spec: str) -> Workload:
    """``package.module:ATTR`` (ATTR defaults to WORKLOAD)."""
    module_name, _, attr = spec.partition(":")
    attr = attr or WORKLOAD_ATTR
    try:
        module = importlib.import_module(module_name)
    except WorkloadError as exc:
        raise exc.located(spec) from None
    except Exception as exc:  # noqa: BLE001
        raise WorkloadError("", raised(exc), spec) from None
    w = as_workload(getattr(module, attr, None), spec, attr)
    registered_one = registered_by_name(w.name)
    if registered_one is not None and registered_one is not w:
        raise WorkloadError("name", f"{w.name!r} is a registered workload's name: give yours its own", spec)
    if is_known(w):
        return w
    return remember(static_check(w, spec), Provenance(f"{module_name}:{attr}", f"module: {spec}",
                                                       digest(getattr(module, "__file__", None))))


def _declared_in(w: Workload, path: Path) -> bool:
    """Whether ``path`` is the file that declares ``w``'s functions (the registered module's file)."""
    module = sys.modules.get(getattr(w.make_inputs, "__module__", "") or "")
    file = getattr(module, "__file__", None)
    return bool(file) and Path(file).resolve() == path


def load(spec: str) -> Workload:
    """A registered name, a ``.py`` path (``:ATTR`` optional), ``package.module:ATTR``, or a
    folder workload's name. Raises UnknownWorkload or WorkloadError (one line)."""
    spec = spec.strip()
    entry = named(spec)  # imports that entry's module only, if it is one
    if entry is not None and entry.workload is not None:
        return entry.workload
    if entry is not None and entry.error:
        raise WorkloadError("", entry.error)
    path_part, _, attr = spec.rpartition(":") if re.search(r"\.py:\w+$", spec) else (spec, "", "")
    if path_part.endswith(".py") or "/" in spec or Path(spec).is_file():
        return load_file(path_part or spec, attr or WORKLOAD_ATTR)
    if ":" in spec:
        return load_module(spec)
    mine = folder() / f"{spec}.py"
    if mine.is_file():
        return load_file(mine)
    for f in in_folder():
        if f.name == spec:
            if f.workload is None:
                raise WorkloadError("", f.error)
            return f.workload
    raise UnknownWorkload(spec)

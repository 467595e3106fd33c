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
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import importlib.util
import re
import sys
import traceback
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.workloads import timed_import
from vajra_tui.engine.workloads.base import Workload, WorkloadError

GROUP = "vajra_tui.workloads"
WORKLOAD_ATTR = "WORKLOAD"
# The built-ins' order in listings, and what is used when the package metadata lists
# none (a source tree used without installing it).
_FALLBACK = {n: f"vajra_tui.engine.workloads.{n}:WORKLOAD"
             for n in ("sgemm", "softmax", "conv1d", "sobel", "layernorm", "gemv", "attention", "fft", "fft2")}
_FIELDS = ("name", "summary", "dims", "presets", "bindings", "buffer_len", "make_inputs",
           "reference", "flops", "output_grid", "baseline", "atol", "rtol", "bytes", "broadcast",
           "defaults", "entry", "grid", "passes", "defines")


class UnknownWorkload(UsageError, KeyError):
    def __str__(self) -> str:
        names = ", ".join(n for n in [*registered_names(), *folder_names()])
        return (f"unknown workload {self.args[0]!r}; choose one of: {names}, or give a .py file "
                "or package.module:ATTR")


@dataclass(frozen=True)
class Found:
    """One workload a listing offers, or the one line that says why it could not be loaded."""

    key: str  # what --workload takes (and the worker imports)
    name: str  # the workload's name; the file's stem when it did not load
    origin: str  # "built-in", "package <dist>", "folder"
    workload: Workload | None = None
    error: str = ""


@dataclass(frozen=True)
class Provenance:
    spec: str  # what the GPU worker imports
    origin: str  # shown with the results: "built-in", "file: mine.py", "module: pkg.mod:W"
    digest: str  # sha256 of the declaring file: an edited file keys its results anew

    @property
    def where(self) -> str:
        """What a one-line error names: the file, the module, or the registered name."""
        kind, _, rest = self.origin.partition(": ")
        return rest if rest and kind in ("file", "module") else f"{self.spec} ({self.origin})"


_KNOWN: dict[int, tuple[Workload, Provenance]] = {}  # holds the object, so its id stays unique
_REGISTERED: _Registry | None = None  # see _registry()


def _remember(w: Workload, prov: Provenance) -> Workload:
    _KNOWN[id(w)] = (w, prov)
    return w


def _digest(path: str | Path | None) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else ""
    except OSError:
        return ""


# ---- installed packages ------------------------------------------------------------
def _entry_points() -> list[EntryPoint]:
    """Vajra's own first (in the order of the README's table), then other packages'.

    Metadata only: an entry point's ``name`` and ``value`` are read from the installed
    packages' ``entry_points.txt`` without importing anything.
    """
    eps = list(entry_points(group=GROUP))
    if not eps:
        eps = [EntryPoint(name, value, GROUP) for name, value in _FALLBACK.items()]
    order = list(_FALLBACK)
    own = sorted((ep for ep in eps if _dist(ep) in ("vajra-tui", "vajra_tui", "")),
                 key=lambda ep: order.index(ep.name) if ep.name in order else len(order))
    return own + [ep for ep in eps if ep not in own]


def _dist(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return str(getattr(dist, "name", "") or "")


def _load_entry(ep: EntryPoint) -> Workload:
    where = f"entry point {ep.name!r} ({ep.value})"
    try:
        obj = ep.load()
    except WorkloadError as exc:
        raise exc.located(where) from None
    except Exception as exc:  # noqa: BLE001 - another package's code: one line, never a traceback
        raise WorkloadError("", _raised(exc), where) from None
    w = _is_workload(obj, where, ep.value.rpartition(":")[2] or WORKLOAD_ATTR)
    if w.name != ep.name:
        raise WorkloadError("name", f"is {w.name!r}, but the entry point registers it as {ep.name!r}", where)
    module = sys.modules.get(ep.value.partition(":")[0])
    own = _dist(ep) in ("vajra-tui", "vajra_tui", "")
    prov = Provenance(ep.name, "built-in" if own else f"package {_dist(ep)}",
                      _digest(getattr(module, "__file__", None)))
    return _remember(_static_check(w, where), prov)


class _Registry:
    """The entry-point group as read once from the metadata; each entry imported when asked for.

    Every process that imports the engine (the GPU worker, each staging process) used to
    import every registered workload, another package's too, so one slow or broken
    plugin slowed or marred every run. Here a workload's module is imported only when
    that name is asked for, or when a listing needs the loaded objects (:func:`registered`).
    """

    def __init__(self, eps: list[EntryPoint]) -> None:
        self.eps = eps
        self._found: dict[int, Found] = {}  # by position in ``eps``: loaded at most once

    def names(self) -> list[str]:
        """Each registered name once, in listing order, nothing imported."""
        return list(dict.fromkeys(ep.name for ep in self.eps))

    def at(self, i: int) -> Found:
        """The ``i``-th entry point, loaded; a name an earlier one took is an error, never imported."""
        found = self._found.get(i)
        if found is None:
            ep = self.eps[i]
            if any(other.name == ep.name for other in self.eps[:i]):
                found = Found(ep.name, ep.name, f"package {_dist(ep)}",
                              error=f"entry point {ep.name!r} ({ep.value}): name already registered")
            else:
                try:
                    w = _load_entry(ep)
                    found = Found(ep.name, ep.name, _KNOWN[id(w)][1].origin, w)
                except WorkloadError as exc:
                    found = Found(ep.name, ep.name, f"package {_dist(ep)}", error=str(exc))
            self._found[i] = found
        return found

    def named(self, name: str) -> Found | None:
        """The first entry point of that name, loaded (it alone): what a lookup by name gets."""
        i = next((i for i, ep in enumerate(self.eps) if ep.name == name), None)
        return None if i is None else self.at(i)

    def everything(self) -> list[Found]:
        return [self.at(i) for i in range(len(self.eps))]


def _registry() -> _Registry:
    """The registry, read from the metadata on first use; ``_REGISTERED = None`` reads it anew."""
    global _REGISTERED
    if _REGISTERED is None:
        _REGISTERED = _Registry(_entry_points())
    return _REGISTERED


def entry_point_names() -> list[str]:
    """Every name the entry-point group registers, read from the packages' metadata alone.

    Nothing is imported, so a broken registered workload is listed too (its error shows
    when it is asked for). :func:`registered_names` imports them all to list only those
    that load.
    """
    return _registry().names()


def registered() -> list[Found]:
    """Every workload of the entry-point group, loaded once; a broken one is listed with its error.

    This imports every registered module: it is for listings that show the loaded
    objects (the picker's descriptions). A lookup by name loads that one only.
    """
    return _registry().everything()


def registered_names() -> list[str]:
    """The registered workloads that load (importing every one to find out)."""
    return [f.name for f in registered() if f.workload is not None]


# ---- the user's folder --------------------------------------------------------------
def folder() -> Path:
    """``<config dir>/workloads``: every ``*.py`` there appears in the TUI's picker."""
    from vajra_tui.settings import config_dir

    return config_dir() / "workloads"


def in_folder() -> list[Found]:
    """The folder's files, each loaded (again when it changed); broken ones carry their error."""
    out: list[Found] = []
    taken: set[str] = set()  # this folder's names so far; registered ones are looked up one by one
    try:
        paths = sorted(p for p in folder().glob("*.py") if not p.name.startswith(("_", ".")))
    except OSError:
        return out
    for path in paths:
        try:
            w = load_file(path)
            if w.name in taken or registered_by_name(w.name) is not None:
                raise WorkloadError("name", f"{w.name!r} is taken by another workload: give this one "
                                    "its own", str(path))
            taken.add(w.name)
            out.append(Found(str(path), w.name, "folder", w))
        except WorkloadError as exc:
            out.append(Found(str(path), path.stem, "folder", error=str(exc)))
    return out


def folder_names() -> list[str]:
    try:
        return sorted(p.stem for p in folder().glob("*.py") if not p.name.startswith(("_", ".")))
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
        raise _import_error(exc, resolved, shown) from None
    w = _is_workload(getattr(module, attr, None), shown, attr)
    registered_one = registered_by_name(w.name)
    if registered_one is not None and _declared_in(registered_one, resolved):
        return registered_one  # the file of a registered workload: the registered object
    if registered_one is not None:
        raise WorkloadError("name", f"{w.name!r} is a registered workload's name: give yours its own", shown)
    spec_text = str(resolved) if attr == WORKLOAD_ATTR else f"{resolved}:{attr}"
    return _remember(_static_check(w, shown), Provenance(spec_text, f"file: {shown}", _digest(resolved)))


def load_module(spec: str) -> Workload:
    """``package.module:ATTR`` (ATTR defaults to WORKLOAD)."""
    module_name, _, attr = spec.partition(":")
    attr = attr or WORKLOAD_ATTR
    try:
        module = importlib.import_module(module_name)
    except WorkloadError as exc:
        raise exc.located(spec) from None
    except Exception as exc:  # noqa: BLE001
        raise WorkloadError("", _raised(exc), spec) from None
    w = _is_workload(getattr(module, attr, None), spec, attr)
    registered_one = registered_by_name(w.name)
    if registered_one is not None and registered_one is not w:
        raise WorkloadError("name", f"{w.name!r} is a registered workload's name: give yours its own", spec)
    if id(w) in _KNOWN:
        return w
    return _remember(_static_check(w, spec), Provenance(f"{module_name}:{attr}", f"module: {spec}",
                                                         _digest(getattr(module, "__file__", None))))


def registered_by_name(name: str) -> Workload | None:
    """The registered workload of that name, importing its module alone; None when none loads."""
    found = _registry().named(name)
    return found.workload if found is not None else None


def _declared_in(w: Workload, path: Path) -> bool:
    """Whether ``path`` is the file that declares ``w``'s functions (the registered module's file)."""
    module = sys.modules.get(getattr(w.make_inputs, "__module__", "") or "")
    file = getattr(module, "__file__", None)
    return bool(file) and Path(file).resolve() == path


def load(spec: str) -> Workload:
    """A registered name, a ``.py`` path (``:ATTR`` optional), ``package.module:ATTR``, or a
    folder workload's name. Raises UnknownWorkload or WorkloadError (one line)."""
    spec = spec.strip()
    entry = _registry().named(spec)  # imports that entry's module only, if it is one
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


def provenance(w: Workload) -> Provenance:
    """What the GPU worker imports to get ``w`` back, where it came from, and its file's digest.

    A workload no loader returned (a script built it and passed it to ``vajra_tui.tune``)
    is found by the module-level name it has in the module that declared its functions.
    """
    known = _KNOWN.get(id(w))
    if known is not None and known[0] is w:
        return known[1]
    for fn in (w.make_inputs, w.reference, w.buffer_len, w.flops, w.output_grid):
        module = sys.modules.get(getattr(fn, "__module__", "") or "")
        if module is None:
            continue
        attr = next((k for k, v in vars(module).items() if v is w), None)
        if attr is None:
            continue
        file = getattr(module, "__file__", None)
        if module.__name__ == "__main__" or module.__name__.startswith("vajra_workload_"):
            if not file:
                break
            spec = str(Path(file).resolve()) + ("" if attr == WORKLOAD_ATTR else f":{attr}")
            prov = Provenance(spec, f"file: {file}", _digest(file))
        else:
            prov = Provenance(f"{module.__name__}:{attr}", f"module: {module.__name__}:{attr}", _digest(file))
        _remember(w, prov)
        return prov
    raise WorkloadError("", f"workload {w.name!r} is no module-level name of a file or module, so "
                        "Vajra's GPU worker (another process) cannot import it: declare it at module "
                        "level in a .py file (WORKLOAD = Workload(...)) and pass that")


# ---- checks -------------------------------------------------------------------------
def _is_workload(obj: object, where: str, attr: str) -> Workload:
    if obj is None:
        raise WorkloadError(attr, "not defined: a workload file defines a module-level "
                            f"{attr} = vajra_tui.Workload(...)", where)
    if not isinstance(obj, Workload):
        raise WorkloadError(attr, f"is a {type(obj).__name__}, not a vajra_tui.Workload", where)
    return obj


def _static_check(w: Workload, where: str) -> Workload:
    """What the functions return at the seed size, cheaply: lengths, grid, FLOPs, atol, bytes.

    Inputs and the reference are checked where they are computed (the GPU worker), at
    the size that runs.
    """
    try:
        seed = w.size("seed")
        w.checked_lengths(seed)
        if w.output_grid is not None:
            grid = _value(w, "output_grid", w.output_grid, seed)
            if (not isinstance(grid, (tuple, list)) or len(grid) != 2
                    or not all(isinstance(v, (int,)) and not isinstance(v, bool) and v >= 1 for v in grid)):
                raise WorkloadError("output_grid", f"returned {grid!r}: want (x, y), two positive integers")
        for field_name, fn in (("flops", w.flops), ("atol", w.tolerance), ("bytes", w.bytes)):
            if fn is None:
                continue
            value = _value(w, field_name, fn, seed)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0 \
                    or value == float("inf"):
                raise WorkloadError(field_name, f"returned {value!r}: want a finite number >= 0")
    except WorkloadError as exc:
        raise exc.located(where) from None
    return w


def _value(w: Workload, field_name: str, fn, size):  # type: ignore[no-untyped-def]
    try:
        value = fn(size)
    except Exception as exc:  # noqa: BLE001
        raise WorkloadError(field_name, _raised(exc)) from None
    try:  # numpy scalars count as numbers
        return value.item() if hasattr(value, "item") and not isinstance(value, (tuple, list)) else value
    except (TypeError, ValueError):
        return value


def _raised(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"raised {type(exc).__name__}" + (f": {text[0]}" if text else "")


def _import_error(exc: BaseException, path: Path, shown: str) -> WorkloadError:
    """One line for whatever importing the file raised, at the file's own line when known
    (``mine.py:12: flops: missing``)."""
    if isinstance(exc, WorkloadError):
        return exc.located(shown)
    if isinstance(exc, SyntaxError):
        return WorkloadError("", f"syntax error: {exc.msg}", f"{shown}:{exc.lineno}")
    line = next((f.lineno for f in reversed(traceback.extract_tb(exc.__traceback__))
                 if Path(f.filename).resolve() == path), None)
    where = f"{shown}:{line}" if line else shown
    if isinstance(exc, TypeError):
        text = str(exc)
        missing = re.search(r"missing \d+ required (?:keyword-only |positional )?arguments?: (.*)", text)
        unknown = re.search(r"unexpected keyword argument '(\w+)'", text)
        binding = "Binding" in text
        if missing:
            names = re.findall(r"'(\w+)'", missing.group(1))
            what = "bindings" if binding else (names[0] if names else "")
            return WorkloadError(what, f"missing (a {'Binding' if binding else 'Workload'} needs "
                                 f"{', '.join(names)})", where)
        if unknown:
            near = difflib.get_close_matches(unknown.group(1), _FIELDS, 1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            return WorkloadError(unknown.group(1), f"is no Workload field{hint}", where)
    return WorkloadError("", f"importing it {_raised(exc)}", where)

"""The workloads installed packages register, in the entry-point group ``vajra_tui.workloads``.

Vajra's own built-ins are registered the same way (see ``pyproject.toml``), so a
third-party package's workloads sit beside them. Registered names come from the
packages' metadata (:func:`entry_point_names`); a registered workload's module is
imported when that name is asked for (:func:`registered_by_name`), or when a listing
shows the loaded objects (:func:`registered`), so a slow or broken plugin costs nothing
to a run that does not use it. Split from ``loader.py``, which takes files, modules and
the user's folder and looks names up here.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points

from vajra_tui.engine.workloads.base import Workload, WorkloadError
from vajra_tui.engine.workloads.errors import raised
from vajra_tui.engine.workloads.load_checks import as_workload, static_check
from vajra_tui.engine.workloads.origins import WORKLOAD_ATTR, Provenance, digest, provenance, remember
from vajra_tui.engine.workloads.timed_import import within_deadline

GROUP = "vajra_tui.workloads"
# The built-ins' order in listings, and what is used when the package metadata lists
# none (a source tree used without installing it).
_FALLBACK = {n: f"vajra_tui.engine.workloads.{n}:WORKLOAD"
             for n in ("sgemm", "softmax", "conv1d", "sobel", "layernorm", "gemv", "attention", "fft", "fft2")}


@dataclass(frozen=True)
class Found:
    """One workload a listing offers, or the one line that says why it could not be loaded."""

    key: str  # what --workload takes (and the worker imports)
    name: str  # the workload's name; the file's stem when it did not load
    origin: str  # "built-in", "package <dist>", "folder"
    workload: Workload | None = None
    error: str = ""


_REGISTERED: _Registry | None = None  # see _registry()


def _entry_points() -> list[EntryPoint]:
    """Vajra's own first (in the order of the README's table), then other packages'.

    Metadata only: an entry point's ``name`` and ``value`` are read from the installed
    packages' ``entry_points.txt`` without importing anything.
    """
    eps = list(entry_points(group=GROUP))
    if not eps:
        eps = [EntryPoint(name, value, GROUP) for name, value in _FALLBACK.items()]
    order = list(_FALLBACK)
    own = sorted((ep for ep in eps if _own(ep)),
                 key=lambda ep: order.index(ep.name) if ep.name in order else len(order))
    return own + [ep for ep in eps if ep not in own]


def _dist(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return str(getattr(dist, "name", "") or "")


def _own(ep: EntryPoint) -> bool:
    """Whether Vajra itself registers ``ep`` (a built-in; a source tree's fallback too)."""
    return _dist(ep) in ("vajra-tui", "vajra_tui", "")


def _load_entry(ep: EntryPoint) -> Workload:
    where = f"entry point {ep.name!r} ({ep.value})"
    try:  # another package's module may never finish importing: under the import deadline
        obj = ep.load() if _own(ep) else within_deadline(ep.load, where)
    except WorkloadError as exc:
        raise exc.located(where) from None
    except Exception as exc:  # noqa: BLE001 - another package's code: one line, never a traceback
        raise WorkloadError("", raised(exc), where) from None
    w = as_workload(obj, where, ep.value.rpartition(":")[2] or WORKLOAD_ATTR)
    if w.name != ep.name:
        raise WorkloadError("name", f"is {w.name!r}, but the entry point registers it as {ep.name!r}", where)
    module = sys.modules.get(ep.value.partition(":")[0])
    prov = Provenance(ep.name, "built-in" if _own(ep) else f"package {_dist(ep)}",
                      digest(getattr(module, "__file__", None)))
    return remember(static_check(w, where), prov)


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
            if self._taken(i):  # keyed by its module:ATTR, which --workload takes, not the name
                found = Found(ep.value, ep.name, f"package {_dist(ep)}",
                              error=f"entry point {ep.name!r} ({ep.value}): name already registered")
            else:
                try:
                    w = _load_entry(ep)
                    found = Found(ep.name, ep.name, provenance(w).origin, w)
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

    def others(self) -> list[int]:
        """Positions of the entry points other packages register."""
        return [i for i, ep in enumerate(self.eps) if not _own(ep)]

    def listed(self, i: int) -> Found:
        """The ``i``-th entry point as a row to fill in later: its name and package, nothing imported."""
        ep = self.eps[i]
        return Found(ep.value if self._taken(i) else ep.name, ep.name, f"package {_dist(ep)}")

    def _taken(self, i: int) -> bool:
        """Whether an earlier entry point registers the ``i``-th one's name."""
        return any(other.name == self.eps[i].name for other in self.eps[:i])


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


def registered_in_two() -> tuple[list[Found], list[Found]]:
    """(Vajra's own, loaded; other packages' as rows to fill in, nothing imported): a listing
    shows the first at once and loads the second off its thread (:func:`each_other_package`),
    since another package's module may take long to import, or never finish."""
    reg = _registry()
    others = reg.others()
    return [reg.at(i) for i in range(len(reg.eps)) if i not in others], [reg.listed(i) for i in others]


def each_other_package() -> Iterator[Found]:
    """Other packages' registered workloads, imported one at a time (each under the import
    deadline), in the order :func:`registered_in_two` listed them."""
    reg = _registry()
    for i in reg.others():
        yield reg.at(i)


def registered_names() -> list[str]:
    """The registered workloads that load (importing every one to find out)."""
    return [f.name for f in registered() if f.workload is not None]


def named(name: str) -> Found | None:
    """The registered entry of that name, its module alone imported (a broken one carries its
    error); None when no package registers the name."""
    return _registry().named(name)


def registered_by_name(name: str) -> Workload | None:
    """The registered workload of that name, importing its module alone; None when none loads."""
    found = named(name)
    return found.workload if found is not None else None

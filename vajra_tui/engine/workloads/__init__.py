"""The workload registry: every workload the entry-point group ``vajra_tui.workloads`` names.

Vajra's own built-ins are registered through that group in ``pyproject.toml``, exactly as
another package registers its own; :mod:`.loader` also takes files, modules and the
user's folder.

Importing this package imports no workload: every process that imports the engine
(the GPU worker, the staging processes) would otherwise import every registered one,
another package's too, and one slow or broken plugin would slow or break every run.
:func:`entry_point_names` lists the registered names from the packages' metadata alone;
:func:`get_workload` imports the one asked for. ``WORKLOADS`` holds the registered ones
that loaded (a broken one from another package is listed by :func:`loader.registered`
with its one-line error); it is built on first access, which imports them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vajra_tui.engine.workloads.base import DTYPES, Binding, Size, SizeError, Workload, WorkloadError
from vajra_tui.engine.workloads.loader import UnknownWorkload, entry_point_names, load, provenance, registered

if TYPE_CHECKING:
    WORKLOADS: dict[str, Workload]


def get_workload(spec: str) -> Workload:
    """A registered name, a ``.py`` file, ``package.module:ATTR`` or a folder workload's name."""
    return load(spec)


def __getattr__(name: str) -> object:
    """``WORKLOADS``, built on first access (PEP 562) and kept, so importing imports no workload."""
    if name == "WORKLOADS":
        workloads: dict[str, Workload] = {f.name: f.workload for f in registered() if f.workload is not None}
        globals()["WORKLOADS"] = workloads  # later accesses find it without coming here
        return workloads
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Binding", "DTYPES", "Size", "SizeError", "Workload", "WorkloadError", "WORKLOADS",
           "entry_point_names", "get_workload", "provenance", "UnknownWorkload"]

"""The workload registry: every workload the entry-point group ``vajra_tui.workloads`` names.

Vajra's own built-ins are registered through that group in ``pyproject.toml``, exactly as
another package registers its own; :mod:`.loader` also takes files, modules and the
user's folder. ``WORKLOADS`` holds the registered ones that loaded (a broken one from
another package is listed by :func:`loader.registered` with its one-line error).
"""

from __future__ import annotations

from vajra_tui.engine.workloads.base import DTYPES, Binding, Size, SizeError, Workload, WorkloadError
from vajra_tui.engine.workloads.loader import UnknownWorkload, load, provenance, registered

WORKLOADS: dict[str, Workload] = {f.name: f.workload for f in registered() if f.workload is not None}


def get_workload(spec: str) -> Workload:
    """A registered name, a ``.py`` file, ``package.module:ATTR`` or a folder workload's name."""
    return load(spec)


__all__ = ["Binding", "DTYPES", "Size", "SizeError", "Workload", "WorkloadError", "WORKLOADS",
           "get_workload", "provenance", "UnknownWorkload"]

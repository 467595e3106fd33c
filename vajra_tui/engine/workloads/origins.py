"""Where a loaded workload came from: what the GPU worker imports to get it back, and its file's digest.

The GPU worker is another process, so it imports a workload again from a *spec* (a
registered name, a file path, ``package.module:ATTR``). Every loader remembers the
:class:`Provenance` of what it returns; :func:`provenance` answers for any workload, and
finds the module-level name of one a script built itself. Split from ``loader.py``: the
registry of installed packages and the file and module loaders both record here.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

from vajra_tui.engine.workloads.base import Workload, WorkloadError

WORKLOAD_ATTR = "WORKLOAD"  # the module-level name a workload file defines


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


def remember(w: Workload, prov: Provenance) -> Workload:
    """Record where ``w`` came from (for :func:`provenance`) and return it."""
    _KNOWN[id(w)] = (w, prov)
    return w


def is_known(w: Workload) -> bool:
    """Whether a loader already returned ``w`` (and so recorded its provenance)."""
    known = _KNOWN.get(id(w))
    return known is not None and known[0] is w


def digest(path: str | Path | None) -> str:
    """sha256 of a file's bytes; empty when there is no file or it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else ""
    except OSError:
        return ""


def of_file(resolved: Path, attr: str, shown: str) -> Provenance:
    """A workload file's provenance: its resolved path (``:ATTR`` unless WORKLOAD), shown as given."""
    spec = str(resolved) if attr == WORKLOAD_ATTR else f"{resolved}:{attr}"
    return Provenance(spec, f"file: {shown}", digest(resolved))


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
            prov = of_file(Path(file).resolve(), attr, file)
        else:
            prov = Provenance(f"{module.__name__}:{attr}", f"module: {module.__name__}:{attr}", digest(file))
        remember(w, prov)
        return prov
    raise WorkloadError("", f"workload {w.name!r} is no module-level name of a file or module, so "
                        "Vajra's GPU worker (another process) cannot import it: declare it at module "
                        "level in a .py file (WORKLOAD = Workload(...)) and pass that")

"""A workload's declaration checked alone, before any of its functions runs.

``Workload.__post_init__`` calls :func:`check_declaration`, so a file with a broken
field fails where it is imported, in one line naming that field (``dims: 'main' is not
a usable WGSL constant name``). Split from ``base.py``: the checks are as long as the
type they check, and nothing else needs them. What the functions *return* is checked
in ``returns.py``, at the size that runs.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
from typing import TYPE_CHECKING, Any, Mapping

from vajra_tui.engine.workloads.bindings import IDENT, Binding, check_binding, check_pass
from vajra_tui.engine.workloads.errors import WorkloadError

if TYPE_CHECKING:
    from vajra_tui.engine.workloads.base import Workload

WORKLOAD_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}\Z")  # becomes <name>.wgsl and a TS string
# Names the prelude defines itself: a dim or binding may not take them.
RESERVED = {"TILES_X", "TILES_Y", "DISPATCH_X", "vajra_tile", "main"}


def check_declaration(w: Workload) -> None:
    """The declaration alone, before any of its functions runs: one field per problem."""
    if not isinstance(w.name, str) or not WORKLOAD_NAME.match(w.name):
        raise WorkloadError("name", f"{w.name!r}: want a letter, then letters, digits, '_' or '-'")
    if not isinstance(w.summary, str):
        raise WorkloadError("summary", "want a string")
    dims = w.dims
    if isinstance(dims, str) or not isinstance(dims, (tuple, list)) or not dims:
        raise WorkloadError("dims", "want a tuple of size-constant names, such as ('M', 'N', 'K')")
    for d in dims:
        if not isinstance(d, str) or not IDENT.match(d) or d in RESERVED:
            raise WorkloadError("dims", f"{d!r} is not a usable WGSL constant name")
    if len(set(dims)) != len(dims):
        raise WorkloadError("dims", "a name appears twice")
    if not isinstance(w.presets, Mapping) or "seed" not in w.presets:
        raise WorkloadError("presets", "want a dict with a 'seed' size (and optionally 'large')")
    for key, size in w.presets.items():
        for d in size if isinstance(size, Mapping) else ():
            if d not in dims:  # {"N": 1 << 20, "K": 3}, dims ("N",): K titles the run, sizes nothing
                raise WorkloadError("presets", f"{key!r} gives {d!r}, which is not in dims{_near(d, dims)}")
        if not isinstance(size, Mapping) or any(not isinstance(size.get(d), int) or size[d] < 1 for d in dims):
            raise WorkloadError("presets", f"{key!r} must give every dim ({', '.join(dims)}) a positive int")
    _check_bindings(w.bindings, set(dims))
    for name in ("buffer_len", "make_inputs", "reference", "flops"):
        if not callable(getattr(w, name)):
            raise WorkloadError(name, "want a function")
    _check_dispatch(w)
    if w.bytes is not None and not callable(w.bytes):
        raise WorkloadError("bytes", "want a function of the size (or leave it out)")
    if not isinstance(w.baseline, str) or "@compute" not in w.baseline.replace("@ compute", "@compute"):
        raise WorkloadError("baseline", f"want the WGSL source of a kernel with `@compute fn {w.entry}`")
    if not callable(w.atol) and (isinstance(w.atol, bool) or not isinstance(w.atol, (int, float))
                                 or not math.isfinite(w.atol) or w.atol < 0):
        raise WorkloadError("atol", f"{w.atol!r}: want a non-negative number or a function of the size")
    if isinstance(w.rtol, bool) or not isinstance(w.rtol, (int, float)) or not 0 <= w.rtol < 1:
        raise WorkloadError("rtol", f"{w.rtol!r}: want a number in [0, 1)")
    _check_broadcast(w.broadcast, dims)
    _check_defaults(w.defaults, dims)


def _near(name: Any, dims: Any) -> str:
    """`` (H, W)``, with a did-you-mean when ``name`` is close to one of them (``'w'`` for ``W``)."""
    listed = f" ({', '.join(dims)})"
    if not isinstance(name, str):
        return listed
    near = [d for d in dims if d.upper() == name.upper()] or difflib.get_close_matches(name, dims, 1)
    return f"{listed}; did you mean {near[0]!r}?" if near else listed


def _check_broadcast(broadcast: Any, dims: Any) -> None:
    """Dims one bare ``--size`` number sets together: a tuple of dim names ("HW" would be H and W)."""
    if isinstance(broadcast, str) or not isinstance(broadcast, (tuple, list)):
        shown = f"{broadcast!r} is a string" if isinstance(broadcast, str) else f"{broadcast!r}"
        raise WorkloadError("broadcast", f"{shown}: want a tuple of dim names, such as "
                            f"{tuple(dims[:2])!r} (or leave it out)")
    for d in broadcast:
        if d not in dims:
            raise WorkloadError("broadcast", f"{d!r} is not in dims{_near(d, dims)}")


def _check_defaults(defaults: Any, dims: Any) -> None:
    """``{dim: value}``: the values a shorter ``--size`` leaves those dims at."""
    if not isinstance(defaults, Mapping):
        raise WorkloadError("defaults", f"{defaults!r}: want a dict of dim values, such as "
                            f"{{{dims[-1]!r}: 64}} (a shorter --size leaves those dims at them)")
    for d, value in defaults.items():
        if d not in dims:
            raise WorkloadError("defaults", f"{d!r} is not in dims{_near(d, dims)}")
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise WorkloadError("defaults", f"{d!r} is {value!r}: want a positive integer")


def _check_dispatch(w: Workload) -> None:
    """Entry points, passes and grids: how the workload's kernel is dispatched."""
    if not isinstance(w.entry, str) or not re.match(r"[A-Za-z_]\w*\Z", w.entry):
        raise WorkloadError("entry", f"{w.entry!r} is not a WGSL function name")
    if not isinstance(w.passes, (tuple, list)):
        raise WorkloadError("passes", "want a tuple of vajra_tui.Pass(entry, grid)")
    for p in w.passes:
        check_pass(p, WorkloadError)
    if len({p.label for p in w.passes}) != len(w.passes):
        raise WorkloadError("passes", "two passes have one name: give each pass a name=")
    storage = {b.name: b for b in w.bindings if isinstance(b, Binding) and b.is_storage}
    for p in w.passes:
        for slot_name, buffer in (p.bind or {}).items():
            if slot_name not in storage or buffer not in storage:
                raise WorkloadError("passes", f"{p.label}: bind {slot_name!r} -> {buffer!r}: both must name "
                                    f"storage bindings ({', '.join(storage)})")
            if storage[slot_name].dtype != storage[buffer].dtype:
                raise WorkloadError("passes", f"{p.label}: bind {slot_name!r} -> {buffer!r}: their dtypes differ")

    for name in ("grid", "defines", "output_grid"):
        if getattr(w, name) is not None and not callable(getattr(w, name)):
            raise WorkloadError(name, "want a function (or leave it out)")
    if w.output_grid is None and w.grid is None and not w.passes:
        raise WorkloadError("output_grid", "missing: give output_grid (planned with the kernel's "
                            "// tile:) or grid=lambda size, params: (x, y, z) workgroups")
    if w.output_grid is None and any(p.grid is None for p in w.passes):
        raise WorkloadError("output_grid", "missing: a pass with grid=None is planned from output_grid "
                            "and the kernel's // tile:")
    if w.passes and w.passes[0].optional:
        raise WorkloadError("passes", f"{w.passes[0].label}: the first pass cannot be optional")


def _check_bindings(bindings: Any, dims: set[str]) -> None:
    if not isinstance(bindings, (tuple, list)) or not bindings:
        raise WorkloadError("bindings", "want a tuple of Binding(index, name, access, dtype)")
    seen_slot, seen_name = set(), set()
    for b in bindings:
        check_binding(b, dims | RESERVED, WorkloadError)
        if b.slot in seen_slot or b.name in seen_name:
            raise WorkloadError("bindings", f"{b.name!r} ({b.where}) is declared twice")
        seen_slot.add(b.slot)
        seen_name.add(b.name)
    if not any(b.is_output for b in bindings):
        raise WorkloadError("bindings", "no output: at least one binding must be 'read_write' or 'inout'")

"""What a workload binds, and the dispatches it runs: ``Binding`` and ``Pass``.

Published kernels declare their resources their own way: bind groups other than 0,
binding numbers with gaps, a uniform params struct, a read_write buffer that holds an
input (in place), an output that accumulates from zero, and intermediates between the
passes of a multi-pass algorithm. A workload states each of those as data, so the
engine can lay the buffers out as the kernel expects instead of the kernel being
rewritten to one contract.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence

import numpy as np

Size = dict[str, int]
Params = Mapping[str, Any]
Access = Literal["read", "read_write", "inout", "scratch", "uniform"]
DType = Literal["f32", "f16", "i32", "u32"]
ACCESSES = ("read", "read_write", "inout", "scratch", "uniform")

# element type -> (numpy dtype, bytes per element)
DTYPES: dict[str, tuple[type, int]] = {
    "f32": (np.float32, 4), "f16": (np.float16, 2), "i32": (np.int32, 4), "u32": (np.uint32, 4),
}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MAX_GROUP = 3  # WebGPU's default maxBindGroups is 4
MAX_BINDING = 999  # maxBindingsPerBindGroup's default is 1000


@dataclass(frozen=True)
class Binding:
    """One buffer the kernel binds, at ``@group(group) @binding(index)``.

    ``access``: ``"read"`` an input; ``"read_write"`` an output (poisoned before every
    dispatch, or started from ``fill`` when it accumulates); ``"inout"`` a read_write
    buffer holding an input (``make_inputs`` gives its start, ``reference`` its end);
    ``"scratch"`` an intermediate between passes (poisoned, or ``fill``); ``"uniform"``
    a params struct of ``fields`` (``(name, WGSL type)``) whose ``values(size, params)``
    Vajra lays out by WGSL's uniform rules (``struct`` names its WGSL type).
    """

    index: int
    name: str
    access: Access
    dtype: DType = "f32"
    group: int = 0
    fill: float | None = None
    fields: tuple[tuple[str, str], ...] = ()
    struct: str = ""
    values: Callable[[Size, Params], Mapping[str, Any]] | None = None

    @property
    def is_output(self) -> bool:
        """Verified against the reference: outputs and in-place buffers."""
        return self.access in ("read_write", "inout")

    @property
    def is_input(self) -> bool:
        """Given by ``make_inputs``: inputs and in-place buffers."""
        return self.access in ("read", "inout")

    @property
    def is_storage(self) -> bool:
        return self.access != "uniform"

    @property
    def writable(self) -> bool:
        return self.access in ("read_write", "inout", "scratch")

    @property
    def slot(self) -> tuple[int, int]:
        return self.group, self.index

    @property
    def where(self) -> str:
        return f"@group({self.group}) @binding({self.index})"

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(DTYPES[self.dtype][0])

    @property
    def width(self) -> int:
        """Bytes per element."""
        return DTYPES[self.dtype][1]


@dataclass(frozen=True)
class Pass:
    """One dispatch of a multi-pass workload: its entry point, its grid, its module.

    ``grid(size, params)`` gives the workgroups along x, y and z; ``grid=None`` plans the
    pass like a single-pass kernel, from the workload's ``output_grid`` and the kernel's
    ``// tile:`` header (so a kernel written for one pass runs unchanged). ``optional=True``:
    the pass runs only for a kernel whose module defines its entry point, and is skipped for
    every other kernel (the baseline included): a split-K kernel brings its combine pass,
    and a single-pass kernel runs alone. ``source`` is the
    pass's own WGSL module (default: the workload's baseline, which then holds every
    pass's entry point); ``name`` labels its time (default: the entry point). ``bind``
    hands a binding another buffer for this pass (``{"items": "blockSums"}``: the kernel's
    ``items`` reads and writes the workload's ``blockSums``), and ``constants(size,
    params)`` sets this pass's ``override`` values, so one entry point can run at each
    level of a multi-level scan.
    """

    entry: str
    grid: Callable[[Size, Params], Sequence[int]] | None
    name: str = ""
    source: str = ""
    bind: Mapping[str, str] | None = None  # binding -> the buffer it gets in this pass
    constants: Callable[[Size, Params], Mapping[str, Any]] | None = None  # this pass's override values
    optional: bool = False  # runs only for a kernel that defines its entry point

    @property
    def label(self) -> str:
        return self.name or self.entry


def check_binding(b: Any, dims: set[str], error: Callable[[str, str], Exception]) -> None:
    """One binding's declaration, alone: one line per problem, naming the binding."""
    if not isinstance(b, Binding):
        raise error("bindings", f"{b!r} is not a vajra_tui.Binding")
    for what, value, top in (("index", b.index, MAX_BINDING), ("group", b.group, MAX_GROUP)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
            raise error("bindings", f"{b.name!r}: {what} {value!r}: want an integer 0..{top}")
    if not isinstance(b.name, str) or not IDENT.match(b.name) or b.name in dims:
        raise error("bindings", f"{b.name!r} is not a usable WGSL name (or clashes with a dim)")
    if b.access not in ACCESSES:
        raise error("bindings", f"{b.name!r}: access {b.access!r}: want one of {', '.join(map(repr, ACCESSES))}")
    if b.dtype not in DTYPES:
        raise error("bindings", f"{b.name!r}: dtype {b.dtype!r}: want one of {', '.join(DTYPES)}")
    if b.fill is not None:
        if b.access not in ("read_write", "scratch") or isinstance(b.fill, bool) \
                or not isinstance(b.fill, (int, float)) or not math.isfinite(b.fill):
            raise error("bindings", f"{b.name!r}: fill {b.fill!r}: a finite number, for a 'read_write' "
                        "output that accumulates or a 'scratch' buffer")
    if b.access == "uniform":
        if not b.fields or not callable(b.values):
            raise error("bindings", f"{b.name!r}: a uniform needs fields=((name, type), ...) and "
                        "values=lambda size, params: {...}")
        if b.struct and not IDENT.match(b.struct):
            raise error("bindings", f"{b.name!r}: struct {b.struct!r} is not a WGSL type name")
    elif b.fields or b.values is not None:
        raise error("bindings", f"{b.name!r}: fields and values belong to a 'uniform' binding")


def check_pass(p: Any, error: Callable[[str, str], Exception]) -> None:
    if not isinstance(p, Pass):
        raise error("passes", f"{p!r} is not a vajra_tui.Pass")
    if not isinstance(p.entry, str) or not IDENT.match(p.entry):
        raise error("passes", f"entry {p.entry!r} is not a WGSL function name")
    if p.grid is not None and not callable(p.grid):
        raise error("passes", f"{p.entry}: grid: want a function of (size, params), or None (planned "
                    "from output_grid and the kernel's // tile:)")
    if not isinstance(p.optional, bool):
        raise error("passes", f"{p.entry}: optional: want True or False")
    if not isinstance(p.source, str) or not isinstance(p.name, str):
        raise error("passes", f"{p.entry}: source and name are strings")
    if p.bind is not None and (not isinstance(p.bind, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in p.bind.items())):
        raise error("passes", f"{p.entry}: bind: want a dict of binding name -> buffer name")
    if p.constants is not None and not callable(p.constants):
        raise error("passes", f"{p.entry}: constants: want a function of (size, params)")


def checked_grid(value: Any, where: str, error: Callable[[str, str], Exception]) -> tuple[int, int, int]:
    """A grid function's value: 1-3 positive workgroup counts, as (x, y, z)."""
    try:
        values = [v.item() if hasattr(v, "item") else v for v in value]
    except TypeError:
        values = []
    if not 1 <= len(values) <= 3 or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise error(where, f"returned {value!r}: want (x, y, z) workgroup counts, 1 to 3 positive integers")
    if any(v > 1 << 31 for v in values):
        raise error(where, f"returned {value!r}: a count past 2^31 workgroups")
    return tuple((values + [1, 1])[:3])  # type: ignore[return-value]

"""The public workload type: a problem declared as data plus a few plain functions.

A workload says what a kernel computes (its size constants, bindings, inputs and a
float64 reference) and how much work that is; the engine needs nothing else to
stitch, dispatch, poison, verify and score a kernel, and never branches on a
workload's name. The built-ins are declared exactly as a user's file declares its
own (``from vajra_tui import Binding, Workload``), so they double as the examples.

Checks happen in two places, so a mistake is reported where it is cheap to find:
``__post_init__`` checks the declaration itself (names, types, bindings:
``declaration.py``), and :meth:`Workload.checked_inputs` / :meth:`Workload.checked_references`
check what the functions return at the size that runs (in the GPU worker, where they are
computed: ``returns.py``). ``--size`` is read in ``sizes.py``; the errors are ``errors.py``'s.
This module keeps the type and what follows from its fields, and every name it always
exported (``WorkloadError``, ``SizeError``, ``RESERVED``, ``WORKLOAD_NAME``) is still
importable from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Union

import numpy as np

from vajra_tui.engine.events import WorkloadInfo

from vajra_tui.engine.workloads import returns, sizes
from vajra_tui.engine.workloads.bindings import DTYPES, Access, Binding, DType, Params, Pass, Size, checked_grid
# RESERVED, WORKLOAD_NAME and SizeError were defined here: the scaffold, the exporter and
# fft.py import them from this module still.
from vajra_tui.engine.workloads.declaration import RESERVED, WORKLOAD_NAME, check_declaration  # noqa: F401
from vajra_tui.engine.workloads.errors import SizeError, WorkloadError, call  # noqa: F401

__all__ = ["DTYPES", "Access", "Binding", "DType", "Params", "Pass", "Size", "Workload", "WorkloadError"]


def padded(nbytes: int) -> int:
    """Storage buffers (and writes to them) come in whole 4-byte words."""
    return max(4, -(-nbytes // 4) * 4)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


Tolerance = Union[float, Callable[[Size], float]]


@dataclass(frozen=True, kw_only=True)
class Workload:
    """A WGSL compute problem. Every field is public and documented in the README.

    ``reference`` returns one float64 array (one output) or a dict keyed by output
    name (several). ``atol`` is a float or a function of the size; every element must
    satisfy ``|out - ref| <= atol + rtol * |ref|``. ``bytes`` (optional) overrides the
    default count of bytes moved: every buffer read or written once at its dtype's width.
    """

    name: str
    summary: str
    dims: tuple[str, ...]  # size constant names, in the order --size fills them
    presets: dict[str, Size]  # "seed" required, "large" optional
    bindings: tuple[Binding, ...]
    buffer_len: Callable[[Size], dict[str, int]]  # elements per binding name
    make_inputs: Callable[[Size, np.random.Generator], dict[str, np.ndarray]]
    reference: Callable[[Size, dict[str, np.ndarray]], Any]  # float64 array, or {output: array}
    flops: Callable[[Size], float]
    baseline: str  # WGSL under the contract; sizes come from the prelude
    atol: Tolerance
    output_grid: Callable[[Size], tuple[int, int]] | None = None  # (x, y) output elements
    rtol: float = 1e-4
    bytes: Callable[[Size], float] | None = None
    broadcast: tuple[str, ...] = ()  # dims that one bare number sets together
    defaults: Size = field(default_factory=dict)  # dims a shorter --size leaves alone
    entry: str = "main"  # the baseline's @compute entry point
    grid: Callable[[Size, Params], tuple[int, ...]] | None = None  # workgroups (x, y, z), explicit
    passes: tuple[Pass, ...] = ()  # several dispatches, verified and timed as one result
    defines: Callable[[Size], Mapping[str, Any]] | None = None  # template values beyond dims/params

    def __post_init__(self) -> None:
        check_declaration(self)

    # ---- sizes -------------------------------------------------------------
    def size(self, spec: str | Mapping[str, int] | None = None) -> Size:
        """Resolve 'seed', 'large', '2048', '4096x1024' or 'M=64,N=32,K=16' (``sizes.py``)."""
        return sizes.resolve(self, spec)

    def size_hint(self) -> str:
        return sizes.hint(self)

    # ---- derived -----------------------------------------------------------
    @property
    def inputs(self) -> tuple[Binding, ...]:
        """What ``make_inputs`` gives: inputs and in-place buffers."""
        return tuple(b for b in self.bindings if b.is_input)

    @property
    def storage(self) -> tuple[Binding, ...]:
        """Every storage buffer (``buffer_len`` gives each one's length)."""
        return tuple(b for b in self.bindings if b.is_storage)

    @property
    def uniforms(self) -> tuple[Binding, ...]:
        return tuple(b for b in self.bindings if not b.is_storage)

    @property
    def multipass(self) -> bool:
        return len(self.passes) > 1

    @property
    def entries(self) -> tuple[str, ...]:
        """The entry point of every pass, in order (one for a single-pass workload)."""
        return tuple(p.entry for p in self.passes) or (self.entry,)

    def grid_of_output(self, size: Size) -> tuple[int, int]:
        """The output grid the dispatch is planned over: ``output_grid``, or the first
        output's elements along x when the workload gives its grid explicitly."""
        if self.output_grid is not None:
            return tuple(self.output_grid(size))  # type: ignore[return-value]
        return int(self.checked_lengths(size)[self.output.name]), 1

    def workgroups(self, size: Size, params: Params, index: int = 0) -> tuple[int, int, int] | None:
        """Pass ``index``'s explicit grid (workgroups along x, y, z), or None when it is
        planned from the output grid and the kernel's tile."""
        fn = self.passes[index].grid if self.passes else self.grid
        if fn is None:
            return None
        where = f"passes[{index}].grid" if self.passes else "grid"
        return checked_grid(call(where, fn, size, dict(params)), where, WorkloadError)

    def pass_constants(self, size: Size, params: Params, index: int) -> dict[str, Any]:
        """Pass ``index``'s own override values (none for a single-pass workload)."""
        fn = self.passes[index].constants if self.passes else None
        if fn is None:
            return {}
        got = call(f"passes[{index}].constants", fn, size, dict(params))
        if not isinstance(got, Mapping):
            raise WorkloadError(f"passes[{index}].constants", f"returned {type(got).__name__}, not a dict")
        return dict(got)

    def template_values(self, size: Size) -> dict[str, Any]:
        """Values a template kernel is filled with, before the tuning parameters: the dims,
        then ``defines(size)``."""
        values: dict[str, Any] = dict(size)
        if self.defines is not None:
            got = call("defines", self.defines, size)
            if not isinstance(got, Mapping):
                raise WorkloadError("defines", f"returned {type(got).__name__}, not a dict of values")
            values.update(got)
        return values

    @property
    def outputs(self) -> tuple[Binding, ...]:
        return tuple(b for b in self.bindings if b.is_output)

    @property
    def output(self) -> Binding:
        """The first output (the one a single-output workload has)."""
        return self.outputs[0]

    @property
    def features(self) -> set[str]:
        """Device features a kernel of this workload needs (f16 bindings: shader-f16)."""
        return {"shader-f16"} if any(b.dtype == "f16" for b in self.bindings) else set()

    def tolerance(self, size: Size) -> float:
        """atol at this size (a float, or the value of the function)."""
        value = self.atol(size) if callable(self.atol) else self.atol
        return float(value)

    def min_bytes(self, size: Size) -> float:
        """Bytes a kernel must move at least: each buffer once at its width, unless declared."""
        if self.bytes is not None:
            return float(self.bytes(size))
        lengths = self.buffer_len(size)
        return float(sum(b.width * int(lengths[b.name]) for b in self.storage if b.access != "scratch"))

    def info(self, size: Size) -> WorkloadInfo:
        lengths = self.buffer_len(size)
        return WorkloadInfo(
            name=self.name,
            size=size,
            flops=float(self.flops(size)),
            min_bytes=self.min_bytes(size),
            output_grid=[int(v) for v in self.grid_of_output(size)],
            atol=self.tolerance(size),
            rtol=float(self.rtol),
            summary=self.summary,
            bindings=[{"index": b.index, "name": b.name, "access": b.access, "dtype": b.dtype,
                       "group": b.group, "elements": int(lengths.get(b.name, 0))} for b in self.bindings],
        )

    def label(self, size: Size) -> str:
        return "x".join(str(size[d]) for d in self.dims)

    # ---- what the functions return, checked --------------------------------------
    def checked_lengths(self, size: Size) -> dict[str, int]:
        """``buffer_len`` at ``size``: one positive integer per binding, nothing else."""
        return returns.checked_lengths(self, size)

    def checked_inputs(self, size: Size, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """``make_inputs``: one array per input binding, of its dtype and ``buffer_len``
        (a dtype mismatch is refused, not cast: the reference must see what the kernel sees)."""
        return returns.checked_inputs(self, size, rng)

    def checked_references(self, size: Size, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``reference``: a float64 (or integer) array per output, of its ``buffer_len``."""
        return returns.checked_references(self, size, inputs)

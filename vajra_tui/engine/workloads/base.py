"""The public workload type: a problem declared as data plus a few plain functions.

A workload says what a kernel computes (its size constants, bindings, inputs and a
float64 reference) and how much work that is; the engine needs nothing else to
stitch, dispatch, poison, verify and score a kernel, and never branches on a
workload's name. The built-ins are declared exactly as a user's file declares its
own (``from vajra_tui import Binding, Workload``), so they double as the examples.

Checks happen in two places, so a mistake is reported where it is cheap to find:
``__post_init__`` checks the declaration itself (names, types, bindings), and
:meth:`Workload.checked_inputs` / :meth:`Workload.checked_references` check what the
functions return at the size that runs (in the GPU worker, where they are computed).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Union

import numpy as np

from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.events import WorkloadInfo

from vajra_tui.engine.workloads.bindings import (
    DTYPES, Access, Binding, DType, Params, Pass, Size, check_binding, check_pass, checked_grid,
)

__all__ = ["DTYPES", "Access", "Binding", "DType", "Params", "Pass", "Size", "Workload", "WorkloadError"]


def padded(nbytes: int) -> int:
    """Storage buffers (and writes to them) come in whole 4-byte words."""
    return max(4, -(-nbytes // 4) * 4)


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
WORKLOAD_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}\Z")  # becomes <name>.wgsl and a TS string
# Names the prelude defines itself: a dim or binding may not take them.
RESERVED = {"TILES_X", "TILES_Y", "DISPATCH_X", "vajra_tile", "main"}


class SizeError(UsageError):
    """A size string that does not fit the workload."""


class WorkloadError(UsageError):
    """A workload declaration (or what its functions return) is broken.

    ``str()`` is one line naming the field: ``bindings: ...``. The loader puts the
    file in front (``mine.py: bindings: ...``), so the user knows what to fix where.
    """

    def __init__(self, field_name: str, problem: str, where: str = "") -> None:
        self.field, self.problem, self.where = field_name, problem, where
        super().__init__(self._text())

    def _text(self) -> str:
        head = f"{self.where}: " if self.where else ""
        return f"{head}{self.field}: {self.problem}" if self.field else f"{head}{self.problem}"

    def located(self, where: str) -> "WorkloadError":
        """The same error, said of ``where`` (a file, a module, an entry point)."""
        return WorkloadError(self.field, self.problem, where)


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
        _check_declaration(self)

    # ---- sizes -------------------------------------------------------------
    def size(self, spec: str | Mapping[str, int] | None = None) -> Size:
        """Resolve 'seed', 'large', '2048', '4096x1024' or 'M=64,N=32,K=16'."""
        if spec is None or spec == "":
            return dict(self.presets["seed"])
        if isinstance(spec, Mapping):
            return self._checked({**self.presets["seed"], **spec})
        text = spec.strip()
        if text.lower() in self.presets:
            return dict(self.presets[text.lower()])
        if "=" in text:
            return self._checked(self._named(text))
        parts = re.split(r"[xX×,]", text)
        try:
            values = [int(p.replace("_", "")) for p in parts]
        except ValueError:
            raise SizeError(f"bad size {spec!r} for {self.name}: expected {self.size_hint()}") from None
        if len(values) > len(self.dims):
            raise SizeError(f"bad size {spec!r}: {self.name} has {len(self.dims)} dims")
        out = {**self.presets["seed"], **self.defaults}
        if len(values) == 1 and self.broadcast:
            out.update({d: values[0] for d in self.broadcast})
        else:
            out.update(dict(zip(self.dims, values)))
        return self._checked(out)

    def _named(self, text: str) -> Size:
        out = dict(self.presets["seed"])
        by_upper = {d.upper(): d for d in self.dims}
        given: set[str] = set()
        for item in text.split(","):
            key, _, value = item.partition("=")
            dim = key.strip() if key.strip() in self.dims else by_upper.get(key.strip().upper())
            if dim is None:
                raise SizeError(f"unknown dimension {key.strip()!r} for {self.name}: {', '.join(self.dims)}")
            if dim in given:  # "M=64,M=32": which one was meant cannot be guessed
                raise SizeError(f"{dim} is given twice in {text!r}")
            given.add(dim)
            try:
                out[dim] = int(value)
            except ValueError:
                raise SizeError(f"bad value for {dim}: {value!r}") from None
        return out

    def _checked(self, size: Mapping[str, int]) -> Size:
        for dim in self.dims:
            if size.get(dim, 0) < 1:
                raise SizeError(f"{self.name}: {dim} must be a positive integer")
            if size[dim] > 1 << 30:
                raise SizeError(f"{self.name}: {dim}={size[dim]} is too large")
        return {d: int(size[d]) for d in self.dims}

    def size_hint(self) -> str:
        seed = "x".join(str(self.presets["seed"][d]) for d in self.dims)
        return f"seed | large | {seed} ({'x'.join(self.dims)})"

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
        return checked_grid(_call(self, where, fn, size, dict(params)), where, WorkloadError)

    def pass_constants(self, size: Size, params: Params, index: int) -> dict[str, Any]:
        """Pass ``index``'s own override values (none for a single-pass workload)."""
        fn = self.passes[index].constants if self.passes else None
        if fn is None:
            return {}
        got = _call(self, f"passes[{index}].constants", fn, size, dict(params))
        if not isinstance(got, Mapping):
            raise WorkloadError(f"passes[{index}].constants", f"returned {type(got).__name__}, not a dict")
        return dict(got)

    def template_values(self, size: Size) -> dict[str, Any]:
        """Values a template kernel is filled with, before the tuning parameters: the dims,
        then ``defines(size)``."""
        values: dict[str, Any] = dict(size)
        if self.defines is not None:
            got = _call(self, "defines", self.defines, size)
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
        got = _call(self, "buffer_len", self.buffer_len, size)
        if not isinstance(got, Mapping):
            raise WorkloadError("buffer_len", f"returned {type(got).__name__}, not a dict of lengths")
        names = [b.name for b in self.storage]
        for name in names:
            if name not in got:
                raise WorkloadError("buffer_len", f"returns no length for binding {name!r}")
        for name, value in got.items():
            if name not in names:
                raise WorkloadError("buffer_len", f"returns a length for {name!r}, which is no binding "
                                    f"(bindings: {', '.join(names)})")
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise WorkloadError("buffer_len", f"length of {name!r} is {value!r}: want a positive integer")
        return {n: int(got[n]) for n in names}

    def checked_inputs(self, size: Size, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """``make_inputs``: one array per input binding, of its dtype and ``buffer_len``.

        A dtype mismatch is refused rather than cast: a reference computed from float64
        inputs would not be the answer to the f32 values the kernel sees.
        """
        lengths = self.checked_lengths(size)
        got = _call(self, "make_inputs", self.make_inputs, size, rng)
        if not isinstance(got, Mapping):
            raise WorkloadError("make_inputs", f"returned {type(got).__name__}, not a dict of arrays")
        want = {b.name: b for b in self.inputs}
        for name in got:
            if name not in want:
                raise WorkloadError("make_inputs", f"returns {name!r}, which is no input binding "
                                    f"(inputs: {', '.join(want) or 'none'})")
        out = {}
        for name, b in want.items():
            if name not in got:
                raise WorkloadError("make_inputs", f"returns no array for input {name!r}")
            arr = np.asarray(got[name])
            if arr.dtype != b.numpy_dtype:
                raise WorkloadError("make_inputs", f"{name!r} is {arr.dtype}, binding {name} is {b.dtype}: "
                                    f"return {b.numpy_dtype} values (the reference must see what the kernel sees)")
            if arr.size != lengths[name]:
                raise WorkloadError("make_inputs", f"{name!r} has {arr.size} elements, buffer_len "
                                    f"says {lengths[name]}")
            out[name] = np.ascontiguousarray(arr).ravel()
        return out

    def checked_references(self, size: Size, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``reference``: a float64 (or integer) array per output, of its ``buffer_len``."""
        lengths = self.checked_lengths(size)
        got = _call(self, "reference", self.reference, size, inputs)
        outs = [b.name for b in self.outputs]
        if not isinstance(got, Mapping):
            if len(outs) > 1:
                raise WorkloadError("reference", f"returned one array; with {len(outs)} outputs "
                                    f"return a dict keyed by {', '.join(map(repr, outs))}")
            got = {outs[0]: got}
        for name in got:
            if name not in outs:
                raise WorkloadError("reference", f"returns {name!r}, which is no output "
                                    f"(outputs: {', '.join(outs)})")
        refs = {}
        for name in outs:
            if name not in got:
                raise WorkloadError("reference", f"returns no array for output {name!r}")
            arr = np.asarray(got[name])
            if not (arr.dtype == np.float64 or np.issubdtype(arr.dtype, np.integer)):
                raise WorkloadError("reference", f"{name!r} is {arr.dtype}: compute it in float64 "
                                    "(more exact than the kernel it judges)")
            if arr.size != lengths[name]:
                raise WorkloadError("reference", f"{name!r} has {arr.size} elements (shape "
                                    f"{arr.shape}); buffer_len says {lengths[name]}")
            refs[name] = np.ascontiguousarray(arr, dtype=np.float64).ravel()
        return refs


def _call(w: Workload, field_name: str, fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except (WorkloadError, KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's function (a BaseException subclass, a
        # sys.exit() too): one line that names it, never the end of the worker or a traceback
        if type(exc).__name__ == "CancelledError":  # asyncio's: a cancel, not the workload's fault
            raise
        text = str(exc).strip().splitlines()
        raise WorkloadError(field_name, f"raised {type(exc).__name__}"
                            + (f": {text[0]}" if text else "")) from exc


def _check_declaration(w: Workload) -> None:
    """The declaration alone, before any of its functions runs: one field per problem."""
    if not isinstance(w.name, str) or not WORKLOAD_NAME.match(w.name):
        raise WorkloadError("name", f"{w.name!r}: want a letter, then letters, digits, '_' or '-'")
    if not isinstance(w.summary, str):
        raise WorkloadError("summary", "want a string")
    dims = w.dims
    if isinstance(dims, str) or not isinstance(dims, (tuple, list)) or not dims:
        raise WorkloadError("dims", "want a tuple of size-constant names, such as ('M', 'N', 'K')")
    for d in dims:
        if not isinstance(d, str) or not _IDENT.match(d) or d in RESERVED:
            raise WorkloadError("dims", f"{d!r} is not a usable WGSL constant name")
    if len(set(dims)) != len(dims):
        raise WorkloadError("dims", "a name appears twice")
    if not isinstance(w.presets, Mapping) or "seed" not in w.presets:
        raise WorkloadError("presets", "want a dict with a 'seed' size (and optionally 'large')")
    for key, size in w.presets.items():
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
    for name in ("broadcast",):
        if any(d not in dims for d in getattr(w, name)):
            raise WorkloadError(name, f"names a dim that is not in dims ({', '.join(dims)})")


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


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)

"""What a workload's functions return at the size that runs, checked before a kernel sees it.

``buffer_len``, ``make_inputs`` and ``reference`` are the user's code: each returns a
dict (or, for one output, an array) that must name exactly the workload's bindings, at
their dtypes and lengths. These checks run in the GPU worker, where the values are
computed, and each problem is one :class:`WorkloadError` line naming the field. They are
the bodies of ``Workload.checked_lengths`` / ``checked_inputs`` / ``checked_references``,
split from ``base.py`` (the declaration itself is checked in ``declaration.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

import numpy as np

from vajra_tui.engine.workloads.bindings import Size
from vajra_tui.engine.workloads.errors import WorkloadError, call

if TYPE_CHECKING:
    from vajra_tui.engine.workloads.base import Workload


def checked_lengths(w: Workload, size: Size) -> dict[str, int]:
    """``buffer_len`` at ``size``: one positive integer per binding, nothing else."""
    got = call("buffer_len", w.buffer_len, size)
    if not isinstance(got, Mapping):
        raise WorkloadError("buffer_len", f"returned {type(got).__name__}, not a dict of lengths")
    names = [b.name for b in w.storage]
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


def checked_inputs(w: Workload, size: Size, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``make_inputs``: one array per input binding, of its dtype and ``buffer_len``.

    A dtype mismatch is refused rather than cast: a reference computed from float64
    inputs would not be the answer to the f32 values the kernel sees.
    """
    lengths = w.checked_lengths(size)
    got = call("make_inputs", w.make_inputs, size, rng)
    if not isinstance(got, Mapping):
        raise WorkloadError("make_inputs", f"returned {type(got).__name__}, not a dict of arrays")
    want = {b.name: b for b in w.inputs}
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


def checked_references(w: Workload, size: Size, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``reference``: a float64 array per output (an integer one for an integer output), of its
    ``buffer_len``, every value finite."""
    lengths = w.checked_lengths(size)
    got = call("reference", w.reference, size, inputs)
    outs = [b.name for b in w.outputs]
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
    for b in w.outputs:
        name = b.name
        if name not in got:
            raise WorkloadError("reference", f"returns no array for output {name!r}")
        arr = np.asarray(got[name])
        integer_output = np.issubdtype(b.numpy_dtype, np.integer)
        # an integer array is an integer output's exact answer; for a float output it is a
        # rounded one (a float32 one too coarse), which the kernel would be judged against
        if not (arr.dtype == np.float64 or (integer_output and np.issubdtype(arr.dtype, np.integer))):
            want = (f"float64 or an integer array (binding {name} is {b.dtype})" if integer_output
                    else f"float64 (more exact than the kernel it judges; binding {name} is {b.dtype})")
            raise WorkloadError("reference", f"{name!r} is {arr.dtype}: compute it in {want}")
        if arr.size != lengths[name]:
            raise WorkloadError("reference", f"{name!r} has {arr.size} elements (shape "
                                f"{arr.shape}); buffer_len says {lengths[name]}")
        ref = np.ascontiguousarray(arr, dtype=np.float64).ravel()
        if arr.dtype == np.float64:
            _check_finite(name, ref)
        refs[name] = ref
    return refs


_CHUNK = 1 << 20  # elements scanned at once: an 8192² reference needs no 64 MiB mask


def _check_finite(name: str, ref: np.ndarray) -> None:
    """A NaN or inf in the reference (np.log of a negative, say) would make every kernel wrong
    there, or none: refused, naming the output and the first such element."""
    for start in range(0, ref.size, _CHUNK):
        bad = ~np.isfinite(ref[start : start + _CHUNK])
        if bad.any():
            i = start + int(np.argmax(bad))
            value = float(ref[i])
            what = "NaN" if np.isnan(value) else ("inf" if value > 0 else "-inf")
            raise WorkloadError("reference", f"output {name!r} holds {what} at {i} "
                                "(non-finite values cannot be verified)")

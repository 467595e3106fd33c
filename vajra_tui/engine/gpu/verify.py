"""Numerical verification: every element within atol + rtol·|ref|, NaN and Inf never pass.

Outputs are poisoned before every dispatch with a NaN of one distinctive bit
pattern (:data:`POISON_BITS`; :data:`POISON_F16` for f16 outputs), not the
canonical quiet NaN that arithmetic produces. Comparing bits tells an element the
kernel never wrote apart from a NaN or Inf it computed (an ``exp`` that overflowed,
``0/0``), so the reason a kernel is rejected says which mistake it made.

An integer has no value that arithmetic cannot produce, so integer outputs are
poisoned with a different pattern on each seed (:data:`INT_POISON`): an element the
kernel never writes holds the wrong value on at least one of them.

A NaN does not survive everything: ``max(y, v)``, ``min(y, v)`` and ``select`` return the
other operand. So a kernel that verifies is run once more from :func:`other_fill`, each
element at one end of its type's range (even elements at one, odd at the other), and must
verify again: what it computes may not depend on what its output held before.

An f16 output cannot hold every value: below 2^-14 its values are subnormal, spaced
2^-24 apart, so even the nearest half to the reference misses it by up to 2^-25, far more
than any relative tolerance of a value that small. Every judge therefore adds one such
step to the absolute tolerance of an f16 output (:func:`output_atol`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np

RTOL = 1e-4
_CHUNK = 1 << 22
# A quiet NaN with a payload no arithmetic on numbers produces (GPUs return 0x7fc00000 or
# 0xffc00000); arithmetic on the poison itself may carry it through (an unwritten scratch
# buffer read by a later pass), so the verdict names both causes.
POISON_BITS = 0x7FD1DEAD
POISON_F16 = 0x7D1D  # the same idea in half precision (arithmetic gives 0x7e00 or 0xfe00)
INT_POISON = (0xFFFFFFFF, 0xAAAAAAAA)  # integer outputs: one pattern per seed, in turn


# (even, odd) words: each element starts at one end of its type's range, so that no
# max/min/select against the old contents returns the answer on every element.
SECOND_FILL = {"f32": (0x7149F2CA, 0xF149F2CA),  # +1e30, -1e30: finite, so arithmetic keeps them
               "f16": (0xFBFF7BFF, 0xFBFF7BFF),  # +65504 (even half), -65504 (odd half)
               "u32": (0x00000000, 0xFFFFFFFF), "i32": (0x80000000, 0x7FFFFFFF)}


F16_STEP = 2.0**-24  # the spacing of f16 subnormals: the absolute error no f16 result can avoid


def output_atol(atol: float, dtype: str) -> float:
    """The absolute tolerance an output of ``dtype`` is judged with: the workload's own, plus
    one subnormal step for f16 (a correctly rounded half may miss a tiny reference by half a
    step, and drivers' f32-to-f16 conversions are not all round-to-nearest there)."""
    return atol + F16_STEP if dtype == "f16" else atol


def other_fill(dtype: str, kind: str = "extremes") -> tuple[int, int]:
    """The (even, odd) words an output of ``dtype`` starts from in a run that is not poisoned:
    "extremes" (:data:`SECOND_FILL`, which checks a verified kernel again: see the module's
    docstring) or "zeros" (where ``y += v`` differs from the poison's)."""
    return SECOND_FILL[dtype] if kind == "extremes" else (0, 0)


def poison_word(dtype: str, seed_index: int = 0) -> int:
    """The 32-bit word an output of ``dtype`` is filled with before a dispatch of that seed."""
    if dtype == "f16":
        return POISON_F16 << 16 | POISON_F16
    if dtype in ("i32", "u32"):
        return INT_POISON[seed_index % len(INT_POISON)]
    return POISON_BITS


@dataclass
class Verdict:
    passed: bool
    max_rel_error: float | None
    worst_index: int | None
    reason: str = ""
    unwritten: int = 0  # elements still holding the poison pattern
    nonfinite: int = 0  # NaN or Inf the kernel computed and wrote
    # Who judged it: "cpu" (read back, float64 here), "gpu" (gpu/gpu_verify.py: counted on the
    # device against the float64 reference held as f32 hi + lo), "gpu+cpu" when outputs differ.
    judged_by: str = "cpu"

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class Tally:
    """What a judge counted over one output: the input of :func:`verdict_of`.

    Public because both judges fill it, the CPU scan here and the GPU judge
    (gpu/gpu_verify.py) from its device counters, and one function words the verdict.
    """

    worst_ratio: float = -1.0
    worst_index: int = 0
    max_rel: float = 0.0
    bad: int = 0
    unwritten: int = 0
    first_unwritten: int | None = None
    nonfinite: int = 0
    first_nonfinite: int | None = None


def floor_of(atol: float, rtol: float) -> float:
    """The |ref| below which the relative error is measured against atol/rtol instead."""
    return atol / rtol if rtol > 0 else max(atol, 1e-30)


def measures(o: np.ndarray, r: np.ndarray, finite: np.ndarray, atol: float, rtol: float,
             floor: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per element: out of tolerance?, error over the limit, relative error (float64).

    The one definition both judges use: the CPU scan over everything, and the GPU
    judge's host step over the few elements it reads back (borderline ones, the
    candidates for the worst), so both paths decide every element alike.
    """
    diff = np.abs(np.where(finite, o, np.inf) - r)
    limit = atol + rtol * np.abs(r)
    bad = ~(diff <= limit)
    finite_diff = np.where(finite, diff, 0.0)
    with np.errstate(over="ignore"):  # an exact workload (atol = rtol = 0): any miss is inf
        ratio = finite_diff / np.maximum(limit, 1e-300)
    return bad, ratio, finite_diff / np.maximum(np.abs(r), floor)


def _scan(out: np.ndarray, ref: np.ndarray, atol: float, rtol: float, poison: int) -> Tally:
    """One pass over the output in chunks, so 8192² outputs need no gigabytes of temporaries."""
    tally = Tally()
    floor = floor_of(atol, rtol)
    integer = np.issubdtype(out.dtype, np.integer)
    bits = out.view(np.uint16 if out.dtype == np.float16 else np.uint32)
    for start in range(0, ref.size, _CHUNK):
        o = out[start : start + _CHUNK].astype(np.float64)
        r = ref[start : start + _CHUNK]
        poisoned = bits[start : start + _CHUNK] == poison
        if integer:  # a poison value is "never written" only where it is not the answer
            poisoned &= o != r
        finite = np.isfinite(o)
        computed_bad = ~finite & ~poisoned
        if poisoned.any():
            tally.unwritten += int(np.count_nonzero(poisoned))
            if tally.first_unwritten is None:
                tally.first_unwritten = start + int(np.argmax(poisoned))
        if computed_bad.any():
            tally.nonfinite += int(np.count_nonzero(computed_bad))
            if tally.first_nonfinite is None:
                tally.first_nonfinite = start + int(np.argmax(computed_bad))
        bad, ratio, rel = measures(o, r, finite, atol, rtol, floor)
        tally.bad += int(np.count_nonzero(bad))
        i = int(np.argmax(ratio))
        if ratio[i] > tally.worst_ratio:
            tally.worst_ratio, tally.worst_index = float(ratio[i]), start + i
        tally.max_rel = max(tally.max_rel, float(np.max(rel)))
    return tally


_NUMPY = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "u32": np.uint32}


def compare(out: np.ndarray, ref: np.ndarray, atol: float, rtol: float = RTOL,
            dtype: str = "f32", poison: int | None = None) -> Verdict:
    """Judge one output (``dtype`` elements) against its float64 reference.

    ``poison``: the pattern the output was filled with (default: the dtype's NaN; the
    seed's pattern for integers), so an element still holding it counts as never written.
    """
    if out.size < ref.size:
        return Verdict(False, None, None, f"output has {out.size} elements, expected {ref.size}")
    out = np.ascontiguousarray(out[: ref.size], dtype=_NUMPY[dtype])
    atol = output_atol(atol, dtype)
    word = poison_word(dtype) if poison is None else poison
    t = _scan(out, ref, atol, rtol, word & 0xFFFF if dtype == "f16" else word)
    return verdict_of(t, ref, lambda i: out[i])


def verdict_of(t: Tally, ref: np.ndarray, got: Callable[[int], Any], judged_by: str = "cpu") -> Verdict:
    """The verdict (and its one-line reason) from a tally, whoever counted it.

    ``got(i)`` is the output's element ``i``: the CPU path has the whole output, the
    GPU path reads back just that element.
    """
    if not t.bad:
        return Verdict(True, t.max_rel, t.worst_index, judged_by=judged_by)
    count = f"{t.bad} of {ref.size} elements out of tolerance"
    if t.unwritten:
        i = t.first_unwritten
        return Verdict(False, float("inf"), i,
                       f"{t.unwritten} of {ref.size} elements never written, first at element {i} "
                       f"(want {float(ref[i]):.6g}; {count}; they hold the poison fill: not stored, or "
                       "computed from memory never written)", t.unwritten, t.nonfinite, judged_by)
    if t.nonfinite:
        i = t.first_nonfinite
        value = got(i)
        what = "NaN" if np.isnan(value) else f"{float(value)}"
        return Verdict(False, float("inf"), i,
                       f"non-finite output: {t.nonfinite} elements computed as NaN or Inf, first at "
                       f"element {i} (got {what}, want {float(ref[i]):.6g}: an overflow or an "
                       f"invalid operation; {count})", 0, t.nonfinite, judged_by)
    i = t.worst_index
    value, want = pair(float(got(i)), float(ref[i]))
    return Verdict(False, t.max_rel, i, f"{count}; worst at {i} (got {value}, want {want})",
                   judged_by=judged_by)


def pair(got: float, want: float) -> tuple[str, str]:
    """Two numbers written so that a reader sees them differ: whole numbers in full (a
    counter off by one at 16291901 reads as such), others in as many digits as it takes."""
    if got.is_integer() and want.is_integer() and max(abs(got), abs(want)) < 2**53:
        return str(int(got)), str(int(want))
    for digits in range(6, 18):
        a, b = f"{got:.{digits}g}", f"{want:.{digits}g}"
        if a != b:
            return a, b
    return a, b


def combine(verdicts: dict[str, Verdict]) -> Verdict:
    """One verdict over several outputs: the first failing one (named), else the worst error."""
    if len(verdicts) == 1:
        return next(iter(verdicts.values()))
    for name, v in verdicts.items():
        if not v.passed:
            return Verdict(False, v.max_rel_error, v.worst_index, f"output {name}: {v.reason}",
                           v.unwritten, v.nonfinite, judged_by(verdicts))
    worst = max(verdicts.values(), key=lambda v: v.max_rel_error or 0.0)
    return Verdict(True, worst.max_rel_error, worst.worst_index, judged_by=judged_by(verdicts))


def judged_by(verdicts: dict[str, Verdict]) -> str:
    """"gpu" or "cpu" when one judge judged every output, else "gpu+cpu"."""
    judges = sorted({v.judged_by for v in verdicts.values()})
    return judges[0] if len(judges) == 1 else "gpu+cpu"

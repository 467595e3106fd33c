"""Numerical verification: every element within atol + rtol·|ref|, NaN and Inf never pass.

Outputs are poisoned before every dispatch with a NaN of one distinctive bit
pattern (:data:`POISON_BITS`), not the canonical quiet NaN that arithmetic
produces. Comparing bits tells an element the kernel never wrote apart from a
NaN or Inf it computed (an ``exp`` that overflowed, ``0/0``), so the reason a
kernel is rejected says which mistake it made.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

RTOL = 1e-4
_CHUNK = 1 << 22
# A quiet NaN with a payload no arithmetic produces (GPUs return 0x7fc00000 or 0xffc00000).
POISON_BITS = 0x7FD1DEAD


@dataclass
class Verdict:
    passed: bool
    max_rel_error: float | None
    worst_index: int | None
    reason: str = ""
    unwritten: int = 0  # elements still holding the poison pattern
    nonfinite: int = 0  # NaN or Inf the kernel computed and wrote

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Tally:
    worst_ratio: float = -1.0
    worst_index: int = 0
    max_rel: float = 0.0
    bad: int = 0
    unwritten: int = 0
    first_unwritten: int | None = None
    nonfinite: int = 0
    first_nonfinite: int | None = None


def _scan(out: np.ndarray, ref: np.ndarray, atol: float, rtol: float) -> _Tally:
    """One pass over the output in chunks, so 8192² outputs need no gigabytes of temporaries."""
    tally = _Tally()
    floor = atol / rtol
    bits = out.view(np.uint32)
    for start in range(0, ref.size, _CHUNK):
        o = out[start : start + _CHUNK].astype(np.float64)
        r = ref[start : start + _CHUNK]
        poisoned = bits[start : start + _CHUNK] == POISON_BITS
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
        diff = np.abs(np.where(finite, o, np.inf) - r)
        limit = atol + rtol * np.abs(r)
        tally.bad += int(np.count_nonzero(~(diff <= limit)))
        finite_diff = np.where(finite, diff, 0.0)
        ratio = finite_diff / limit
        i = int(np.argmax(ratio))
        if ratio[i] > tally.worst_ratio:
            tally.worst_ratio, tally.worst_index = float(ratio[i]), start + i
        tally.max_rel = max(tally.max_rel, float(np.max(finite_diff / np.maximum(np.abs(r), floor))))
    return tally


def compare(out: np.ndarray, ref: np.ndarray, atol: float, rtol: float = RTOL) -> Verdict:
    """Judge one output against its float64 reference."""
    if out.size < ref.size:
        return Verdict(False, None, None, f"output has {out.size} elements, expected {ref.size}")
    out = np.ascontiguousarray(out[: ref.size], dtype=np.float32)
    t = _scan(out, ref, atol, rtol)
    if not t.bad:
        return Verdict(True, t.max_rel, t.worst_index)
    count = f"{t.bad} of {ref.size} elements out of tolerance"
    if t.unwritten:
        i = t.first_unwritten
        return Verdict(False, float("inf"), i,
                       f"{t.unwritten} of {ref.size} elements never written, first at element {i} "
                       f"(want {float(ref[i]):.6g}; {count})", t.unwritten, t.nonfinite)
    if t.nonfinite:
        i = t.first_nonfinite
        what = "NaN" if np.isnan(out[i]) else f"{float(out[i])}"
        return Verdict(False, float("inf"), i,
                       f"non-finite output: {t.nonfinite} elements computed as NaN or Inf, first at "
                       f"element {i} (got {what}, want {float(ref[i]):.6g}: an overflow or an "
                       f"invalid operation; {count})", 0, t.nonfinite)
    i = t.worst_index
    return Verdict(False, t.max_rel, i,
                   f"{count}; worst at {i} (got {float(out[i]):.6g}, want {float(ref[i]):.6g})")

"""Numerical verification: every element within atol + rtol·|ref|, NaN and Inf never pass."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

RTOL = 1e-4
_CHUNK = 1 << 22


@dataclass
class Verdict:
    passed: bool
    max_rel_error: float | None
    worst_index: int | None
    reason: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def compare(out: np.ndarray, ref: np.ndarray, atol: float, rtol: float = RTOL) -> Verdict:
    """Compare in chunks so 8192² outputs do not need gigabytes of temporaries."""
    if out.size < ref.size:
        return Verdict(False, None, None, f"output has {out.size} elements, expected {ref.size}")
    out = out[: ref.size]
    worst_ratio, worst_index, max_rel, bad, first_nonfinite = -1.0, 0, 0.0, 0, None
    floor = atol / rtol
    for start in range(0, ref.size, _CHUNK):
        o = out[start : start + _CHUNK].astype(np.float64)
        r = ref[start : start + _CHUNK]
        finite = np.isfinite(o)
        if first_nonfinite is None and not finite.all():
            first_nonfinite = start + int(np.argmin(finite))
        diff = np.abs(np.where(finite, o, np.inf) - r)
        limit = atol + rtol * np.abs(r)
        ratio = diff / limit
        bad += int(np.count_nonzero(~(diff <= limit)))
        i = int(np.argmax(ratio))
        if ratio[i] > worst_ratio:
            worst_ratio, worst_index = float(ratio[i]), start + i
        rel = diff / np.maximum(np.abs(r), floor)
        max_rel = max(max_rel, float(np.max(rel)))
    if first_nonfinite is not None:
        count = f"{bad} of {ref.size} elements out of tolerance"
        return Verdict(False, float("inf"), first_nonfinite,
                       f"non-finite output at element {first_nonfinite} ({count}; NaN means unwritten)")
    if bad:
        return Verdict(False, max_rel, worst_index,
                       f"{bad} of {ref.size} elements out of tolerance; worst at {worst_index} "
                       f"(got {float(out[worst_index]):.6g}, want {float(ref[worst_index]):.6g})")
    return Verdict(True, max_rel, worst_index)

"""Summary statistics and roofline placement: derived once here, only formatted elsewhere."""

from __future__ import annotations

import numpy as np

from vajra_tui.engine.events import Calibration, CandidateResult


def summarize(times_ms: list[float]) -> dict[str, float]:
    t = np.asarray(times_ms, dtype=np.float64)
    p25, med, p75 = np.percentile(t, [25, 50, 75])
    return {
        "median_ms": float(med), "p25_ms": float(p25), "p75_ms": float(p75),
        "iqr_ms": float(p75 - p25), "min_ms": float(t.min()), "max_ms": float(t.max()),
    }


def plausible_timestamp(ts_ms: float | None, wall_ms: float) -> bool:
    """A timestamp is usable only if positive and not longer than the wall clock around it."""
    return ts_ms is not None and ts_ms > 0.0 and ts_ms <= wall_ms * 1.05 + 0.005


def attainable_gflops(intensity: float, cal: Calibration) -> float:
    return min(cal.fma_gflops, intensity * cal.copy_gbps)


def score(result: CandidateResult, flops: float, min_bytes: float,
          cal: Calibration | None, baseline_ms: float | None) -> CandidateResult:
    """Fill GFLOP/s, GB/s, intensity, roofline percentage, regime and speedup."""
    if not result.median_ms:
        return result
    seconds = result.median_ms / 1e3
    result.gflops = flops / seconds / 1e9
    result.gbps = min_bytes / seconds / 1e9
    result.intensity = flops / min_bytes if min_bytes else None
    if cal and result.intensity:
        ceiling = attainable_gflops(result.intensity, cal)
        result.pct_of_roofline = 100.0 * result.gflops / ceiling if ceiling > 0 else None
        result.regime = "memory" if result.intensity * cal.copy_gbps < cal.fma_gflops else "compute"
        result.suspicious = bool(result.pct_of_roofline and result.pct_of_roofline > 100.0)
    elif cal and result.intensity == 0.0 and cal.copy_gbps > 0:  # pure data movement (a transpose)
        result.pct_of_roofline = 100.0 * result.gbps / cal.copy_gbps
        result.regime = "memory"
        result.suspicious = result.pct_of_roofline > 100.0
    if baseline_ms:
        result.speedup = baseline_ms / result.median_ms
    return result

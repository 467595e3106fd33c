"""Who won: the baseline ranks with the candidates, and a difference inside the noise is a tie.

Every number compared here comes from one interleaved batch, so the samples of two
kernels are paired by round: round r of A ran beside round r of B, under the same
clocks and the same neighbours. A paired bootstrap of the ratio of their medians
says whether the faster one is faster beyond that noise; if the 95% interval
holds 1.0, the crown says "tie" rather than inventing a margin.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from vajra_tui.engine.events import CandidateResult

BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95
_SEED = 20261130  # fixed: the same samples always give the same verdict


@dataclass
class Ranking:
    """The verified kernels fastest first, the baseline among them."""

    ranked: list[CandidateResult]
    winner: CandidateResult | None  # None: the baseline was fastest, or nothing verified
    ties: list[CandidateResult] = field(default_factory=list)  # within noise of the fastest
    baseline_won: bool = False
    # The fastest kernel here when it could not be crowned (over WebGPU's default limits):
    # the report shows it beside the winner.
    fastest: CandidateResult | None = None
    # The kernel whose median beat the baseline's when the bootstrap could not tell them apart:
    # a stalled sample or two among few reps does that, and "nothing beat the baseline" alone
    # would read as if it were slower.
    undecided: CandidateResult | None = None

    @property
    def headline(self) -> str:
        return self._verdict() + self._fastest_note()

    def _verdict(self) -> str:
        if self.baseline_won:
            head = "no portable candidate beat the baseline" if self.fastest else "no candidate beat the baseline"
            return head + self._undecided_note()
        if self.winner is None:
            return "no portable kernel verified" if self.fastest else "no kernel verified"
        if self.ties:
            names = ", ".join(r.name for r in [self.winner, *self.ties])
            return f"tie: {names} are within noise of each other"
        return f"{self.winner.name} wins" + (" (the fastest portable kernel)" if self.fastest else "")

    def _undecided_note(self) -> str:
        """' beyond noise (X's median is 8.6x the baseline's, inside the noise of 5 reps: more reps can tell)'."""
        u = self.undecided
        if u is None or not u.speedup:
            return ""
        return (f" beyond noise ({u.name}'s median is {u.speedup:.2f}x the baseline's, inside the noise"
                f" of {len(u.times_ms)} reps: more reps can tell)")

    def _fastest_note(self) -> str:
        """'; fastest here: X (2.1x), not portable: why' when the fastest kernel was not crowned."""
        if self.fastest is None:
            return ""
        speed = f" ({self.fastest.speedup:.2f}x)" if self.fastest.speedup else ""
        why = "; ".join(self.fastest.portability) or "over WebGPU's default limits"
        return f"; fastest here: {self.fastest.name}{speed}, not portable: {why}"


def ratio_interval(fast: list[float], slow: list[float], paired: bool = True) -> tuple[float, float]:
    """95% bootstrap interval of median(slow) / median(fast).

    Paired (round r of one with round r of the other) when both came from one
    interleaved batch; otherwise each is resampled on its own.
    """
    a = np.asarray(fast, dtype=np.float64)
    b = np.asarray(slow, dtype=np.float64)
    rng = np.random.default_rng(_SEED)
    if paired and len(a) == len(b):
        picks = rng.integers(0, len(a), size=(BOOTSTRAP_RESAMPLES, len(a)))
        ratios = np.median(b[picks], axis=1) / np.median(a[picks], axis=1)
    else:
        pa = rng.integers(0, len(a), size=(BOOTSTRAP_RESAMPLES, len(a)))
        pb = rng.integers(0, len(b), size=(BOOTSTRAP_RESAMPLES, len(b)))
        ratios = np.median(b[pb], axis=1) / np.median(a[pa], axis=1)
    tail = (1.0 - CONFIDENCE) / 2
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return float(low), float(high)


def _relative(r: CandidateResult) -> list[float]:
    """Samples in units of the baseline median of their own batch (comparable across batches)."""
    base = (r.speedup or 0.0) * (r.median_ms or 0.0)
    return [t / base for t in r.times_ms] if base > 0 else list(r.times_ms)


def _speed(r: CandidateResult) -> float:
    """Sort key: the speedup over the baseline of the result's own batch, else the raw median."""
    return -(r.speedup or 0.0) if r.speedup else (r.median_ms or float("inf"))


def within_noise(fast: CandidateResult, other: CandidateResult) -> bool:
    """True when the bootstrap cannot tell ``other`` apart from ``fast``."""
    if len(fast.times_ms) < 2 or len(other.times_ms) < 2:
        return fast.median_ms == other.median_ms
    if fast.batch is not None and fast.batch == other.batch:
        low, _ = ratio_interval(fast.times_ms, other.times_ms)
    else:
        low, _ = ratio_interval(_relative(fast), _relative(other), paired=False)
    return low <= 1.0


def rank(results: list[CandidateResult], baseline_id: str = "baseline",
         crownable: Callable[[CandidateResult], bool] | None = None) -> Ranking:
    """Rank verified results (the baseline included) by speedup over their batch's baseline.

    Within one batch that is the order of the medians; across batches it removes the
    drift that one baseline sample to the next shows. ``crownable`` (``--limits portable``:
    fits WebGPU's defaults) filters who may win; every verified kernel stays in ``ranked``,
    and a faster one it kept from the crown is ``fastest``.
    """
    verified = [r for r in results if r.status == "verified" and r.median_ms]
    verified.sort(key=_speed)
    if not verified:
        return Ranking([], None)
    allowed = [r for r in verified if r.id == baseline_id or crownable is None or crownable(r)]
    barred = verified[0] if verified[0] not in allowed else None
    if not allowed or allowed[0].id == baseline_id:
        return Ranking(verified, None, baseline_won=bool(allowed), fastest=barred)
    best = allowed[0]
    baseline = next((r for r in verified if r.id == baseline_id), None)
    if baseline is not None and within_noise(best, baseline):
        undecided = best if (best.speedup or 0.0) > 1.0 else None  # it ranked above the baseline
        return Ranking(verified, None, baseline_won=True, fastest=barred, undecided=undecided)
    ties = [r for r in allowed[1:] if r.id != baseline_id and within_noise(best, r)]
    return Ranking(verified, best, ties, fastest=barred)

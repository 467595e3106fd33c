"""A recording's numbers checked against each other as it is read, and how it ended.

Every surface (``replay``, its ``--json``, the TUI, ``export`` and its lockfile) shows
what a recording says, so a recording whose numbers disagree with each other is refused
when it is read, in one line that names the line and what disagrees:

* a timed result's median, quartiles, IQR, minimum and maximum are those of its own
  ``times_ms`` (``timing/stats.py``: numpy's linear percentiles of every timed sample,
  none trimmed);
* a speedup is the median of the baseline timed in the result's own batch over the
  result's median (``timing/stats.py`` ``score``; ``cli/render.py``). A batch whose
  baseline failed while it was timed (its failure recorded before the batch's results)
  keeps dividing the baseline the run last verified (the session's ``baseline_ms``), so
  that one is accepted there; a result from an earlier run (``from_cache``, no batch of
  this run) keeps that run's speedup and is not checked. With several GPUs a secondary
  lane's baseline is no result of the recording: the lanes event (``LaneInfo``) gives its
  median for every batch that lane timed;
* a crowned winner is a verified result of the recording, when it is crowned and, in a
  run that ended, at the end.

A run ends its stream with :class:`SessionFinished`; a recording without it was cut off
(``kill -9`` leaves its ``.partial``, Ctrl-C or a failed run leaves it without its end):
it is kept and shown, said to be interrupted (:attr:`Audit.interrupted_note`).
"""

from __future__ import annotations

import math

from vajra_tui.engine.events import (
    CandidateFinished, CandidateResult, Event, LanesUpdated, RankingReady, SessionFinished,
)
from vajra_tui.safe_text import one_line

__all__ = ["Audit", "Inconsistent", "percentile"]

REL_TOL = 1e-9  # float rounding (a JSON round trip is exact; another summing order is not)
STATS = {"median_ms": "median", "p25_ms": "25th percentile", "p75_ms": "75th percentile",
         "iqr_ms": "IQR", "min_ms": "minimum", "max_ms": "maximum"}


class Inconsistent(ValueError):
    """A recording whose numbers disagree: the message is the line and what disagrees."""


def percentile(ordered: list[float], q: float) -> float:
    """numpy's default (linear) percentile of sorted samples; ``q`` in [0, 1]."""
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _same(a: float, b: float, scale: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=REL_TOL * scale)


def _ms(value: float | None) -> str:
    return "none" if value is None else f"{value:.6g} ms"


def _name(r: CandidateResult) -> str:
    return repr(one_line(r.name or r.id, 60))


class Audit:
    """Fed every event of one reading with its line number; :meth:`close` at the end.

    Memory grows with the batches and the kernels, never with the events: a batch's
    baseline median, each kernel's last status, and the speedups whose baseline is yet
    to come (in a recording, a batch's baseline comes first)."""

    def __init__(self, ends_unrecorded: bool = False) -> None:
        """``ends_unrecorded``: a recording made before runs wrote their closing event, whose
        end is then judged as a finished run's (its last crown against its final results)."""
        self.ends_unrecorded = ends_unrecorded
        self.finished = False  # the run's closing event was read
        self.generation: int | None = None  # of the last ranking
        self._status: dict[str, tuple[int, str, str]] = {}  # id -> (line, status, name)
        self._baselines: dict[int, float] = {}  # batch -> verified baseline median
        self._failed_baselines: dict[int, tuple[int, str]] = {}  # batch -> (line, status)
        self._latest: dict[str, float] = {}  # lane -> the baseline median the run timed last
        self._failed_since: dict[str, bool] = {}  # lane -> its baseline failed after it verified
        self._pending: dict[int, list[tuple[int, CandidateResult, float | None]]] = {}
        self._crown: tuple[int, str] | None = None  # the last ranking's (line, winner id)
        # several GPUs (scale/lanes.py): a secondary lane's baseline results stay in its session,
        # and the lanes event says each lane's baseline median of every batch it timed
        self._lane_baselines: dict[str, list[float]] = {}

    def see(self, number: int, event: Event) -> None:
        if isinstance(event, CandidateFinished):
            self._result(number, event.result)
        elif isinstance(event, RankingReady):
            self._ranking(number, event)
        elif isinstance(event, LanesUpdated):  # each lane's baselines, one per batch it timed
            for lane in event.lanes:
                self._lane_baselines[lane.label] = list(lane.baseline_medians_ms)
        elif isinstance(event, SessionFinished):
            self.finished = True

    # ---- a result: its summary, its baseline, its speedup ----------------------------
    def _result(self, number: int, r: CandidateResult) -> None:
        self._status[r.id] = (number, r.status, r.name)
        if r.times_ms:
            self._summary(number, r)
        if r.id == "baseline":
            self._baseline(number, r)
        if r.speedup is None or (r.from_cache and r.batch is None) or (r.id == "baseline" and r.status != "verified"):
            return  # an earlier run's result (--resume) keeps its speedup; a failed baseline, its last batch's
        if r.batch is not None and r.batch not in self._baselines:
            # the run divided the baseline it timed last only when the baseline failed since
            fallback = self._latest.get(r.lane) if self._failed_since.get(r.lane) else None
            self._pending.setdefault(r.batch, []).append((number, r, fallback))
            return
        base = self._baselines[r.batch] if r.batch is not None else self._latest.get(r.lane)
        if base is None:  # recorded before results named their batch, and no baseline before it
            return
        if not self._divides(r, base):
            raise Inconsistent(self._speedup_problem(number, r, base))

    def _summary(self, number: int, r: CandidateResult) -> None:
        ordered = sorted(r.times_ms)
        p25, med, p75 = (percentile(ordered, q) for q in (0.25, 0.5, 0.75))
        derived = {"median_ms": med, "p25_ms": p25, "p75_ms": p75, "iqr_ms": p75 - p25,
                   "min_ms": ordered[0], "max_ms": ordered[-1]}
        scale = max((abs(t) for t in ordered if math.isfinite(t)), default=1.0)
        for field in STATS:
            value = getattr(r, field)
            if field != "median_ms" and value is None:
                continue  # not kept by whatever made it; the median always is
            if value is None or not _same(value, derived[field], scale):
                raise Inconsistent(f"line {number}: {_name(r)} has a {STATS[field]} of {_ms(value)}, but the "
                                   f"{len(ordered)} timed samples it lists give {_ms(derived[field])}")

    def _baseline(self, number: int, r: CandidateResult) -> None:
        if r.status != "verified" or not r.median_ms:
            self._failed_since[r.lane] = True
            if r.batch is not None:
                self._failed_baselines[r.batch] = (number, r.status)
            return
        self._latest[r.lane], self._failed_since[r.lane] = r.median_ms, False
        if r.batch is None:
            return
        self._baselines[r.batch] = r.median_ms
        self._failed_baselines.pop(r.batch, None)
        for line, waiting, _ in self._pending.pop(r.batch, []):
            if not self._divides(waiting, r.median_ms):
                raise Inconsistent(self._speedup_problem(line, waiting, r.median_ms))

    @staticmethod
    def _divides(r: CandidateResult, base: float) -> bool:
        if not r.median_ms or r.speedup is None:
            return False
        return _same(r.speedup, base / r.median_ms, 1.0)

    @staticmethod
    def _speedup_problem(number: int, r: CandidateResult, base: float) -> str:
        batch = f"batch {r.batch}'s" if r.batch is not None else "its"
        if not r.median_ms:
            return f"line {number}: {_name(r)} shows a speedup of {r.speedup:.6g}x but no median"
        return (f"line {number}: {_name(r)} shows a speedup of {r.speedup:.6g}x, but {batch} baseline "
                f"median ({_ms(base)}) over its median ({_ms(r.median_ms)}) is {base / r.median_ms:.6g}x")

    # ---- the crown -------------------------------------------------------------------
    def _ranking(self, number: int, event: RankingReady) -> None:
        self.generation = event.generation
        self._crown = (number, event.winner_id) if event.winner_id else None
        if event.winner_id:
            self._crowned(number, event.winner_id, "crowns")

    def _crowned(self, number: int, cid: str, verb: str) -> None:
        seen = self._status.get(cid)
        if seen is None:
            raise Inconsistent(f"line {number}: the ranking {verb} {one_line(cid, 60)!r}, a kernel "
                               "this recording has no result for")
        line, status, name = seen
        if status != "verified":
            raise Inconsistent(f"line {number}: the ranking {verb} {one_line(name or cid, 60)!r}, whose "
                               f"result (line {line}) is {one_line(status, 30)}, not verified")

    # ---- the end -----------------------------------------------------------------------
    def close(self) -> None:
        """What could only be judged at the end: speedups whose batch never had a verified
        baseline, and (a run that ended) the last crown against the results as they ended."""
        waiting = sorted((entry for batch in self._pending.values() for entry in batch), key=lambda e: e[0])
        for line, r, fallback in waiting:
            if fallback is not None and self._divides(r, fallback):
                continue  # its batch's baseline failed: the run divided the one it timed last
            if any(self._divides(r, base) for base in self._lane_baselines.get(r.lane, ())):
                continue  # timed on a secondary lane, beside that lane's own baseline
            failed = self._failed_baselines.get(r.batch) if r.batch is not None else None
            why = (f"whose baseline is {one_line(failed[1], 30)} (line {failed[0]})" if failed
                   else "which has no verified baseline")
            raise Inconsistent(f"line {line}: {_name(r)} shows a speedup of {r.speedup:.6g}x in batch "
                               f"{r.batch}, {why}")
        self._pending.clear()
        if (self.finished or self.ends_unrecorded) and self._crown is not None:
            self._crowned(*self._crown, "crowns")

    def interrupted_note(self) -> str:
        """One line for a recording with no end of run, else ''."""
        if self.finished:
            return ""
        when = (f"after generation {self.generation}" if self.generation is not None
                else "before its first ranking")
        return f"the run was cut off {when} (no end of run recorded); showing what it measured"

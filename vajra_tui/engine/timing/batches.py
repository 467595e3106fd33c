"""Timing a batch: warm-ups, then rotating timed rounds of every kernel beside the baseline.

:class:`BatchTiming` is the batch half of a :class:`~vajra_tui.engine.session.Session`
(admission/admit.py is the per-candidate half): a collaborator the session builds and
holds, given what is fixed at construction and reading what changes during a run through
:class:`TimingSession`. Every kernel of a batch is timed in one back-to-back submission
where the adapter has timestamps, so drift over time favours nobody and every speedup is
a side-by-side ratio; a result keeps the numbers of the batches it was timed in before.
"""

from __future__ import annotations

import statistics

from dataclasses import dataclass, field
from typing import Protocol

from vajra_tui.engine.admission.admit import COMPILE_TIMEOUT_S
from vajra_tui.engine.events import (
    BatchTelemetry, Calibration, CandidateFinished, CandidateResult, DeviceInfo, DispatchTimed, Event, Notice,
    StageChanged, VerificationFinished, WorkloadInfo,
)
from vajra_tui.engine.gpu.client import WorkerCrashed, WorkerError, WorkerTimeout
from vajra_tui.engine.gpu.protocol import Checked, Time, TimeStream
from vajra_tui.engine.scale.lane import Lane
from vajra_tui.engine.timing.stats import plausible_timestamp, score, summarize
from vajra_tui.settings import TimingSettings


class TimingSession(Protocol):
    """What batch timing reads and writes of its session (a Session is one).

    ``baseline_ms`` is written here, after a batch that timed the baseline: every later
    speedup divides by it and the deadlines scale by it. Failing a kernel and remembering
    a finished one are the session's, which announces outcomes and keeps them on disk.
    """

    results: dict[str, CandidateResult]
    baseline_ms: float | None

    @property
    def device(self) -> DeviceInfo | None: ...

    @property
    def calibration(self) -> Calibration | None: ...

    @property
    def deadline_s(self) -> float: ...

    def deadline_for(self, cid: str) -> float: ...

    def emit(self, event: Event) -> None: ...

    def fail(self, result: CandidateResult, status: str, reason: str) -> bool: ...

    def remember(self, result: CandidateResult) -> None: ...


@dataclass
class _Timed:
    """One kernel's numbers while its batch is being timed."""

    cid: str
    wall: list[float] = field(default_factory=list)
    ts: list[float | None] = field(default_factory=list)
    failed: CandidateResult | None = None
    streamed: bool = False  # timestamps from one back-to-back submission, checked as a whole
    telemetry: BatchTelemetry | None = None


class BatchTiming:
    """Time a batch of admitted kernels and score what verified."""

    def __init__(self, session: TimingSession, client: Lane, timing: TimingSettings,
                 seed: int, info: WorkloadInfo) -> None:
        """``timing``: warm-ups, reps, method and cache state (read at each batch, so a caller
        may change them between batches); ``seed``: the inputs kernels are timed on, the run's
        fresh seed, so that no kernel can carry the answers for them (a kernel that recognises
        the fixed seeds' inputs and returns stored outputs would otherwise be timed on its
        shortcut, and checked against the very outputs it stored); ``info``: the workload's
        flops and bytes that place a result on the roofline."""
        self.session, self.client, self.timing = session, client, timing
        self.seed, self.info = seed, info

    async def time_batch(self, ids: list[str], batch: int) -> list[CandidateResult]:
        """Warm up, then time all ids in rotating rounds; the baseline, if listed, is the reference.
        ``batch`` is the number every result of it names (the session counts batches).

        With timestamps, the whole batch runs back to back in one submission (the GPU
        keeps its clocks); a timeout or implausible timestamps fall back to one
        dispatch per request, which also finds the kernel that hung.
        """
        runs = {cid: _Timed(cid) for cid in ids}
        device = self.session.device
        stamps = device is not None and device.timestamp_query and self.timing.method == "auto"
        if not (stamps and await self._time_stream(runs, batch)):
            await self._time_rounds(runs)
        return self._finish_batch(runs, batch)

    async def _time_stream(self, runs: dict[str, _Timed], batch: int) -> bool:
        ids = list(runs)
        for cid in ids:
            self.session.emit(StageChanged(id=cid, stage="timing"))
        per = sum(self.session.deadline_for(c) for c in ids)
        timeout = per * (self.timing.warmup + self.timing.reps) + COMPILE_TIMEOUT_S
        try:
            reply = await self.client.request(TimeStream(cids=ids, warmup=self.timing.warmup, reps=self.timing.reps,
                                                         seed=self.seed, cache=self.timing.cache,
                                                         bring_up=self.timing.clock_bring_up), timeout)
        except (WorkerTimeout, WorkerCrashed, WorkerError) as exc:
            self.session.emit(Notice(level="warning", message=f"batched timing failed ({exc}); "
                                     "timing one dispatch at a time"))
            return False
        total = sum(sum(t) for t in reply.ts_ms)
        if any(t <= 0 for ts in reply.ts_ms for t in ts) or total > reply.wall_ms * 1.05:
            self.session.emit(Notice(level="warning", message="implausible timestamps; timing with the wall clock"))
            return False
        telemetry = reply.telemetry
        if telemetry is not None and telemetry.unstable:
            self.session.emit(Notice(level="warning", message=(
                f"batch {batch}: the SM clock moved {telemetry.sm_clock_drift:.0%} while it was "
                "timed; its numbers are less comparable")))
        for index, (cid, times, verdict) in enumerate(zip(ids, reply.ts_ms, reply.verdicts)):
            run = runs[cid]
            run.telemetry = telemetry
            run.ts, run.streamed = list(times), True
            for rnd, ms in enumerate(times):
                self.session.emit(DispatchTimed(id=cid, round=rnd, ms=ms, method="timestamp"))
            self._timed_verdict(run, verdict)
            if reply.pass_ms is not None and cid in self.session.results:
                self.session.results[cid].pass_ms = pass_medians(reply.pass_ms[index])
        return True

    async def _time_rounds(self, runs: dict[str, _Timed]) -> None:
        ids = list(runs)
        seed = self.seed
        for cid in ids:
            self.session.emit(StageChanged(id=cid, stage="warmup"))
            await self._time_one(runs[cid], self.timing.warmup, seed, warmup=True, check=False)
        for rnd in range(self.timing.reps):
            live = [cid for cid in ids if runs[cid].failed is None]
            shift = rnd % max(len(live), 1)
            for cid in live[shift:] + live[:shift]:
                if rnd == 0:
                    self.session.emit(StageChanged(id=cid, stage="timing"))
                await self._time_one(runs[cid], 1, seed, warmup=False,
                                     check=rnd == self.timing.reps - 1, rnd=rnd)

    async def _time_one(self, run: _Timed, n: int, seed: int, warmup: bool, check: bool,
                        rnd: int = 0) -> None:
        if run.failed is not None or n <= 0:
            return
        result = self.session.results[run.cid]
        timeout = self.session.deadline_for(run.cid) * n
        try:
            reply = await self.client.request(Time(cid=run.cid, n=n, seed=seed, check=check,
                                                   cache=self.timing.cache), timeout)
        except WorkerTimeout:
            result.deadline_s = timeout
            self.session.fail(result, "timeout", f"killed after its {timeout:.1f} s deadline while timed")
            run.failed = result
            return
        except (WorkerCrashed, WorkerError) as exc:
            self.session.fail(result, "crashed", str(exc))
            run.failed = result
            return
        for wall, ts in zip(reply.wall_ms, reply.ts_ms):
            good = self.timing.method == "auto" and plausible_timestamp(ts, wall)
            self.session.emit(DispatchTimed(id=run.cid, round=rnd, ms=ts if good else wall,
                                            method="timestamp" if good else "wall", warmup=warmup))
            if not warmup:
                run.wall.append(wall)
                run.ts.append(ts)
        if reply.verdict is not None:
            self._timed_verdict(run, reply.verdict)

    def _timed_verdict(self, run: _Timed, verdict: Checked) -> None:
        """The output of the last timed dispatch must verify too."""
        result = self.session.results[run.cid]
        self.session.emit(VerificationFinished(id=run.cid, seed=self.seed, passed=verdict.passed,
                                               max_rel_error=verdict.max_rel_error, worst_index=verdict.worst_index,
                                               reason=verdict.reason, phase="timed", judged_by=verdict.judged_by))
        if not verdict.passed:
            result.max_rel_error, result.worst_index = verdict.max_rel_error, verdict.worst_index
            where = verdict.where or "last timed dispatch"  # the worker checks every one
            # timed on the run's fresh seed: a kernel that passed the fixed seeds fails here
            self.session.fail(result, "rejected", f"{where} (fresh seed {self.seed}): {verdict.reason}")
            run.failed = result

    def _finish_batch(self, runs: dict[str, _Timed], batch: int) -> list[CandidateResult]:
        good = [r for r in runs.values() if r.failed is None and (r.wall or r.streamed)]
        use_ts = self.timing.method == "auto" and all(
            r.streamed or all(plausible_timestamp(ts, w) for ts, w in zip(r.ts, r.wall)) for r in good)
        method = "timestamp" if use_ts and good else "wall"
        for run in good:
            times = [t for t in run.ts] if method == "timestamp" else run.wall
            result = self.session.results[run.cid]
            _keep_history(result)
            result.batch, result.warmup = batch, self.timing.warmup
            result.lane = getattr(self.client, "label", "")  # which adapter these numbers are from
            result.adapter_index = self.session.device.adapter_index if self.session.device else None
            result.cache_state = self.timing.cache
            result.telemetry = run.telemetry or BatchTelemetry(note="no telemetry: timed one dispatch at a time")
            result.times_ms = [float(t) for t in times]
            result.timing = method  # type: ignore[assignment]
            result.__dict__.update(summarize(result.times_ms))
        if "baseline" in runs and runs["baseline"].failed is None:
            self.session.baseline_ms = self.session.results["baseline"].median_ms
        finished = []
        for run in good:
            result = score(self.session.results[run.cid], self.info.flops, self.info.min_bytes,
                           self.session.calibration, self.session.baseline_ms)
            result.status, result.deadline_s = "verified", self.session.deadline_s
            if result.suspicious:
                self.session.emit(Notice(level="warning", message=f"{result.name}: "
                                         f"{result.pct_of_roofline:.0f}% of roofline is suspicious"))
            self.session.emit(StageChanged(id=run.cid, stage="done", detail="verified"))
            self.session.emit(CandidateFinished(result=result))
            self.session.remember(result)
            finished.append(result)
        return finished


def _keep_history(result: CandidateResult) -> None:
    """Before a result is timed again, its earlier batch's numbers move to its history."""
    if result.batch is None or result.median_ms is None:
        return
    result.history.append({"batch": result.batch, "median_ms": result.median_ms,
                           "iqr_ms": result.iqr_ms, "speedup": result.speedup,
                           "timing": result.timing, "reps": len(result.times_ms), "lane": result.lane})


def pass_medians(rounds: list[list[float]]) -> list[float]:
    """Each pass's median over the timed rounds (a single-pass result has none)."""
    if not rounds or len(rounds[0]) < 2:
        return []
    return [float(statistics.median(r[k] for r in rounds)) for k in range(len(rounds[0]))]

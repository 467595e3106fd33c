"""One measuring session: a workload at one size on one adapter.

Candidates go through sanitize → stitch → compile → verify (two seeds) and then
are timed together in interleaved rounds with the baseline, so that drift over
time favours nobody and every speedup is a side-by-side ratio.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import __version__
from ..settings import TimingSettings
from . import calibration_cache
from .admission import COMPILE_TIMEOUT_S, Admission
from .candidate import Candidate
from .contract import Stitched
from .events import (
    BatchTelemetry, Calibration, CalibrationReady, CandidateFinished, CandidateQueued, CandidateResult, DeviceInfo,
    Diagnostic, DispatchTimed, Event, Notice, RankingReady, SessionStarted, StageChanged,
    VerificationFinished,
)
from .gpu.client import GPUClient, WorkerCrashed, WorkerError, WorkerTimeout
from .ranking import Ranking, rank
from .result_cache import ResultCache, result_key
from .stats import plausible_timestamp, score, summarize
from .workloads import Size, Workload, WorkloadError, provenance

Emit = Callable[[Event], None]
BASELINE_TIMEOUT_S = 300.0
DROP_TIMEOUT_S = 30.0
PREPARE_TIMEOUT_S = 900.0
RECALIBRATE_DRIFT = 0.15  # a cached roofline whose copy rate is further off than this is redone


class BaselineError(RuntimeError):
    """The naive baseline failed: nothing after it could be trusted."""


class WorkloadUnsupported(RuntimeError):
    """The adapter lacks what the workload needs (an f16 binding without shader-f16)."""


@dataclass
class _Timed:
    cid: str
    wall: list[float] = field(default_factory=list)
    ts: list[float | None] = field(default_factory=list)
    failed: CandidateResult | None = None
    streamed: bool = False  # timestamps from one back-to-back submission, checked as a whole
    telemetry: BatchTelemetry | None = None


class Session(Admission):
    def __init__(self, workload: Workload, size: Size, client: GPUClient, emit: Emit,
                 timing: TimingSettings | None = None, seeds: tuple[int, ...] = (1, 2),
                 source_mode: str = "library", grounding: bool = False,
                 results_cache: Path | None = None, resume: bool = False) -> None:
        self.workload, self.size, self.client = workload, size, client
        self._sink = emit
        self._announced: set[str] = set()
        self.timing = timing or TimingSettings()
        self.seeds = seeds
        self.source_mode, self.grounding = source_mode, grounding
        self.device: DeviceInfo | None = None
        self.calibration: Calibration | None = None
        self.candidates: dict[str, Candidate] = {}
        self.results: dict[str, CandidateResult] = {}
        self.stitched: dict[str, Stitched] = {}
        self.baseline_ms: float | None = None
        self.batch = 0  # timing batches so far; every result names the one its numbers come from
        # Where the next batch number comes from: several lanes share one counter, so a batch
        # number names one batch on one adapter across the whole run (scale/lanes.py).
        self.next_batch: Callable[[], int] = lambda: self.batch + 1
        self.last_ranking: Ranking | None = None
        self._cache_folder, self.resume = results_cache, resume
        self.measured: ResultCache | None = None  # results of earlier runs on this device
        # what the GPU worker imports to get the workload back, and the digest of its file
        self.provenance = provenance(workload)
        self.info = workload.info(size)
        self.info.origin, self.info.definition_sha256 = self.provenance.origin, self.provenance.digest

    def emit(self, event: Event) -> None:
        """Every event of the session passes here; sources may emit through it too."""
        if isinstance(event, CandidateQueued):
            self._announced.add(event.id)
        self._sink(event)

    # ---- setup ---------------------------------------------------------------
    async def start(self, calibrate: bool = True) -> DeviceInfo:
        self.device = self.client.device or await self.client.astart()
        if self._cache_folder is not None:
            self.measured = ResultCache(self._cache_folder, self.device)
        self.emit(SessionStarted(
            tool_version=__version__, device=self.device, workload=self.info,
            source_mode=self.source_mode, grounding=self.grounding,
            warmup=self.timing.warmup, reps=self.timing.reps, seeds=list(self.seeds)))
        if self.device.software:
            self.emit(Notice(level="warning", message=f"{self.device.name} is a software "
                             "adapter: timings are CPU timings, not GPU timings"))
        why = missing_features(self.workload, self.device)
        if why:
            raise WorkloadUnsupported(why)
        if calibrate:
            await self._calibrate()
        try:
            await self.client.acall("prepare", PREPARE_TIMEOUT_S, workload=self.provenance.spec,
                                    size=self.size, seeds=list(self.seeds))
        except WorkerError as exc:  # the workload's own functions: the user's file, in one line
            text = str(exc)
            if text.startswith("WorkloadError: "):
                raise WorkloadError("", text[len("WorkloadError: "):], self.provenance.where) from None
            raise
        return self.device

    async def _calibrate(self) -> None:
        """The cached roofline, unless a quick copy check finds it more than 15% off."""
        assert self.device is not None
        cached = calibration_cache.load(self.device)
        if cached is not None:
            quick = (await self.client.acall("quick_copy", PREPARE_TIMEOUT_S,
                                             shape=cached.copy_shape))["copy_gbps"]
            drift = abs(quick - cached.copy_gbps) / max(cached.copy_gbps, 1e-9)
            if drift <= RECALIBRATE_DRIFT:
                self.emit(CalibrationReady(calibration=cached, cached=True))
                self.calibration = cached
                return
            self.emit(Notice(level="warning", message=(
                f"copy rate {quick:.1f} GB/s is {drift:.0%} off the cached "
                f"{cached.copy_gbps:.1f} GB/s: calibrating again")))
        reply = await self.client.acall("calibrate", PREPARE_TIMEOUT_S)
        fresh = Calibration(**reply["calibration"])
        fresh.device_key = calibration_cache.key(self.device)
        calibration_cache.store(self.device, fresh)
        self.emit(CalibrationReady(calibration=fresh, cached=False))
        self.calibration = fresh

    @property
    def deadline_s(self) -> float:
        if self.timing.deadline_s:
            return float(self.timing.deadline_s)
        return max(10.0, 20.0 * (self.baseline_ms or 0.0) / 1e3)

    def _deadline_for(self, cid: str) -> float:
        """Per dispatch. Until the baseline has a median there is nothing to scale by, so it gets long."""
        if cid == "baseline" and self.baseline_ms is None and not self.timing.deadline_s:
            return BASELINE_TIMEOUT_S
        return self.deadline_s

    def baseline_candidate(self) -> Candidate:
        return Candidate(id="baseline", name="baseline", strategy="baseline",
                         origin=(f"builtin: {self.workload.name}/naive" if self.provenance.origin == "built-in"
                                 else f"{self.provenance.origin}: baseline"), source=self.workload.baseline)

    # ---- timing --------------------------------------------------------------
    async def time_batch(self, ids: list[str]) -> list[CandidateResult]:
        """Warm up, then time all ids in rotating rounds; the baseline, if listed, is the reference.

        With timestamps, the whole batch runs back to back in one submission (the GPU
        keeps its clocks); a timeout or implausible timestamps fall back to one
        dispatch per request, which also finds the kernel that hung.
        """
        self.batch = self.next_batch()
        runs = {cid: _Timed(cid) for cid in ids}
        stamps = self.device is not None and self.device.timestamp_query and self.timing.method == "auto"
        if not (stamps and await self._time_stream(runs)):
            await self._time_rounds(runs)
        return self._finish_batch(runs)

    async def _time_stream(self, runs: dict[str, _Timed]) -> bool:
        ids = list(runs)
        for cid in ids:
            self.emit(StageChanged(id=cid, stage="timing"))
        per = sum(self._deadline_for(c) for c in ids)
        timeout = per * (self.timing.warmup + self.timing.reps) + COMPILE_TIMEOUT_S
        try:
            reply = await self.client.acall("time_stream", timeout, cids=ids, warmup=self.timing.warmup,
                                            reps=self.timing.reps, seed=self.seeds[0],
                                            cache=self.timing.cache)
        except (WorkerTimeout, WorkerCrashed, WorkerError) as exc:
            self.emit(Notice(level="warning", message=f"batched timing failed ({exc}); "
                             "timing one dispatch at a time"))
            return False
        total = sum(sum(t) for t in reply["ts_ms"])
        if any(t <= 0 for ts in reply["ts_ms"] for t in ts) or total > reply["wall_ms"] * 1.05:
            self.emit(Notice(level="warning", message="implausible timestamps; timing with the wall clock"))
            return False
        telemetry = BatchTelemetry(**reply["telemetry"]) if reply.get("telemetry") else None
        if telemetry is not None and telemetry.unstable:
            self.emit(Notice(level="warning", message=(
                f"batch {self.batch}: the SM clock moved {telemetry.sm_clock_drift:.0%} while it was "
                "timed; its numbers are less comparable")))
        for cid, times, verdict in zip(ids, reply["ts_ms"], reply["verdicts"]):
            run = runs[cid]
            run.telemetry = telemetry
            run.ts, run.streamed = list(times), True
            for rnd, ms in enumerate(times):
                self.emit(DispatchTimed(id=cid, round=rnd, ms=ms, method="timestamp"))
            self._timed_verdict(run, verdict)
        return True

    async def _time_rounds(self, runs: dict[str, _Timed]) -> None:
        ids = list(runs)
        seed = self.seeds[0]
        for cid in ids:
            self.emit(StageChanged(id=cid, stage="warmup"))
            await self._time_one(runs[cid], self.timing.warmup, seed, warmup=True, check=False)
        for rnd in range(self.timing.reps):
            live = [cid for cid in ids if runs[cid].failed is None]
            shift = rnd % max(len(live), 1)
            for cid in live[shift:] + live[:shift]:
                if rnd == 0:
                    self.emit(StageChanged(id=cid, stage="timing"))
                await self._time_one(runs[cid], 1, seed, warmup=False,
                                     check=rnd == self.timing.reps - 1, rnd=rnd)

    async def _time_one(self, run: _Timed, n: int, seed: int, warmup: bool, check: bool,
                        rnd: int = 0) -> None:
        if run.failed is not None or n <= 0:
            return
        result = self.results[run.cid]
        timeout = self._deadline_for(run.cid) * n
        try:
            reply = await self.client.acall("time", timeout, cid=run.cid, n=n, seed=seed, check=check,
                                            cache=self.timing.cache)
        except WorkerTimeout:
            result.deadline_s = timeout
            self._fail(result, "timeout", f"killed after its {timeout:.1f} s deadline while timed")
            run.failed = result
            return
        except (WorkerCrashed, WorkerError) as exc:
            self._fail(result, "crashed", str(exc))
            run.failed = result
            return
        for wall, ts in zip(reply["wall_ms"], reply["ts_ms"]):
            good = self.timing.method == "auto" and plausible_timestamp(ts, wall)
            self.emit(DispatchTimed(id=run.cid, round=rnd, ms=ts if good else wall,
                                    method="timestamp" if good else "wall", warmup=warmup))
            if not warmup:
                run.wall.append(wall)
                run.ts.append(ts)
        if reply.get("verdict") is not None:
            self._timed_verdict(run, reply["verdict"])

    def _timed_verdict(self, run: _Timed, verdict: dict) -> None:
        """The output of the last timed dispatch must verify too."""
        result = self.results[run.cid]
        self.emit(VerificationFinished(id=run.cid, seed=self.seeds[0], passed=verdict["passed"],
                                       max_rel_error=verdict["max_rel_error"],
                                       worst_index=verdict["worst_index"],
                                       reason=verdict["reason"], phase="timed",
                                       judged_by=verdict.get("judged_by", "")))
        if not verdict["passed"]:
            result.max_rel_error, result.worst_index = verdict["max_rel_error"], verdict["worst_index"]
            where = verdict.get("where") or "last timed dispatch"  # the worker checks every one
            self._fail(result, "rejected", f"{where}: {verdict['reason']}")
            run.failed = result

    def _finish_batch(self, runs: dict[str, _Timed]) -> list[CandidateResult]:
        good = [r for r in runs.values() if r.failed is None and (r.wall or r.streamed)]
        use_ts = self.timing.method == "auto" and all(
            r.streamed or all(plausible_timestamp(ts, w) for ts, w in zip(r.ts, r.wall)) for r in good)
        method = "timestamp" if use_ts and good else "wall"
        for run in good:
            times = [t for t in run.ts] if method == "timestamp" else run.wall
            result = self.results[run.cid]
            _keep_history(result)
            result.batch, result.warmup = self.batch, self.timing.warmup
            result.lane = getattr(self.client, "label", "")  # which adapter these numbers are from
            result.adapter_index = self.device.adapter_index if self.device else None
            result.cache_state = self.timing.cache
            result.telemetry = run.telemetry or BatchTelemetry(note="no telemetry: timed one dispatch at a time")
            result.times_ms = [float(t) for t in times]
            result.timing = method  # type: ignore[assignment]
            result.__dict__.update(summarize(result.times_ms))
        if "baseline" in runs and runs["baseline"].failed is None:
            self.baseline_ms = self.results["baseline"].median_ms
        finished = []
        for run in good:
            result = score(self.results[run.cid], self.info.flops, self.info.min_bytes,
                           self.calibration, self.baseline_ms)
            result.status, result.deadline_s = "verified", self.deadline_s
            if result.suspicious:
                self.emit(Notice(level="warning", message=f"{result.name}: "
                                 f"{result.pct_of_roofline:.0f}% of roofline is suspicious"))
            self.emit(StageChanged(id=run.cid, stage="done", detail="verified"))
            self.emit(CandidateFinished(result=result))
            self.remember(result)
            finished.append(result)
        return finished

    # ---- results that outlive the run ------------------------------------------
    def _result_key(self, sha256: str) -> str:
        t = self.timing
        name = f"{self.workload.name}@{self.provenance.digest[:16]}" if self.provenance.digest else \
            self.workload.name  # an edited workload file keys its results anew
        return result_key(name, self.size,
                          {"warmup": t.warmup, "reps": t.reps, "method": t.method, "cache": t.cache},
                          sha256)

    def remember(self, result: CandidateResult) -> None:
        """Keep a final outcome on disk at once, so a killed run loses only what was in flight."""
        if self.measured is None or result.id == "baseline" or not result.source_sha256:
            return
        if result.status in ("verified", "rejected", "compile_error"):
            self.measured.put(self._result_key(result.source_sha256), result)

    def recall(self, result: CandidateResult) -> CandidateResult | None:
        """With --resume: this kernel's outcome from an earlier run on this device, if any."""
        if not self.resume or self.measured is None or not result.source_sha256:
            return None
        return self.measured.get(self._result_key(result.source_sha256))

    # ---- flows ---------------------------------------------------------------
    async def run_baseline(self, time: bool = True) -> CandidateResult:
        if not await self.admit(self.baseline_candidate()):
            failed = self.results["baseline"]
            raise BaselineError(f"baseline {failed.status}: {failed.reason}")
        if time:
            await self.time_batch(["baseline"])
            if self.results["baseline"].status != "verified":
                raise BaselineError(f"baseline failed while timed: {self.results['baseline'].reason}")
        return self.results["baseline"]

    async def evaluate(self, candidates: list[Candidate], generation: int = 1) -> list[CandidateResult]:
        """Admit every candidate, then time the survivors side by side with the baseline."""
        admitted = await self.admit_many(candidates)
        await self.time_batch(["baseline", *admitted])
        await self.drop([c.id for c in candidates if c.id in self.stitched])  # failed ones too: no leak
        return [self.results[c.id] for c in candidates]

    async def drop(self, ids: list[str]) -> None:
        """Release finished candidates' pipelines in the worker, in one request."""
        if ids:
            await self.client.acall("drop", DROP_TIMEOUT_S, cids=ids)

    def standings(self, generation: int, ids: list[str] | None = None,
                  final: bool = False) -> Ranking:
        """Rank verified kernels with the baseline; emit and return the verdict.

        A suspicious result (over 100% of roofline) may still win, but never silently:
        it carries the flag and a notice was emitted when it was scored.
        """
        pool = [self.results[i] for i in ids] if ids is not None else list(self.results.values())
        ranking = rank(pool)
        self.last_ranking = ranking
        batches = {r.batch for r in ranking.ranked}
        self.emit(RankingReady(
            generation=generation, ranked_ids=[r.id for r in ranking.ranked],
            winner_id=ranking.winner.id if ranking.winner else None,
            baseline_median_ms=self.results["baseline"].median_ms if "baseline" in self.results else None,
            baseline_won=ranking.baseline_won, tie_ids=[r.id for r in ranking.ties],
            batch=batches.pop() if len(batches) == 1 else None, final=final, headline=ranking.headline))
        return ranking

    def rank(self, generation: int) -> list[CandidateResult]:
        """The verified candidates, winner first; empty when none beat the baseline."""
        ranking = self.standings(generation)
        if ranking.winner is None:
            return []
        return [r for r in ranking.ranked if r.id != "baseline"]

    async def shootout(self, generation: int, top: int = 5) -> Ranking:
        """Time the best kernels of every generation again, in one batch with the baseline.

        Per-generation numbers come from different batches, each with its own baseline
        sample; the report divides by one. Finalists already timed together with the
        baseline in the latest batch need no second run.
        """
        candidates = [r for r in rank(list(self.results.values())).ranked if r.id != "baseline"][:top]
        ids = [r.id for r in candidates]
        base = self.results.get("baseline")
        if not ids or base is None:
            return self.standings(generation, final=True)
        if {r.batch for r in candidates} != {base.batch}:
            await self._prebuild([self.stitched[cid] for cid in ids])
            for cid in ids:
                st = self.stitched[cid]
                await self.client.acall("compile", max(COMPILE_TIMEOUT_S, self.deadline_s), cid=cid,
                                        source=st.source, dispatch=list(st.dispatch),
                                        constants=st.constants)
            await self.time_batch(["baseline", *ids])
            await self.drop(ids)
        return self.standings(generation, ["baseline", *ids], final=True)

    async def check_browser(self, cid: str) -> CandidateResult:
        """Give a crowned kernel its browser badge: does Tint (Dawn, under Node) accept it?"""
        from .browser_check import browser_badge

        result = self.results[cid]
        if result.browser or not result.stitched_source:
            return result
        from .export_wgsl import with_defaults

        badge = await asyncio.to_thread(browser_badge, with_defaults(result.stitched_source, result.constants))
        status = badge["status"]
        result.browser = status if status != "unchecked" else f"unchecked: {badge['reason']}"
        result.browser_diagnostics = [
            Diagnostic(line=max(m["candidate_line"], 1), column=max(m["column"], 1), message=m["message"])
            for m in badge["messages"]]
        if status == "tint-rejected":
            self.emit(Notice(level="warning", message=f"{result.name} is not browser-valid: {badge['reason']}"))
        self.emit(CandidateFinished(result=result))
        return result

    def source_sha(self, cid: str) -> str:
        st = self.stitched.get(cid)
        return st.sha256 if st else hashlib.sha256(self.candidates[cid].source.encode()).hexdigest()


def missing_features(workload: Workload, device: DeviceInfo) -> str | None:
    """Why this adapter cannot run the workload (an f16 binding without shader-f16), or None."""
    missing = sorted(f for f in workload.features if f not in device.enabled_features)
    if not missing:
        return None
    dtypes = sorted({b.dtype for b in workload.bindings if b.dtype == "f16"})
    return (f"{workload.name} has {', '.join(dtypes)} bindings, which need {', '.join(missing)}; "
            f"{device.name} does not offer it")


def _keep_history(result: CandidateResult) -> None:
    """Before a result is timed again, its earlier batch's numbers move to its history."""
    if result.batch is None or result.median_ms is None:
        return
    result.history.append({"batch": result.batch, "median_ms": result.median_ms,
                           "iqr_ms": result.iqr_ms, "speedup": result.speedup,
                           "timing": result.timing, "reps": len(result.times_ms), "lane": result.lane})

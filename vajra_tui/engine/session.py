"""One measuring session: a workload at one size on one adapter.

Candidates go through sanitize → stitch → compile → verify (two seeds) (admission/admit.py)
and then are timed together in interleaved rounds with the baseline (timing/batches.py),
so that drift over time favours nobody and every speedup is a side-by-side ratio.

The session owns the run's state (device, calibration, the books of candidates, results
and stitched kernels, the baseline's median, the batch counter) and its announcements.
Admission and batch timing are collaborators it builds and holds: each is handed what is
fixed at construction and reads the rest through a Protocol of its own
(:class:`~vajra_tui.engine.admission.admit.AdmissionSession`,
:class:`~vajra_tui.engine.timing.batches.TimingSession`), which this class satisfies.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Callable

from vajra_tui.engine.errors import RunFailed
from vajra_tui import __version__
from vajra_tui.settings import TimingSettings
from vajra_tui.engine.admission.adapter_fit import missing_features, oversized
from vajra_tui.engine.admission.admit import COMPILE_TIMEOUT_S, Admission
from vajra_tui.engine.admission.portability import LIMITS, portability_problems
from vajra_tui.engine.timing.batches import BatchTiming
from vajra_tui.engine.timing.roofline import PREPARE_TIMEOUT_S, roofline
from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.admission.contract import Stitched
from vajra_tui.engine.events import (
    Calibration, CandidateFinished, CandidateQueued, CandidateResult, DeviceInfo,
    Event, Notice, RankingReady, SessionStarted, StageChanged,
)
from vajra_tui.engine.gpu.loop_limit import told_with
from vajra_tui.engine.gpu.protocol import Drop, Prepare, Verify, WorkerCrashed, WorkerTimeout
from vajra_tui.engine.scale.lane import Lane
from vajra_tui.engine.timing.ranking import Ranking, rank
from vajra_tui.engine.store.result_cache import ResultCache, result_key
from vajra_tui.engine.workloads import Size, Workload, WorkloadError, provenance

Emit = Callable[[Event], None]
BASELINE_TIMEOUT_S = 300.0
DROP_TIMEOUT_S = 30.0
DEADLINE_FLOOR_S = 10.0  # a dispatch's deadline is never shorter (a hardware adapter)
SOFTWARE_DEADLINE_FLOOR_S = 30.0  # on a software adapter, which a loaded CPU slows
FINALISTS = 5  # kernels a shoot-out times again beside the baseline
REASON_CHARS = 400  # a failure's reason, one table cell; diagnostics keep the rest


class BaselineError(RunFailed, RuntimeError):
    """The naive baseline failed: nothing after it could be trusted."""


class WorkloadUnsupported(RunFailed, RuntimeError):
    """The adapter lacks what the workload needs (an f16 binding without shader-f16)."""


def fresh_seed(taken: tuple[int, ...]) -> int:
    """A seed for this run alone, none of the fixed ones."""
    while True:
        seed = secrets.randbelow(1 << 31)
        if seed not in taken:
            return seed


class Session:
    """Setup (calibration, prepare), results that outlive the run, and the flows; a candidate's
    admission (:attr:`admission`) and the timing of batches (:attr:`batch_timing`) are collaborators."""

    def __init__(self, workload: Workload, size: Size, client: Lane, emit: Emit,
                 timing: TimingSettings | None = None, seeds: tuple[int, ...] = (1, 2),
                 source_mode: str = "library", grounding: bool = False,
                 results_cache: Path | None = None, resume: bool = False,
                 limits: str = "portable", features: tuple[str, ...] = (),
                 fresh: int | None = None) -> None:
        if limits not in LIMITS:
            raise ValueError(f"limits {limits!r}: choose {' or '.join(LIMITS)}")
        self.workload, self.size, self.client = workload, size, client
        # "portable": only kernels inside WebGPU's default limits and the optional ``features``
        # asked for are crowned (admission/portability.py); "adapter": this adapter's own limits.
        self.limits, self.features = limits, tuple(features)
        self._sink = emit
        self._announced: set[str] = set()
        self.timing = timing or TimingSettings()
        self.seeds = seeds
        # Drawn for this run alone (``fresh``: a lane's, shared by the run's other lanes): a kernel
        # that keeps outputs for the fixed seeds cannot know it. Every kernel is timed on its
        # inputs, and the finalists of every shoot-out verify on it.
        self.fresh_seed = fresh if fresh is not None else fresh_seed(seeds)
        self.lanes_judged: set[str] = set()  # kernels whose reordered lanes verified (browser/crown.py)
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
        # the folder of results kept across runs (None: not kept); --resume reuses them
        self.results_cache, self.resume = results_cache, resume
        self.measured: ResultCache | None = None  # results of earlier runs on this device
        # what the GPU worker imports to get the workload back, and the digest of its file
        self.provenance = provenance(workload)
        self.info = workload.info(size)
        self.info.origin, self.info.definition_sha256 = self.provenance.origin, self.provenance.digest
        self.admission = Admission(self, client, workload, size, self.provenance.spec, seeds, resume)
        self.batch_timing = BatchTiming(self, client, self.timing, self.fresh_seed, self.info)

    def emit(self, event: Event) -> None:
        """Every event of the session passes here; sources may emit through it too."""
        if isinstance(event, CandidateQueued):
            self._announced.add(event.id)
        elif isinstance(event, CandidateFinished):
            self.judge_portability(event.result)
        self._sink(event)

    def judge_portability(self, result: CandidateResult) -> None:
        """A verified kernel's fit to WebGPU's default limits, judged once, before it is told:
        recordings, the report and the lockfile carry it whatever ``limits`` is in force."""
        st = self.stitched.get(result.id)
        if result.status != "verified" or result.portable is not None or st is None:
            return
        result.portability = portability_problems(st, self.workload, self.size, self.features)
        result.portable = not result.portability

    def crownable(self, result: CandidateResult) -> bool:
        """Whether ``result`` may win: always under ``--limits adapter``, else when portable."""
        if self.limits == "adapter":
            return True
        self.judge_portability(result)
        return result.portable is not False

    def ranking(self, pool: list[CandidateResult]) -> Ranking:
        """``pool`` ranked, the crown kept for kernels inside the limits in force."""
        return rank(pool, crownable=self.crownable)

    # ---- setup ---------------------------------------------------------------
    async def start(self, calibrate: bool = True) -> DeviceInfo:
        """The worker, the opening event, the calibration and the workload's buffers."""
        await self.open()
        return await self.prepare(calibrate)

    async def open(self) -> DeviceInfo:
        """The worker started and ``SessionStarted`` emitted: what a recording opens with,
        so other lanes may start their own sessions from here on (scale/lanes.py)."""
        self.device = self.client.device or await self.client.astart()
        if self.results_cache is not None:
            self.measured = ResultCache(self.results_cache, self.device)
        self.emit(SessionStarted(
            tool_version=__version__, device=self.device, workload=self.info,
            source_mode=self.source_mode, grounding=self.grounding,
            warmup=self.timing.warmup, reps=self.timing.reps, seeds=list(self.seeds),
            fresh_seed=self.fresh_seed, limits=self.limits))
        if self.device.software:
            self.emit(Notice(level="warning", message=f"{self.device.name} is a software "
                             "adapter: timings are CPU timings, not GPU timings"))
        why = missing_features(self.workload, self.device)
        if why:
            raise WorkloadUnsupported(why)
        too_large = oversized(self.workload, self.size, self.device)
        if too_large:  # a --size the user can change: said as the workload's own error (exit 2)
            raise WorkloadError("size", too_large)
        return self.device

    async def prepare(self, calibrate: bool = True) -> DeviceInfo:
        """Calibration (cached unless it drifted), then the workload's buffers and references."""
        assert self.device is not None, "open() first"
        if calibrate:
            await self._calibrate()
        limit = self.timing.prepare_deadline_s
        try:
            await self.client.request(Prepare(workload=self.provenance.spec, size=self.size,
                                              seeds=[*self.seeds, self.fresh_seed]), limit)
        except WorkloadError as exc:  # the workload's own functions: the user's file, in one line
            raise WorkloadError("", str(exc), self.provenance.where) from None
        except WorkerTimeout:  # the client killed the worker; the user's code is what ran long
            raise WorkloadError("", f"the workload's make_inputs/reference ran past its {limit:g} s deadline "
                                "(timing.prepare_deadline_s)", self.provenance.where) from None
        except WorkerCrashed as exc:  # the worker ended while running the workload's own code
            raise WorkloadError("", f"the GPU worker ended while preparing this workload ({exc}): its "
                                "make_inputs or reference stopped the process (os._exit, a crash in "
                                "native code) or its buffers could not be made", self.provenance.where) from None
        return self.device

    async def _calibrate(self) -> None:
        """The roofline every result is judged by (timing/roofline.py)."""
        assert self.device is not None
        self.calibration = await roofline(self.client, self.device, self.emit)

    @property
    def deadline_s(self) -> float:
        """A dispatch's deadline: the user's, else 20x the baseline's median over a floor.

        The floor is longer on a software adapter: there a dispatch is CPU work, which a
        loaded machine slows several times over (four library kernels were killed at 10 s on
        a busy 2-core box); a hung kernel still dies, at the floor."""
        if self.timing.deadline_s:
            return float(self.timing.deadline_s)
        floor = SOFTWARE_DEADLINE_FLOOR_S if self.device is not None and self.device.software else DEADLINE_FLOOR_S
        return max(floor, 20.0 * (self.baseline_ms or 0.0) / 1e3)

    def deadline_for(self, cid: str) -> float:
        """Per dispatch. Until the baseline has a median there is nothing to scale by, so it gets long."""
        if cid == "baseline" and self.baseline_ms is None and not self.timing.deadline_s:
            return BASELINE_TIMEOUT_S
        return self.deadline_s

    def baseline_candidate(self) -> Candidate:
        return Candidate(id="baseline", name="baseline", strategy="baseline",
                         origin=(f"builtin: {self.workload.name}/naive" if self.provenance.origin == "built-in"
                                 else f"{self.provenance.origin}: baseline"), source=self.workload.baseline)

    # ---- the books: every candidate queued once, every final outcome told and kept ----
    def forget(self, cid: str) -> None:
        """Drop every trace of a candidate (a cancelled one): a later generation may propose it again."""
        for table in (self.results, self.stitched, self.candidates):
            table.pop(cid, None)

    def queue(self, cand: Candidate) -> CandidateResult:
        """The candidate's result, announced: every later event of it refers to this id."""
        self.candidates[cand.id] = cand
        result = CandidateResult(id=cand.id, name=cand.name, strategy=cand.strategy,
                                 origin=cand.origin, generation=cand.generation,
                                 params=cand.params, source=cand.source, raw_reply=cand.raw_reply,
                                 rewrites=list(cand.rewrites), constants=dict(cand.constants))
        self.results[cand.id] = result
        if cand.id not in self._announced:  # a source may have announced it while it streamed
            self.emit(CandidateQueued(id=cand.id, name=cand.name, strategy=cand.strategy,
                                      origin=cand.origin, generation=cand.generation,
                                      params=cand.params))
        return result

    def fail(self, result: CandidateResult, status: str, reason: str) -> bool:
        """A candidate's final failure, told and kept; False, for callers that return it.

        The reason is what a table row shows: a compiler quoting a 5000-digit literal is cut
        to :data:`REASON_CHARS` (the diagnostics keep the whole message)."""
        if len(reason) > REASON_CHARS:
            reason = reason[: REASON_CHARS - 1] + "…"
        result.status, result.reason = status, reason  # type: ignore[assignment]
        self.emit(StageChanged(id=result.id, stage="done", detail=status))
        self.emit(CandidateFinished(result=result))
        self.remember(result)
        return False

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
    async def admit(self, cand: Candidate) -> bool:
        """Prepare one candidate for timing (Admission.admit); False if it failed."""
        return await self.admission.admit(cand)

    async def admit_many(self, candidates: list[Candidate]) -> list[str]:
        """Admit a generation (Admission.admit_many); the ids that survived, in order."""
        return await self.admission.admit_many(candidates)

    async def time_batch(self, ids: list[str]) -> list[CandidateResult]:
        """Time ``ids`` side by side (BatchTiming.time_batch) as the next batch of this run."""
        self.batch = self.next_batch()
        return await self.batch_timing.time_batch(ids, self.batch)

    async def run_baseline(self, time: bool = True) -> CandidateResult:
        if not await self.admit(self.baseline_candidate()):
            failed = self.results["baseline"]
            if failed.status == "compile_error" and self.provenance.origin != "built-in":
                # the user's own baseline does not build: the workload file is broken (exit 2)
                raise WorkloadError("baseline", f"compile_error: {failed.reason}", self.provenance.where)
            line = f"baseline {failed.status}: {failed.reason}"
            raise BaselineError(told_with(line, self.device) if failed.status == "rejected" else line)
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
        """Release finished candidates' pipelines in the worker, in one request; the current
        finalists' stay there for the next shoot-out."""
        if ids:
            await self.client.request(Drop(cids=ids, keep=self.finalist_ids()), DROP_TIMEOUT_S)

    def finalist_ids(self, top: int = FINALISTS) -> list[str]:
        """The ``top`` verified kernels so far that may be crowned, by speedup over their own
        batch's baseline, and the fastest of all when it may not (it is shown beside the
        winner): what the next shoot-out times again."""
        ranked = [r for r in self.ranking(list(self.results.values())).ranked if r.id != "baseline"]
        ids = [r.id for r in ranked if self.crownable(r)][:top]
        if ranked and ranked[0].id not in ids:
            ids.insert(0, ranked[0].id)
        return ids

    def standings(self, generation: int, ids: list[str] | None = None,
                  final: bool = False) -> Ranking:
        """Rank verified kernels with the baseline; emit and return the verdict.

        A suspicious result (over 100% of roofline) may still win, but never silently:
        it carries the flag and a notice was emitted when it was scored.
        """
        pool = [self.results[i] for i in ids] if ids is not None else list(self.results.values())
        ranking = self.ranking(pool)
        self.last_ranking = ranking
        batches = {r.batch for r in ranking.ranked}
        self.emit(RankingReady(
            generation=generation, ranked_ids=[r.id for r in ranking.ranked],
            winner_id=ranking.winner.id if ranking.winner else None,
            baseline_median_ms=self.results["baseline"].median_ms if "baseline" in self.results else None,
            baseline_won=ranking.baseline_won, tie_ids=[r.id for r in ranking.ties],
            batch=batches.pop() if len(batches) == 1 else None, final=final, headline=ranking.headline,
            fastest_id=ranking.fastest.id if ranking.fastest else None,
            undecided_id=ranking.undecided.id if ranking.undecided else None))
        return ranking

    def rank(self, generation: int) -> list[CandidateResult]:
        """The verified candidates, winner first; empty when none beat the baseline."""
        ranking = self.standings(generation)
        if ranking.winner is None:
            return []
        return [ranking.winner, *[r for r in ranking.ranked if r.id not in ("baseline", ranking.winner.id)]]

    async def shootout(self, generation: int, top: int = FINALISTS) -> Ranking:
        """Time the best kernels of every generation again, in one batch with the baseline.

        Per-generation numbers come from different batches, each with its own baseline
        sample; the report divides by one. Finalists already timed together with the
        baseline in the latest batch need no second run.
        """
        ids = self.finalist_ids(top)
        candidates = [self.results[cid] for cid in ids]
        base = self.results.get("baseline")
        if not ids or base is None:
            return self.standings(generation, final=True)
        retime = {r.batch for r in candidates} != {base.batch}
        if retime:
            await self.admission.prebuild([self.stitched[cid] for cid in ids])
        ids = await self.fresh_check(ids)
        if retime and ids:
            await self.time_batch(["baseline", *ids])
        await self.drop(ids)
        return self.standings(generation, ["baseline", *ids], final=True)

    async def fresh_check(self, ids: list[str]) -> list[str]:
        """The kernels (verified ones, before a crown) that also verify on this run's fresh seed;
        the others are rejected.

        Verification on the fixed seeds (1 and 2) can be passed by a kernel that returns
        outputs computed in advance for them; no kernel can know a seed drawn now. Their
        pipelines are built first (a finalist's is kept in the worker: then it is reused).
        """
        survivors = []
        for cid in ids:
            st = self.stitched[cid]
            await self.client.request(st.compile_request(cid), max(COMPILE_TIMEOUT_S, self.deadline_s))
            verdict = await self.client.request(Verify(cid=cid, seed=self.fresh_seed), self.deadline_for(cid))
            result = self.results[cid]
            if verdict.passed:
                survivors.append(cid)
                continue
            self.fail(result, "rejected", f"fails on a fresh seed ({self.fresh_seed}) after passing seeds "
                                          f"{', '.join(map(str, self.seeds))}: {verdict.reason}")
            self.emit(Notice(level="warning", message=f"{result.name} was verified on the fixed seeds but "
                                                      f"fails on a seed drawn for this run: rejected"))
        return survivors

    async def check_browser(self, cid: str) -> CandidateResult:
        """Give a crowned kernel its browser verdict (browser/verdict.py), told as its result again."""
        from vajra_tui.engine.browser.verdict import judge_in_browser

        return await judge_in_browser(self.results[cid], self.emit, device=self.device, info=self.info,
                                      workload=self.workload, size=dict(self.size), seed=self.seeds[0])

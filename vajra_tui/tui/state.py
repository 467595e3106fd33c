"""The view model: the engine's event stream folded into what the screens show.

Live runs and replays feed the same events through :meth:`RunState.apply`, so
no screen can tell them apart. Nothing here computes a derived number: those
arrive finished inside :class:`CandidateResult`; this only remembers them.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from vajra_tui.engine.events import (
    Calibration, CalibrationReady, CandidateFinished, CandidateQueued, CandidateResult,
    CandidateSource, CompileFinished, DeviceInfo, Diagnostic, DispatchTimed, Event,
    GenerationStarted, GroundingResult, LanesUpdated, ModelFailover, Notice, RankingReady, SanitizerRewrite,
    SessionFinished, SessionStarted, StageChanged, StreamDelta, VerificationFinished, WorkloadInfo,
)

# Bounds that keep a replay's memory flat however long the recording (a live run never
# comes near them): a panel shows the last 6000 characters of a stream, the baseline
# screen the last notices, the sparkline one batch of samples.
STREAM_PARTS = 4096
STREAM_KEEP_CHARS = 65536
KEEP_SAMPLES = 4096
KEEP_NOTICES = 1000
FAILED = ("rejected", "compile_error", "timeout", "crashed", "no_kernel")
_DEADLINE = re.compile(r"deadline ([0-9.]+) s")
COUNTDOWN_AFTER_S = 1.0  # a verification that is still running after this shows its countdown
NO_TEMPLATES = "library: no templates for "  # how the library source's notes begin (engine/sources/library)


@dataclass
class CandidateView:
    """One candidate as the UI knows it so far (its result arrives last)."""

    id: str
    name: str
    strategy: str = "user"
    origin: str = ""
    generation: int = 1
    params: dict[str, Any] = field(default_factory=dict)
    stage: str = "queued"
    stages: list[str] = field(default_factory=list)  # every stage walked, in order
    content: list[str] = field(default_factory=list)  # streamed model text
    reasoning: list[str] = field(default_factory=list)  # streamed model thinking
    failovers: list[str] = field(default_factory=list)
    rewrites: list[SanitizerRewrite] = field(default_factory=list)
    source: str = ""
    stitched_source: str = ""
    workgroup_size: list[int] = field(default_factory=list)
    grid: list[int] = field(default_factory=list)
    compile_ok: bool | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    verifications: list[VerificationFinished] = field(default_factory=list)
    dispatch_ms: list[float] = field(default_factory=list)  # timed (non-warm-up) dispatches
    warmup_ms: list[float] = field(default_factory=list)
    method: str = ""
    result: CandidateResult | None = None
    deadline_s: float | None = None  # the deadline of the dispatch in flight (verification)
    deadline_at: float | None = None  # time.monotonic() when the worker will be killed
    countdown: int | None = None  # whole seconds left, once it is worth showing
    version: int = 0  # bumped on every change: widgets redraw only when it moves
    index: int = 0  # its place in the order candidates first appeared (the lists' row order)

    @property
    def status(self) -> str:
        return self.result.status if self.result else self.stage

    @property
    def failed(self) -> bool:
        return self.result is not None and self.result.status in FAILED

    @property
    def streamed(self) -> bool:
        return bool(self.content or self.reasoning)

    @property
    def label(self) -> str:
        """What a panel title says: the strategy letter and name."""
        if self.strategy in ("baseline", "user") or self.name.startswith(self.strategy):
            return self.name
        return f"{self.strategy} · {self.name}"


@dataclass
class RunState:
    """Everything the screens draw, built only from events."""

    session: SessionStarted | None = None
    calibration: Calibration | None = None
    calibration_cached: bool = False
    candidates: dict[str, CandidateView] = field(default_factory=dict)
    generations: dict[int, str] = field(default_factory=dict)  # generation -> source label
    notices: list[Notice] = field(default_factory=list)
    grounding: list[GroundingResult] = field(default_factory=list)
    ranking: RankingReady | None = None
    finished: SessionFinished | None = None
    lanes: LanesUpdated | None = None  # several adapters (tune --gpus, --ray): the latest state
    # The library's note that it has no templates for this workload (kept apart from the
    # notices, which are bounded: a long run must not forget why e has nothing to evolve)
    no_templates: str = ""
    events: int = 0
    version: int = 0
    # cid -> the state version of its last change, least recent first (a changed id moves to
    # the end): a screen redraws the candidates touched since its last tick without visiting
    # every candidate, which made a replay of thousands quadratic
    _touched: dict[str, int] = field(default_factory=dict, repr=False)
    _armed: set[str] = field(default_factory=set, repr=False)  # candidates with a deadline to count

    # ---- derived views (no arithmetic on measurements) ------------------------
    @property
    def device(self) -> DeviceInfo | None:
        return self.session.device if self.session else None

    @property
    def workload(self) -> WorkloadInfo | None:
        return self.session.workload if self.session else None

    @property
    def baseline(self) -> CandidateView | None:
        return self.candidates.get("baseline")

    @property
    def generation(self) -> int:
        return max(self.generations, default=0)

    @property
    def variants(self) -> list[CandidateView]:
        return [c for c in self.candidates.values() if c.id != "baseline"]

    @property
    def graveyard(self) -> list[CandidateView]:
        return [c for c in self.candidates.values() if c.failed]

    @property
    def ranked(self) -> list[CandidateView]:
        if self.ranking is None:
            return []
        return [self.candidates[i] for i in self.ranking.ranked_ids if i in self.candidates]

    @property
    def winner(self) -> CandidateView | None:
        if self.ranking is None or self.ranking.winner_id is None:
            return None
        return self.candidates.get(self.ranking.winner_id)

    @property
    def busy(self) -> bool:
        """A candidate is still on its way through the pipeline."""
        return any(c.result is None for c in self.candidates.values())

    def changed_since(self, version: int) -> list[CandidateView]:
        """The candidates changed after state ``version``, in the order they first appeared.

        Costs what changed, not what exists: the journal is walked from its newest end.
        """
        changed: list[CandidateView] = []
        for cid in reversed(self._touched):
            if self._touched[cid] <= version:
                break
            changed.append(self.candidates[cid])
        changed.sort(key=lambda view: view.index)
        return changed

    # ---- folding -------------------------------------------------------------
    def _touch(self, view: CandidateView) -> None:
        """Note a change to ``view``: its version moves and it goes to the journal's newest end."""
        view.version += 1
        self._touched.pop(view.id, None)
        self._touched[view.id] = self.version

    def _cand(self, cid: str) -> CandidateView:
        view = self.candidates.get(cid)
        if view is None:  # an event for a candidate never queued: still show it
            view = self.candidates[cid] = CandidateView(id=cid, name=cid, index=len(self.candidates))
        self._touch(view)
        return view

    def tick(self, now: float | None = None) -> bool:
        """Advance the deadline countdowns; True when one of them changed (a redraw is due)."""
        now = time.monotonic() if now is None else now
        moved = False
        for cid in list(self._armed):  # only the few with a deadline running, not every candidate
            view = self.candidates[cid]
            if view.deadline_at is None or view.deadline_s is None:
                continue
            left = view.deadline_at - now
            shown = max(int(left + 0.999), 0) if view.deadline_s - left >= COUNTDOWN_AFTER_S else None
            if shown != view.countdown:
                view.countdown = shown
                if not moved:
                    self.version += 1
                self._touch(view)
                moved = True
        return moved

    def _arm(self, view: CandidateView, deadline_s: float | None) -> None:
        view.deadline_s = deadline_s
        view.deadline_at = None if deadline_s is None else time.monotonic() + deadline_s
        view.countdown = None
        if deadline_s is None:
            self._armed.discard(view.id)
        else:
            self._armed.add(view.id)

    def _set_stage(self, view: CandidateView, stage: str) -> None:
        if stage != view.stage or stage != "verifying":
            self._arm(view, None)
        view.stage = stage
        if not view.stages or view.stages[-1] != stage:
            view.stages.append(stage)

    def apply(self, event: Event) -> str | None:
        """Fold one event in; returns the candidate id it touched, if any."""
        self.events += 1
        self.version += 1
        handler = getattr(self, f"_on_{event.type}", None)
        return handler(event) if handler else None

    def _on_session_started(self, e: SessionStarted) -> None:
        self.session = e

    def _on_calibration(self, e: CalibrationReady) -> None:
        self.calibration, self.calibration_cached = e.calibration, e.cached

    def _on_generation_started(self, e: GenerationStarted) -> None:
        self.generations[e.generation] = e.source

    def _on_candidate_queued(self, e: CandidateQueued) -> str:
        view = self._cand(e.id)
        view.name, view.strategy, view.origin = e.name, e.strategy, e.origin
        view.generation, view.params = e.generation, dict(e.params)
        return e.id

    def _on_stream_delta(self, e: StreamDelta) -> str:
        view = self._cand(e.id)
        parts = view.reasoning if e.kind == "reasoning" else view.content
        parts.append(e.text)
        if len(parts) > STREAM_PARTS:  # a panel shows the tail: memory must not grow with a stream
            tail = "".join(parts)[-STREAM_KEEP_CHARS:]
            parts[:] = [tail]
        if view.stage == "queued":
            self._set_stage(view, "streaming")
        return e.id

    def _on_model_failover(self, e: ModelFailover) -> str:
        self._cand(e.id).failovers.append(f"{e.from_model} → {e.to_model}: {e.reason}")
        return e.id

    def _on_grounding(self, e: GroundingResult) -> None:
        self.grounding.append(e)

    def _on_sanitizer_rewrite(self, e: SanitizerRewrite) -> str:
        self._cand(e.id).rewrites.append(e)
        return e.id

    def _on_stage(self, e: StageChanged) -> str:
        view = self._cand(e.id)
        self._set_stage(view, e.stage)
        deadline = _DEADLINE.fullmatch(e.detail) if e.stage == "verifying" else None
        if deadline:
            self._arm(view, float(deadline.group(1)))
        return e.id

    def _on_candidate_source(self, e: CandidateSource) -> str:
        view = self._cand(e.id)
        view.source, view.stitched_source = e.source, e.stitched_source
        view.workgroup_size, view.grid = list(e.workgroup_size), list(e.grid)
        return e.id

    def _on_compile_finished(self, e: CompileFinished) -> str:
        view = self._cand(e.id)
        view.compile_ok, view.diagnostics = e.ok, list(e.diagnostics)
        return e.id

    def _on_verification(self, e: VerificationFinished) -> str:
        view = self._cand(e.id)
        view.verifications.append(e)
        if e.passed and view.deadline_s is not None and view.stage == "verifying":
            self._arm(view, view.deadline_s)  # the next seed's dispatch has a deadline of its own
        return e.id

    def _on_dispatch_timed(self, e: DispatchTimed) -> str:
        view = self._cand(e.id)
        if e.round == 0 and not e.warmup and view.dispatch_ms:
            view.dispatch_ms, view.warmup_ms = [], []  # a new batch: show its samples, not a mix
        samples = view.warmup_ms if e.warmup else view.dispatch_ms
        samples.append(e.ms)
        if len(samples) > KEEP_SAMPLES:  # a recording of endless rounds: keep the latest
            del samples[: len(samples) - KEEP_SAMPLES]
        view.method = e.method
        return e.id

    def _on_candidate_finished(self, e: CandidateFinished) -> str:
        r = e.result
        view = self._cand(r.id)
        view.result = r
        view.name, view.strategy = r.name, r.strategy
        view.origin = r.origin or view.origin
        view.generation = r.generation
        view.params = dict(r.params) or view.params
        view.source = r.source or view.source
        view.stitched_source = r.stitched_source or view.stitched_source
        view.workgroup_size = list(r.workgroup_size) or view.workgroup_size
        view.grid = list(r.grid) or view.grid
        view.diagnostics = list(r.diagnostics) or view.diagnostics
        self._set_stage(view, "done")
        return r.id

    def _on_notice(self, e: Notice) -> None:
        self.notices.append(e)
        if e.message.startswith(NO_TEMPLATES):
            self.no_templates = e.message
        if len(self.notices) > KEEP_NOTICES:
            del self.notices[: len(self.notices) - KEEP_NOTICES]

    def _on_ranking(self, e: RankingReady) -> None:
        self.ranking = e

    def _on_session_finished(self, e: SessionFinished) -> None:
        self.finished = e

    def _on_lanes(self, e: LanesUpdated) -> None:
        self.lanes = e


def fold(events: list[Event]) -> RunState:
    """A RunState with every event applied (tests and snapshots)."""
    state = RunState()
    for event in events:
        state.apply(event)
    return state

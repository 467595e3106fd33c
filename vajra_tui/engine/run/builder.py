"""The one place a run is put together: a :class:`RunRequest` in, a :class:`Run` out.

The CLI (``bench``, ``tune``, ``fleet``), the Python API, the TUI's live driver and each
model of a fleet describe what they want as a request and call :func:`build_run`; only
what they print differs. So there is one order of checks (every usage error is raised
before a worker, a recording or an export folder exists), one way to read kernels, one
composition of candidate sources, and one place a tuner is made.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from vajra_tui.engine.browser.crown import crown_in_browser, judged_in_browser
from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.events import Event, Notice, SessionFinished
from vajra_tui.engine.export.claim import ExportClaim
from vajra_tui.engine.run.output_paths import check_distinct, check_export_folder, check_new_file
from vajra_tui.engine.run.report import Report, report_tail, session_report
from vajra_tui.engine.session import Session
from vajra_tui.engine.sources.base import CandidateSource, Fallback
from vajra_tui.engine.sources.params import ParamsSource
from vajra_tui.engine.store.record import Recorder
from vajra_tui.engine.tune import Tuner
from vajra_tui.engine.workloads import Workload, get_workload
from vajra_tui.settings import LLMSettings, TavilySettings, TimingSettings

SOURCES = ("library", "params", "llm", "auto")
Emit = Callable[[Event], None]


@dataclass
class Placement:
    """Where the GPU work runs: one adapter, several (``gpus``), or lanes opened elsewhere (Ray)."""

    adapter: str | None = None
    gpus: str | None = None
    nice: int = 0  # the TUI keeps its own process ahead of the worker's
    lanes: Sequence[Any] | None = None  # already opened (Ray actors, a fleet's model)

    @property
    def spread(self) -> bool:
        """Whether batches spread over lanes (``--gpus``, Ray) rather than one worker."""
        return bool(self.gpus) or self.lanes is not None


@dataclass
class RunRequest:
    """Everything a bench or a tune needs to know, before anything starts."""

    workload: Workload | str
    size: str | Mapping[str, int] | None = None
    kernels: Sequence[Candidate] = ()  # engine/run/kernels.py: user_kernels()
    mode: str = "tune"  # "bench" | "tune"
    source: str = "library"  # library | params | llm | auto
    generations: int = 2
    budget: int = 6
    shootouts: str = "every"
    timing: TimingSettings = field(default_factory=TimingSettings)
    seeds: tuple[int, ...] = (1, 2)
    placement: Placement = field(default_factory=Placement)
    llm: LLMSettings | None = None
    tavily: TavilySettings | None = None
    missing_key: str = "refuse"  # source llm without a key: "refuse" (a usage error) or "warn"
    cache: Path | None = None  # the results cache and the grounding cache live here
    resume: bool = False
    record: Path | None = None
    record_label: str = ""
    export: Path | None = None
    # "portable": crown only kernels inside WebGPU's default limits and ``features`` (the
    # optional features the user asks for); "adapter": this adapter's own limits.
    limits: str = "portable"
    features: tuple[str, ...] = ()
    # Who asked: a refusal names what that caller wrote ("--export" on the command line and
    # in the TUI, "export=" in the Python API, which has no flags).
    surface: str = "cli"  # "cli" | "api"

    def option(self, name: str, value: str = "") -> str:
        """``--source params`` for the command line, ``source='params'`` for the API."""
        if self.surface == "api":
            return f"{name}={value!r}" if value else f"{name}="
        return f"--{name} {value}" if value else f"--{name}"

    def __post_init__(self) -> None:
        from vajra_tui.engine.admission.portability import ENABLE_FEATURES, LIMITS

        if self.source not in SOURCES:
            raise UsageError(f"source {self.source!r}: choose {', '.join(SOURCES)}")
        if self.limits not in LIMITS:
            raise UsageError(f"limits {self.limits!r}: choose {' or '.join(LIMITS)}")
        odd = sorted(set(self.features) - set(ENABLE_FEATURES.values()))
        if odd:
            raise UsageError(f"feature {odd[0]!r}: choose {', '.join(sorted(ENABLE_FEATURES.values()))}")


def open_lanes(placement: Placement) -> list[Any]:
    """The GPU workers of a placement; none is started yet. A bad choice is a usage error."""
    from vajra_tui.engine.gpu.client import GPUClient
    from vajra_tui.engine.scale.local import local_lanes, resolve_adapter

    if placement.lanes is not None:
        return list(placement.lanes)
    if placement.gpus:
        return local_lanes(placement.gpus, placement.adapter, nice=placement.nice)
    index, nvml = resolve_adapter(placement.adapter)
    return [GPUClient(index, nvml=nvml, nice=placement.nice)]


def _params_source(request: RunRequest, workload: Workload, size: dict[str, int]) -> ParamsSource:
    """``source="params"``: the ``// tune:`` spaces of the user's kernels, read before the GPU starts."""
    from vajra_tui.engine.sources.params import read_space

    if not request.kernels:
        kernel = "kernels=" if request.surface == "api" else "--kernel FILE"
        raise UsageError(f"{request.option('source', 'params')} needs {kernel}: "
                         "a kernel whose `override`s have // tune: lines")
    spaces = [read_space(k.name, k.source, workload.dims) for k in request.kernels]
    return ParamsSource(workload, size, spaces, request.budget)


def _wants_llm(request: RunRequest, emit: Emit) -> bool:
    """Whether the run asks the model: the source wants one and a key is set."""
    if request.source not in ("llm", "auto") or request.llm is None:
        return False
    if request.llm.api_key() is not None:
        return True
    if request.source == "llm" and request.missing_key == "refuse":
        raise UsageError(f"{request.option('source', 'llm')} needs an API key in ${request.llm.api_key_env}")
    if request.source == "llm":
        emit(Notice(level="warning", message=f"Nemotron: ${request.llm.api_key_env} is not set; "
                                             "using the offline library"))
    return False


def _llm_source(request: RunRequest, session: Session) -> CandidateSource:
    """The model, its events through the session; with Tavily grounding when that is set up."""
    from vajra_tui.engine.sources.llm.client import LLMSource
    from vajra_tui.engine.sources.llm.grounding import Grounding

    assert request.llm is not None
    grounding = Grounding(request.tavily, session.emit, request.cache) if request.tavily is not None else None
    session.grounding = bool(grounding is not None and grounding.enabled)
    return LLMSource(request.llm, session.emit, grounding, workload=session.workload)


class _Sink:
    """The run's one event sink: the caller's, then the recording (set once it exists)."""

    def __init__(self, emit: Emit) -> None:
        self.emit, self.recorder = emit, None

    def __call__(self, event: Event) -> None:
        self.emit(event)
        if self.recorder is not None:
            self.recorder(event)


def build_run(request: RunRequest, emit: Emit) -> Run:
    """Check everything the user gave, then build the session, its sources and its tuner.

    Usage errors come before anything exists on disk or in another process, so a refused
    run leaves nothing behind: no recording, no export folder, no worker.
    """
    workload = request.workload if isinstance(request.workload, Workload) else get_workload(str(request.workload))
    size = workload.size(request.size)
    sink = _Sink(emit)
    params = _params_source(request, workload, size) if request.source == "params" else None
    wants_llm = params is None and _wants_llm(request, sink)
    check_distinct([(request.option("record"), request.record)], (request.option("export"), request.export))
    if request.export is not None:  # checked now, not after an hour of tuning
        check_export_folder(request.export, [f"{workload.name}.wgsl", f"{workload.name}.ts"],
                            flag=request.option("export"))
    if request.record is not None:
        check_new_file(request.record, flag=request.option("record"))
    claim = ExportClaim.take(request.export) if request.export is not None else None
    try:  # from here on something exists: a refusal gives back the export folder
        lanes = open_lanes(request.placement)
        if request.record is not None:
            sink.recorder = Recorder(request.record, request.record_label or f"{request.mode} {workload.name}")
    except BaseException:
        if claim is not None:
            claim.release()
        raise
    session = Session(workload, size, lanes[0], sink, request.timing, seeds=tuple(request.seeds),
                      source_mode="nemotron" if wants_llm else ("params" if params else "library"),
                      results_cache=request.cache, resume=request.resume, limits=request.limits,
                      features=tuple(request.features))
    llm = _llm_source(request, session) if wants_llm else None
    if params is not None:
        params.emit = session.emit
    run = Run(request, session, lanes, _tuner(request, session, lanes, params, llm), sink, params)
    run.claim = claim
    return run


def _tuner(request: RunRequest, session: Session, lanes: list[Any], params: CandidateSource | None,
           llm: CandidateSource | None) -> Tuner:
    """The tuner: one worker's, or one that spreads batches over every lane."""
    from vajra_tui.engine.sources.library import LibrarySource

    library = LibrarySource(limits=request.limits, features=tuple(request.features))
    source: CandidateSource = params or (Fallback(llm, library) if llm else library)
    user = [] if params else list(request.kernels)  # params: the kernels are the search spaces
    options: dict[str, Any] = {"budget": request.budget, "shootouts": request.shootouts}
    if request.placement.spread:
        from vajra_tui.engine.scale.lanes import LaneTuner

        return LaneTuner(session, lanes, source, user, **options)
    return Tuner(session, source, user, **options)


def export_result(result: Any, device: Any, workload: Any, out: Path, force: bool = False,
                  limits: str | None = None, force_flag: str | None = "--force",
                  seeds: Sequence[int] = (), timed_seed: int | None = None) -> list[Path]:
    """Write a result's WGSL, TypeScript module and lockfile into ``out``; a failure is one line.
    ``limits``: what the run crowned by ("portable" or "adapter"), recorded in the lockfile."""
    from vajra_tui.engine.browser.judge import annotate_lock
    from vajra_tui.engine.export.winner import LOCK_NAME, export_winner
    from vajra_tui.safe_text import one_line

    try:
        paths = export_winner(result, device, workload, out, overwrite=force, limits=limits, seeds=seeds,
                              timed_seed=timed_seed)
        annotate_lock(Path(out) / LOCK_NAME, result)  # what the browser said of these bytes, when one judged them
        return paths
    except FileExistsError as exc:  # ``force_flag``: how this caller overwrites, if it can
        hint = f"; pass {force_flag} to overwrite" if force_flag else " (nothing was overwritten)"
        raise UsageError(f"{one_line(exc)}{hint}") from None
    except (OSError, ValueError, RuntimeError, KeyError) as exc:  # one line, never a traceback
        if isinstance(exc, OSError) and exc.strerror:
            where = f" ({one_line(exc.filename)})" if exc.filename else ""
            raise UsageError(f"export failed: {one_line(exc.strerror)}{where}") from None
        raise UsageError(f"export failed: {one_line(exc)}") from None


def export_into(report: Report, result: Any, out: Path) -> None:
    """``result`` exported beside ``report``: its paths in ``report.exported``, or why not in
    ``report.export_error`` (a full disk loses the files, never the measured report)."""
    try:
        report.exported = export_result(result, report.device, report.workload, out, limits=report.limits,
                                        force_flag=None,  # bench/tune have no --force
                                        seeds=report.seeds, timed_seed=report.timed_seed)
    except UsageError as exc:
        report.export_error = exc.message


class Run:
    """One bench or tune: its session, tuner and workers, and the report it ends with."""

    def __init__(self, request: RunRequest, session: Session, lanes: list[Any], tuner: Tuner,
                 sink: _Sink, params: ParamsSource | None = None) -> None:
        self.request, self.session, self.lanes, self.tuner = request, session, lanes, tuner
        self._sink, self.params = sink, params
        self.claim: ExportClaim | None = None  # the --export folder, held until close()

    @property
    def recorder(self) -> Recorder | None:
        return self._sink.recorder

    @property
    def generations(self) -> int:
        """Evolution rounds after the first generation (params: what its budget plans)."""
        if self.params is not None:
            return self.params.planned_rounds - 1
        return max(self.request.generations, 0)

    async def bench(self) -> Report:
        """The baseline and the user's kernels, timed once side by side; nothing evolves."""
        session = self.session
        await session.start()
        await session.run_baseline(time=False)
        await session.evaluate(list(self.request.kernels))
        await session.fresh_check([k.id for k in self.request.kernels if session.results[k.id].status == "verified"])
        verdict = await crown_in_browser(session, session.standings(1), 1)
        best = next((r for r in verdict.ranked if r.id != "baseline"), None)
        if best is not None:  # the user's fastest kernel gets its badge, crowned or not
            await judged_in_browser(session, best.id)
        results = [session.results["baseline"], *[session.results[k.id] for k in self.request.kernels]]
        return self._finished(session_report(session, results, verdict.winner, "bench"))

    async def tune(self) -> Report:
        """The whole loop: baseline, the first generation, then every evolution round.

        When every lane is lost mid-run the error is raised with the report of what finished
        (the last finished generation's ranking), never exported: ``exc.report``.
        """
        from vajra_tui.engine.scale.lanes import LanesLost

        try:
            ranked = await self.tuner.run(self.generations)
        except LanesLost as exc:
            exc.report = self.report(exc.ranked, export=False)
            exc.report.generations = exc.generation
            self._finished(exc.report, error=exc.user_message())
            raise
        return self._finished(self.report(ranked))

    def _finished(self, report: Report, error: str = "") -> Report:
        """The stream's last event: what the report holds beyond the rankings, so a recording
        replays to the same document (``replay --json`` is ``tune --json``)."""
        self._sink(SessionFinished(ok=not error, error=error, report=report_tail(report)))
        return report

    def report(self, ranked: list[Any], export: bool = True) -> Report:
        """The tune's report from its ranked kernels (best first), written out when asked
        (``export``: a run cut short is not exported)."""
        self.session = self.tuner.session  # with lanes: the one the shoot-out ran on
        winner = ranked[0] if ranked else None
        report = session_report(self.session, list(self.session.results.values()), winner, "tune")
        report.generations, report.ranking = self.tuner.generation, [r.name for r in ranked]
        board = getattr(self.tuner, "board", None)
        if board is not None:
            report.lanes = [info.model_copy(deep=True) for info in board.infos]
            report.baseline_spread, report.final_lane = board.spread, board.infos[board.final].label
        report.params = self.params.summary() if self.params is not None else None
        report.library = self.tuner.source.note
        if export and self.request.export is not None and winner is not None:
            export_into(report, winner, self.request.export)
        return report

    async def aclose(self) -> Path | None:
        """Close the sources, stop the workers and publish the recording.

        Returns where the recording is: its file, or its ``.partial`` when it stopped early
        (a full disk), or None when there was none or it was closed already."""
        try:
            await self.tuner.source.aclose()
        finally:
            recorded = self.close()
        return recorded

    def close(self) -> Path | None:
        """The synchronous part of :meth:`aclose`: workers stopped, the recording published."""
        for lane in self.lanes:
            lane.close()
        if self.claim is not None:
            self.claim.release()
            self.claim = None
        recorder, self._sink.recorder = self._sink.recorder, None
        return recorder.close() if recorder is not None else None


__all__ = ["Placement", "Run", "RunRequest", "SOURCES", "build_run", "export_result", "open_lanes"]

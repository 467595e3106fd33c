"""The Python API: ``bench()`` and ``tune()``, the engine of the CLI without the CLI.

Kernel Tuner's idea, for WebGPU: your kernel, your parameters, your reference answer::

    import vajra_tui
    report = vajra_tui.tune("mine.py", ["tiled.wgsl"], size="ROWS=512,COLS=512",
                            source="params", budget=12)
    print(report.winner.name, report.winner.constants, report.winner.speedup)

Both run outside any event loop (from a notebook, whose loop is running, they run in a
thread of their own), start the GPU worker, and return a :class:`Report` with the same
fields as ``--json``. Nothing here prints unless ``progress=True``.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Union

from pydantic import BaseModel, ConfigDict, Field

from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.events import Calibration, CandidateResult, DeviceInfo, Event, LaneInfo, WorkloadInfo
from vajra_tui.engine.workloads import Workload, get_workload
from vajra_tui.settings import Settings, TimingSettings, cache_dir

KernelSpec = Union[str, Path]
Kernels = Union[Iterable[KernelSpec], Mapping[str, str], KernelSpec, None]


class Report(BaseModel):
    """What ``bench()`` and ``tune()`` return: the fields of ``--json``, typed."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    device: DeviceInfo
    workload: WorkloadInfo
    calibration: Calibration | None = None
    results: list[CandidateResult] = Field(default_factory=list)
    winner: CandidateResult | None = None  # None: nothing beat the baseline beyond noise
    headline: str = ""
    ties: list[str] = Field(default_factory=list)
    baseline_won: bool = False
    generations: int = 0
    ranking: list[str] = Field(default_factory=list)
    lanes: list[LaneInfo] = Field(default_factory=list)  # gpus=: every worker, its baseline, what it timed
    baseline_spread: float | None = None  # gpus=: max/min of the lanes' baseline medians
    final_lane: str | None = None  # gpus=: the lane the shoot-outs (these results) were timed on
    params: dict[str, Any] | None = None  # source="params": the space, what was ruled out, the search
    library: str = ""  # why the library had nothing (a workload without templates)
    exported: list[Path] = Field(default_factory=list)

    def __getitem__(self, name: str) -> CandidateResult:
        """A result by kernel name (``report["baseline"]``, ``report["tiled TILE=16"]``)."""
        for r in self.results:
            if r.name == name or r.id == name:
                return r
        raise KeyError(f"no kernel {name!r}; measured: {', '.join(r.name for r in self.results)}")

    @property
    def baseline(self) -> CandidateResult:
        return self["baseline"]

    def to_json(self) -> dict[str, Any]:
        """The document ``--json`` prints."""
        from vajra_tui.cli.render import document

        extra = {"winner": self.winner.name if self.winner else None, "headline": self.headline,
                 "ties": self.ties, "baseline_won": self.baseline_won}
        if self.params is not None:
            extra["params"] = self.params
        if self.lanes:
            extra.update(lanes=[lane.model_dump() for lane in self.lanes], baseline_spread=self.baseline_spread,
                         final_lane=self.final_lane)
        return document(self.device, self.workload, self.results, self.calibration, extra)


def bench(workload: Workload | str | Path, kernels: Kernels = None, *, size: str | Mapping[str, int] = "seed",
          warmup: int = 5, reps: int = 9, deadline: float | None = None, timing: str = "auto",
          cache: str = "warm", seeds: tuple[int, ...] = (1, 2), adapter: str | None = None,
          record: Path | None = None, progress: bool = False,
          on_event: Callable[[Event], None] | None = None) -> Report:
    """Compile, verify (two seeds, float64 reference) and time the baseline and ``kernels``.

    ``workload``: a :class:`Workload`, a registered name, a ``.py`` path or ``pkg.mod:ATTR``.
    ``kernels``: file paths or WGSL source strings (or a ``{name: source}`` dict).
    """
    run = _Run(workload, kernels, size, TimingSettings(warmup=warmup, reps=reps, deadline_s=deadline,
                                                       method=timing, cache=cache),
               seeds, adapter, record, progress, on_event, "bench")
    return _run_sync(run.bench)


def tune(workload: Workload | str | Path, kernels: Kernels = None, *, size: str | Mapping[str, int] = "seed",
         source: str = "library", generations: int = 2, budget: int = 6, export: Path | None = None,
         warmup: int = 5, reps: int = 9, deadline: float | None = None, timing: str = "auto",
         cache: str = "warm", seeds: tuple[int, ...] = (1, 2), adapter: str | None = None,
         record: Path | None = None, progress: bool = False, settings: Settings | None = None,
         on_event: Callable[[Event], None] | None = None, gpus: str | None = None,
         shootouts: str = "every") -> Report:
    """The closed loop: the baseline, then candidates from ``source``, each generation ended
    by a shoot-out with the baseline (``shootouts="last"``: only the last one, as
    ``tune --shootout last``; the report's numbers come from that one either way).

    ``gpus``: "all", "N" or "i,j" runs one worker per adapter of ``adapter``'s model, as
    ``tune --gpus`` does: each batch is timed on one adapter, the shoot-outs on the first;
    ``report.lanes`` says which adapter timed what. A bad choice raises ValueError.

    ``source``: "library" (Vajra's templates, evolved ``generations`` times), "params"
    (the ``// tune:`` space of ``kernels``: exhaustive within ``budget``, else Optuna),
    "llm" (an OpenAI-compatible server from the settings) or "auto". With ``export``,
    the winner's WGSL, TypeScript module and lockfile are written into that folder.
    """
    if source not in ("library", "params", "llm", "auto"):
        raise ValueError(f"source {source!r}: choose library, params, llm or auto")
    if shootouts not in ("every", "last"):
        raise ValueError(f"shootouts {shootouts!r}: choose every or last")
    run = _Run(workload, kernels, size, TimingSettings(warmup=warmup, reps=reps, deadline_s=deadline,
                                                       method=timing, cache=cache),
               seeds, adapter, record, progress, on_event, source, gpus)
    return _run_sync(lambda: run.tune(source, generations, budget, export, settings, shootouts))


# ---- plumbing -----------------------------------------------------------------------
def _run_sync(make: Callable[[], Any]) -> Report:
    """Run the coroutine to completion here, or in a thread when this thread has a loop."""
    _refuse_inside_worker()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="vajra-api")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _refuse_inside_worker() -> None:
    """The GPU worker imports the script a workload was declared in: a call at import time
    would start workers without end."""
    main = sys.modules.get("__main__")
    if getattr(getattr(main, "__spec__", None), "name", "") == "vajra_tui.engine.gpu.worker":
        raise RuntimeError("vajra_tui.bench()/tune() called while Vajra's GPU worker imported your "
                           "script: put the call under `if __name__ == \"__main__\":`")


def user_kernels(kernels: Kernels) -> list[Candidate]:
    """Paths or WGSL strings (or a name -> source dict) as candidates with unique names."""
    from vajra_tui.engine.run.kernel_file import read_kernel_file

    if kernels is None:
        items: list[tuple[str, str, str]] = []
    elif isinstance(kernels, Mapping):
        items = [(str(k), str(v), "python") for k, v in kernels.items()]
    else:
        if isinstance(kernels, (str, Path)):
            kernels = [kernels]
        items = []
        for i, k in enumerate(kernels, 1):
            if isinstance(k, str) and ("\n" in k or "fn " in k):  # WGSL source
                items.append((f"kernel{i}", k, "python"))
            else:
                path = Path(k)
                items.append((path.stem, read_kernel_file(path), f"file: {path}"))
    out, seen = [], {"baseline"}
    for index, (name, source, origin) in enumerate(items):
        while name in seen:
            name += "'"
        seen.add(name)
        out.append(Candidate(id=f"user{index}", name=name, strategy="user", origin=origin, source=source))
    return out


class _Run:
    """One bench or tune: the session, its sinks and the worker, closed however it ends."""

    def __init__(self, workload: Workload | str | Path, kernels: Kernels, size: str | Mapping[str, int],
                 timing: TimingSettings, seeds: tuple[int, ...], adapter: str | None,
                 record: Path | None, progress: bool, on_event: Callable[[Event], None] | None,
                 mode: str, gpus: str | None = None) -> None:
        self.workload = workload if isinstance(workload, Workload) else get_workload(str(workload))
        self.size = self.workload.size(size)
        self.kernels = user_kernels(kernels)
        self.timing, self.seeds, self.adapter, self.mode = timing, tuple(seeds), adapter, mode
        self.lanes: list[Any] = []
        if gpus:  # resolved now, before any worker starts: a bad choice is a ValueError
            from vajra_tui.engine.gpu.adapters import AdapterChoiceError
            from vajra_tui.engine.scale.local import local_lanes

            try:
                self.lanes = local_lanes(str(gpus), adapter)
            except AdapterChoiceError as exc:
                raise ValueError(str(exc)) from None
        self.sinks: list[Callable[[Event], None]] = [on_event] if on_event else []
        if progress:
            from vajra_tui.cli.render import ProgressPrinter

            self.sinks.append(ProgressPrinter())
        self.recorder = None
        if record is not None:
            from vajra_tui.engine.run.output_paths import check_new_file
            from vajra_tui.engine.store.record import Recorder

            check_new_file(Path(record))
            self.recorder = Recorder(Path(record), f"{mode} {self.workload.name} (Python API)")
            self.sinks.append(self.recorder)

    def _session(self):  # -> Session
        from vajra_tui.engine.gpu.client import GPUClient
        from vajra_tui.engine.session import Session

        self.client = self.lanes[0] if self.lanes else GPUClient(self.adapter)
        sinks = list(self.sinks)
        return Session(self.workload, self.size, self.client, lambda e: [s(e) for s in sinks],
                       self.timing, seeds=self.seeds, source_mode=self.mode, results_cache=cache_dir())

    def _close(self) -> None:
        for client in self.lanes or [self.client]:
            client.close()
        if self.recorder is not None:
            self.recorder.close()

    async def bench(self) -> Report:
        session = self._session()
        try:
            await session.start()
            await session.run_baseline(time=False)
            await session.evaluate(self.kernels)
            verdict = session.standings(1)
            best = next((r for r in verdict.ranked if r.id != "baseline"), None)
            if best is not None:
                await session.check_browser(best.id)
        finally:
            self._close()
        results = [session.results["baseline"], *[session.results[k.id] for k in self.kernels]]
        return _report(session, results, verdict.winner)

    async def tune(self, source: str, generations: int, budget: int, export: Path | None,
                   settings: Settings | None, shootouts: str = "every") -> Report:
        session = self._session()
        try:
            return await self._tune(session, source, generations, budget, export, settings, shootouts)
        finally:
            self._close()

    async def _tune(self, session, source: str, generations: int, budget: int, export: Path | None,
                    settings: Settings | None, shootouts: str) -> Report:
        from vajra_tui.engine.sources.library import LibrarySource
        from vajra_tui.engine.tune import Tuner

        llm, params = None, None
        if source == "params":
            from vajra_tui.engine.sources.params import ParamsSource, read_space

            if not self.kernels:
                raise ValueError("source='params' needs kernels whose `override`s have // tune: lines")
            spaces = [read_space(k.name, k.source, self.workload.dims) for k in self.kernels]
            params = ParamsSource(self.workload, self.size, spaces, budget, session.emit)
        elif source in ("llm", "auto"):
            from vajra_tui.engine.sources.llm.client import NemotronSource
            from vajra_tui.settings import load_settings

            llm_settings = (settings or load_settings()).llm
            llm = NemotronSource(llm_settings, session.emit)
            if not llm.configured:
                if source == "llm":
                    raise ValueError(f"source='llm' needs an API key in ${llm_settings.api_key_env}")
                llm = None
        session.source_mode = "nemotron" if llm else ("params" if params else "library")
        if self.lanes:
            from vajra_tui.engine.scale.lanes import LaneTuner

            tuner: Tuner = LaneTuner(session, self.lanes, params or LibrarySource(), llm=llm, budget=budget,
                                     shootouts=shootouts)
        else:
            tuner = Tuner(session, params or LibrarySource(), llm=llm, budget=budget, shootouts=shootouts)
        tuner.extra = [] if params else self.kernels
        try:
            ranked = await tuner.run(params.planned_rounds - 1 if params else max(generations, 0))
        finally:
            if llm is not None:
                await llm.aclose()
        session = tuner.session  # with lanes: the one the shoot-out ran on (another if the first was lost)
        winner = ranked[0] if ranked else None
        report = _report(session, list(session.results.values()), winner)
        report.generations, report.ranking = tuner.generation, [r.name for r in ranked]
        board = getattr(tuner, "board", None)
        if board is not None:
            report.lanes = [info.model_copy(deep=True) for info in board.infos]
            report.baseline_spread, report.final_lane = board.spread, board.infos[board.final].label
        report.params = params.summary() if params else None
        report.library = getattr(tuner.library, "note", "")
        if export is not None and winner is not None:
            from vajra_tui.engine.export.winner import export_winner

            report.exported = export_winner(winner, session.device, session.info, Path(export))
        return report


def _report(session, results: list[CandidateResult], winner: CandidateResult | None) -> Report:
    verdict = session.last_ranking
    return Report(device=session.device, workload=session.info, calibration=session.calibration,
                  results=results, winner=winner, headline=verdict.headline if verdict else "",
                  ties=[r.name for r in verdict.ties] if verdict else [],
                  baseline_won=bool(verdict and verdict.baseline_won))

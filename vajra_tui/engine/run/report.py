"""What a run ends with: one typed :class:`Report`, and the one JSON document made from it.

``vajra-tui bench|tune --json`` prints :meth:`Report.to_json`, and the Python API returns
the same :class:`Report`, so the two cannot drift apart: a field added here appears on
both. Every number in it was derived by the engine; nothing here computes a result.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from vajra_tui.engine.events import Calibration, CandidateResult, DeviceInfo, LaneInfo, ReportTail, WorkloadInfo

if TYPE_CHECKING:
    from vajra_tui.engine.session import Session
    from vajra_tui.engine.store.record import RecordedRun

RESULT_FIELDS = (
    "name", "status", "reason", "diagnostics", "max_rel_error", "worst_index", "median_ms",
    "iqr_ms", "p25_ms", "p75_ms", "min_ms", "max_ms", "timing", "gflops", "gbps", "intensity",
    "pct_of_roofline", "regime", "suspicious", "workgroup_size", "grid", "speedup",
    "source_sha256", "strategy", "origin", "generation", "rewrites", "deadline_s", "browser",
    "browser_diagnostics", "browser_invalid", "over_dispatch", "duplicate_of", "batch", "warmup",
    "cache_state", "telemetry", "history", "params", "constants", "lane", "adapter_index",
    "passes", "pass_ms", "uniforms", "portable", "portability", "browser_judge", "browser_adapter",
    "browser_limits", "browser_features", "browser_used_features", "browser_messages", "browser_ms",
)


def result_dict(r: CandidateResult) -> dict[str, Any]:
    """One result as the JSON document lists it, fields in a fixed order."""
    data = r.model_dump(include=set(RESULT_FIELDS))
    # a pass's module is in the export; the document names each pass, its entry and grid
    data["passes"] = [{k: v for k, v in p.items() if k != "source"} for p in data["passes"]]
    return {k: data[k] for k in RESULT_FIELDS}


def finite(value: Any) -> Any:
    """``value`` with every NaN and infinity as None, as a recording stores them.

    ``json.dumps`` writes ``Infinity``, which is not JSON: the ``--json`` of a run with a
    never-written kernel (max_rel_error inf) failed ``JSON.parse`` and jq, while the
    replay of its recording said null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def document(device: DeviceInfo, workload: WorkloadInfo, results: list[CandidateResult],
             calibration: Calibration | None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON document's frame: where it ran, what ran, the roofline, every result."""
    return finite({
        "device": {
            "name": device.name, "backend": device.backend, "adapter_type": device.adapter_type,
            "vendor": device.vendor, "driver": device.driver, "software": device.software,
            "adapter_index": device.adapter_index,
            "nvml": device.nvml.model_dump() if device.nvml else None,
        },
        "workload": {"name": workload.name, "size": workload.size, "flops": workload.flops,
                     "min_bytes": workload.min_bytes, "origin": workload.origin},
        "calibration": calibration.model_dump() if calibration else None,
        "results": [result_dict(r) for r in results],
        **(extra or {}),
    })


class Report(BaseModel):
    """What ``bench()`` and ``tune()`` return, and what ``--json`` prints (:meth:`to_json`)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kind: str = "tune"  # "bench" | "tune"
    device: DeviceInfo
    workload: WorkloadInfo
    calibration: Calibration | None = None
    results: list[CandidateResult] = Field(default_factory=list)
    winner: CandidateResult | None = None  # None: nothing beat the baseline beyond noise
    # The fastest kernel here when it is not the winner: over WebGPU's default limits, so
    # ``--limits portable`` (the default) did not crown it. ``limits``: what crowned the winner.
    fastest_here: CandidateResult | None = None
    limits: str | None = None
    headline: str = ""
    ties: list[str] = Field(default_factory=list)
    baseline_won: bool = False
    final_batch: int | None = None  # the batch whose baseline every speedup divides
    # The inputs: every kernel verified on ``seeds`` and was timed (each timed dispatch
    # checked) on ``timed_seed``, drawn for the run; None for a recording made before
    # timing used a fresh seed. Without them a script could not reproduce a verdict.
    seeds: list[int] = Field(default_factory=list)
    timed_seed: int | None = None
    standing: list[str] = Field(default_factory=list)  # ids of the final ranking, fastest first, baseline included
    generations: int = 0
    ranking: list[str] = Field(default_factory=list)
    lanes: list[LaneInfo] = Field(default_factory=list)  # gpus=: every worker, its baseline, what it timed
    baseline_spread: float | None = None  # gpus=: max/min of the lanes' baseline medians
    final_lane: str | None = None  # gpus=: the lane the shoot-outs (these results) were timed on
    params: dict[str, Any] | None = None  # source="params": the space, what was ruled out, the search
    library: str = ""  # why the library had nothing (a workload without templates)
    exported: list[Path] = Field(default_factory=list)
    export_error: str = ""  # --export failed (a full disk): the run's numbers stand, said with the error

    def __getitem__(self, name: str) -> CandidateResult:
        """A result by kernel name (``report["baseline"]``, ``report["tiled TILE=16"]``)."""
        for r in self.results:
            if r.name == name or r.id == name:
                return r
        raise KeyError(f"no kernel {name!r}; measured: {', '.join(r.name for r in self.results)}")

    @property
    def baseline(self) -> CandidateResult:
        return self["baseline"]

    def in_standing_order(self) -> list[CandidateResult]:
        """For reading: the final ranking's kernels (one batch) fastest first, then the rest."""
        by_id = {r.id: r for r in self.results}
        first = [by_id[i] for i in self.standing if i in by_id]
        return first + [r for r in self.results if r.id not in set(self.standing)]

    def to_json(self) -> dict[str, Any]:
        """The document ``--json`` prints; the winner is named (its result is in ``results``)."""
        extra: dict[str, Any] = {"winner": self.winner.name if self.winner else None, "headline": self.headline,
                                 "ties": self.ties, "baseline_won": self.baseline_won,
                                 "final_batch": self.final_batch, "limits": self.limits,
                                 "seeds": list(self.seeds), "timed_on_seed": self.timed_seed}
        if self.fastest_here is not None:
            extra["fastest_here"] = self.fastest_here.name
        if self.kind == "tune":
            extra.update(generations=self.generations, ranking=self.ranking)
        if self.params is not None:
            extra["params"] = self.params
        if self.library:
            extra["library"] = self.library
        if self.exported:
            extra["exported"] = [str(p) for p in self.exported]
        if self.export_error:
            extra["error"] = self.export_error
        if self.lanes:
            extra.update(lanes=[lane.model_dump() for lane in self.lanes], baseline_spread=self.baseline_spread,
                         final_lane=self.final_lane)
        return document(self.device, self.workload, self.results, self.calibration, extra)


def session_report(session: Session, results: list[CandidateResult], winner: CandidateResult | None,
                   kind: str) -> Report:
    """The report of a session's results, with its last ranking's verdict."""
    verdict = session.last_ranking
    baseline = session.results.get("baseline")
    assert session.device is not None, "a report needs an opened session"
    return Report(kind=kind, device=session.device, workload=session.info, calibration=session.calibration,
                  results=results, winner=winner, headline=verdict.headline if verdict else "",
                  ties=[r.name for r in verdict.ties] if verdict else [],
                  baseline_won=bool(verdict and verdict.baseline_won),
                  final_batch=baseline.batch if baseline is not None else None,
                  standing=[r.id for r in verdict.ranked] if verdict else [],
                  fastest_here=verdict.fastest if verdict else None, limits=session.limits,
                  seeds=list(session.seeds), timed_seed=session.fresh_seed)


def report_tail(report: Report) -> ReportTail:
    """What of ``report`` its events do not say: the run ends its stream with it
    (``SessionFinished.report``), so :func:`recorded_report` rebuilds the same document."""
    return ReportTail(kind="bench" if report.kind == "bench" else "tune", generations=report.generations,
                      ranking=list(report.ranking), library=report.library, params=report.params,
                      lanes=[lane.model_copy(deep=True) for lane in report.lanes],
                      baseline_spread=report.baseline_spread, final_lane=report.final_lane)


def recorded_report(run: RecordedRun, kind: str = "tune") -> Report:
    """A recording's report, the same document ``tune --json`` printed when it was made:
    the last ranking's verdict, its batch, the winner by name, and what the run's last event
    (``SessionFinished.report``) adds; a recording made before that event carried it derives
    its generations and ranking from the rankings, and ``kind`` from its label."""
    ranking = run.ranking
    by_id = run.results
    winner = by_id.get(run.winner_id) if run.winner_id else None
    baseline = by_id.get("baseline")
    ranked = [by_id[i] for i in (ranking.ranked_ids if ranking else []) if i in by_id]
    headline = ranking.headline if ranking else ""
    if ranking and not headline:  # recorded before rankings carried their headline
        headline = (f"{winner.name} wins" if winner else
                    "no candidate beat the baseline" if ranking.baseline_won else "no kernel verified")
    tail = run.finished.report if run.finished is not None else None
    if tail is None:  # recorded before runs ended with their report's tail
        tail = ReportTail(kind="bench" if kind == "bench" else "tune",
                          generations=max((r.generation for r in by_id.values()), default=0),
                          ranking=[r.name for r in ranked if r.id != "baseline"] if winner else [])
    return Report(
        kind=tail.kind, device=run.device, workload=run.workload, calibration=run.calibration,
        results=list(by_id.values()), winner=winner, headline=headline,
        ties=[by_id[i].name for i in ranking.tie_ids if i in by_id] if ranking else [],
        baseline_won=bool(ranking and ranking.baseline_won),
        final_batch=(ranking.batch if ranking and ranking.batch else baseline.batch if baseline else None),
        standing=[r.id for r in ranked], generations=tail.generations, limits=run.limits,
        seeds=list(run.seeds), timed_seed=run.timed_seed if run.timed_seed not in (None, *run.seeds) else None,
        fastest_here=by_id.get(ranking.fastest_id) if ranking and ranking.fastest_id else None,
        ranking=list(tail.ranking), library=tail.library, params=tail.params,
        lanes=[lane.model_copy(deep=True) for lane in tail.lanes], baseline_spread=tail.baseline_spread,
        final_lane=tail.final_lane)


__all__ = ["Report", "RESULT_FIELDS", "document", "recorded_report", "report_tail", "result_dict",
           "session_report"]

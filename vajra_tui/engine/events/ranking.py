"""How a run moves on and ends: generations, rankings, the GPU lanes, notices, the close.

These events speak of the run as a whole rather than of one kernel: a generation
starts, the verified kernels are ranked (the last ranking is the verdict), the lanes of
a run over several adapters report their state, and the run finishes with the
:class:`ReportTail` that lets a replay print the same document the run printed.
:class:`Notice` is here too: like the rest, it belongs to no one candidate.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from vajra_tui.engine.events.base import BaseEvent, Model


class GenerationStarted(BaseEvent):
    type: Literal["generation_started"] = "generation_started"
    generation: int
    source: str = ""


class RankingReady(BaseEvent):
    """Verified kernels ranked fastest first, the baseline in its place among them.

    ``winner_id`` is None when nothing verified or when no candidate beat the
    baseline beyond noise (``baseline_won``); ``tie_ids`` are within noise of the
    winner. ``final`` marks the shoot-out that closes a run: its batch re-timed the
    finalists beside the baseline, and every number of the report comes from it.
    """

    type: Literal["ranking"] = "ranking"
    generation: int
    ranked_ids: list[str]
    winner_id: str | None = None
    baseline_median_ms: float | None = None
    baseline_won: bool = False
    tie_ids: list[str] = Field(default_factory=list)
    batch: int | None = None
    final: bool = False
    headline: str = ""
    # The fastest verified kernel here when it is not the winner (it breaks the portable limits).
    fastest_id: str | None = None
    # With baseline_won: the kernel whose median beat the baseline's inside the noise.
    undecided_id: str | None = None


class LaneInfo(Model):
    """One GPU worker of a run over several adapters (``tune --gpus``, ``--ray``)."""

    label: str
    adapter_index: int | None = None
    name: str = ""
    driver: str = ""
    host: str = ""
    state: Literal["starting", "idle", "admitting", "timing", "lost"] = "starting"
    baseline_median_ms: float | None = None  # median of this lane's own baseline medians
    baseline_medians_ms: list[float] = Field(default_factory=list)  # one per batch it timed
    batches: int = 0
    timed: int = 0  # candidates whose numbers this lane measured
    lost: list[str] = Field(default_factory=list)  # candidates in flight when it died
    nvml_index: int | None = None


class LanesUpdated(BaseEvent):
    """The lanes of a run and what each is doing; ``spread`` = max/min of their baselines."""

    type: Literal["lanes"] = "lanes"
    lanes: list[LaneInfo]
    timing: list[str] = Field(default_factory=list)  # labels of the lanes timing right now
    spread: float | None = None
    final_lane: str = ""  # the lane whose shoot-out the report shows


class ReportTail(Model):
    """What a run's report says that no other event does (engine/run/report.py): the CLI's and
    the API's runs end their stream with it, so ``replay --json`` prints the document
    ``tune --json`` printed. The verdict itself comes from the last :class:`RankingReady`."""

    kind: Literal["bench", "tune"] = "tune"
    generations: int = 0
    ranking: list[str] = Field(default_factory=list)  # the crowned kernels' names, fastest first
    library: str = ""  # why the library had nothing (a workload without templates)
    params: dict[str, Any] | None = None  # source "params": the space, what was ruled out, the search
    lanes: list[LaneInfo] = Field(default_factory=list)  # several adapters: every worker at the end
    baseline_spread: float | None = None
    final_lane: str | None = None


class SessionFinished(BaseEvent):
    type: Literal["session_finished"] = "session_finished"
    ok: bool = True
    error: str = ""
    # Added within schema 1 (optional: older readers ignore it, older recordings lack it, and
    # replay then derives what it can from the rankings). None from the TUI, which has no report.
    report: ReportTail | None = None


class Notice(BaseEvent):
    type: Literal["notice"] = "notice"
    level: Literal["info", "warning", "error"] = "info"
    message: str

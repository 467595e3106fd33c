"""A candidate from its first token to a compiled module.

These events follow one kernel through the front of the pipeline: it is queued, its
source streams in from a model (or fails over to another, or is grounded by a search),
the sanitizer rewrites it, it moves through stages, its final source is fixed and the
compiler judges it. The located compiler messages (:class:`Diagnostic`) are born here;
the finished result (``events/measurement.py``) carries them on.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from vajra_tui.engine.events.base import BaseEvent, Model, Stage


class DiagnosticLabel(Model):
    """One labelled span of a compiler message (Naga prints several)."""

    line: int
    column: int
    text: str = ""


class Diagnostic(Model):
    """A compiler message located in the candidate's own source as it was written (1-based).

    ``labels`` keeps every span the compiler pointed at, ``notes`` its ``= note:`` hints,
    and ``source_line`` the text of the line, so a model can act on it without
    counting lines.
    """

    line: int
    column: int
    message: str
    labels: list[DiagnosticLabel] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    source_line: str = ""
    width: int | None = None  # characters the compiler underlined, from ``column``


class CandidateQueued(BaseEvent):
    """A candidate exists (its source may still be streaming in)."""

    type: Literal["candidate_queued"] = "candidate_queued"
    id: str
    name: str
    strategy: str
    origin: str
    generation: int = 1
    params: dict[str, Any] = Field(default_factory=dict)


class StreamDelta(BaseEvent):
    type: Literal["stream_delta"] = "stream_delta"
    id: str
    kind: Literal["content", "reasoning"] = "content"
    text: str


class ModelFailover(BaseEvent):
    type: Literal["model_failover"] = "model_failover"
    id: str
    from_model: str
    to_model: str
    reason: str


class GroundingResult(BaseEvent):
    type: Literal["grounding"] = "grounding"
    query: str
    results: list[dict[str, str]] = Field(default_factory=list)
    cached: bool = False
    error: str = ""


class SanitizerRewrite(BaseEvent):
    type: Literal["sanitizer_rewrite"] = "sanitizer_rewrite"
    id: str
    findings: list[Diagnostic] = Field(default_factory=list)
    diff: str = ""
    repaired: bool = True


class StageChanged(BaseEvent):
    type: Literal["stage"] = "stage"
    id: str
    stage: Stage
    detail: str = ""


class CandidateSource(BaseEvent):
    """The final candidate source, once streaming and sanitizing are over."""

    type: Literal["candidate_source"] = "candidate_source"
    id: str
    source: str
    stitched_source: str = ""
    workgroup_size: list[int] = Field(default_factory=list)
    grid: list[int] = Field(default_factory=list)


class CompileFinished(BaseEvent):
    type: Literal["compile_finished"] = "compile_finished"
    id: str
    ok: bool
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    seconds: float = 0.0

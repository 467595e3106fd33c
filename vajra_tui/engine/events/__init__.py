"""The one contract between the engine and everything that shows its results.

The CLI, the TUI, the recorder and replay all consume this stream. Every model
is a pydantic model with a literal ``type`` tag, so a recording (JSON lines)
can be read back into the same objects with :data:`EVENT_ADAPTER`.
Bump :data:`SCHEMA_VERSION` whenever a field changes meaning or disappears.

The events are declared by pipeline step, one module each, and every public name is
re-exported here, so ``from vajra_tui.engine.events import X`` is the way to use them:

- :mod:`.base`: the schema version, the status and stage literals, the base classes;
- :mod:`.session`: the adapter, its calibration and the workload (what a run opens with);
- :mod:`.candidates`: a kernel from queued to compiled, with the compiler's diagnostics;
- :mod:`.measurement`: verification, timing, telemetry and the finished ``CandidateResult``;
- :mod:`.ranking`: generations, rankings, GPU lanes, notices and the run's close;
- :mod:`.union`: the discriminated ``Event`` union and :func:`parse_event`.
"""

from __future__ import annotations

from vajra_tui.engine.events.base import SCHEMA_VERSION, Stage, Status, TimingMethod
from vajra_tui.engine.events.candidates import (
    CandidateQueued,
    CandidateSource,
    CompileFinished,
    Diagnostic,
    DiagnosticLabel,
    GroundingResult,
    ModelFailover,
    SanitizerRewrite,
    StageChanged,
    StreamDelta,
)
from vajra_tui.engine.events.measurement import (
    BatchTelemetry,
    CandidateFinished,
    CandidateResult,
    DispatchTimed,
    TelemetrySample,
    VerificationFinished,
)
from vajra_tui.engine.events.ranking import (
    GenerationStarted,
    LaneInfo,
    LanesUpdated,
    Notice,
    RankingReady,
    ReportTail,
    SessionFinished,
)
from vajra_tui.engine.events.session import (
    Calibration,
    CalibrationReady,
    DeviceInfo,
    NvmlMatch,
    SessionStarted,
    WorkloadInfo,
)
from vajra_tui.engine.events.union import EVENT_ADAPTER, Event, parse_event

__all__ = [
    "EVENT_ADAPTER",
    "SCHEMA_VERSION",
    "BatchTelemetry",
    "Calibration",
    "CalibrationReady",
    "CandidateFinished",
    "CandidateQueued",
    "CandidateResult",
    "CandidateSource",
    "CompileFinished",
    "DeviceInfo",
    "Diagnostic",
    "DiagnosticLabel",
    "DispatchTimed",
    "Event",
    "GenerationStarted",
    "GroundingResult",
    "LaneInfo",
    "LanesUpdated",
    "ModelFailover",
    "Notice",
    "NvmlMatch",
    "RankingReady",
    "ReportTail",
    "SanitizerRewrite",
    "SessionFinished",
    "SessionStarted",
    "Stage",
    "StageChanged",
    "Status",
    "StreamDelta",
    "TelemetrySample",
    "TimingMethod",
    "VerificationFinished",
    "WorkloadInfo",
    "parse_event",
]

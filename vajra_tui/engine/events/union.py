"""The stream's one type: every event, told apart by its ``type`` tag.

The union is assembled here, after every pipeline module has defined its events, so
that reading a recording (:func:`parse_event`) needs no knowledge of where an event is
declared. The order of the union is the order of a run and is kept as it was: the JSON
schema of :data:`EVENT_ADAPTER` lists its members in this order.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter

from vajra_tui.engine.events.candidates import (
    CandidateQueued,
    CandidateSource,
    CompileFinished,
    GroundingResult,
    ModelFailover,
    SanitizerRewrite,
    StageChanged,
    StreamDelta,
)
from vajra_tui.engine.events.measurement import CandidateFinished, DispatchTimed, VerificationFinished
from vajra_tui.engine.events.ranking import GenerationStarted, LanesUpdated, Notice, RankingReady, SessionFinished
from vajra_tui.engine.events.session import CalibrationReady, SessionStarted

Event = Annotated[
    Union[
        SessionStarted,
        CalibrationReady,
        GenerationStarted,
        CandidateQueued,
        StreamDelta,
        ModelFailover,
        GroundingResult,
        SanitizerRewrite,
        StageChanged,
        CandidateSource,
        CompileFinished,
        VerificationFinished,
        DispatchTimed,
        CandidateFinished,
        Notice,
        RankingReady,
        LanesUpdated,
        SessionFinished,
    ],
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(data: str | bytes | dict[str, Any]) -> Event:
    """Parse one recorded event (a JSON line or a dict)."""
    if isinstance(data, dict):
        return EVENT_ADAPTER.validate_python(data)
    return EVENT_ADAPTER.validate_json(data)

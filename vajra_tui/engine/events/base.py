"""The vocabulary every event module shares: the schema version, the status and stage
literals, and the two base classes.

It sits apart so that the modules of each pipeline step import it and nothing else of
the package: none of them imports another's events except for the models it nests
(a result's diagnostics), so the package's imports stay a tree.
"""

from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

Status = Literal[
    "verified", "rejected", "compile_error", "timeout", "crashed", "no_kernel", "duplicate",
    "cancelled",  # stopped by the user (the TUI's cancel key) before it was judged
]
Stage = Literal[
    "queued", "streaming", "sanitizing", "compiling", "verifying", "warmup", "timing", "done"
]
TimingMethod = Literal["timestamp", "wall"]


class Model(BaseModel):
    """Every model of the stream: unknown fields of a newer recording are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=False)


class BaseEvent(Model):
    """An event of the stream: stamped with the time it happened (Unix seconds)."""

    t: float = Field(default_factory=time.time)

"""A kernel proposed for measurement, whatever produced it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from .events import CandidateResult, DeviceInfo, WorkloadInfo


class Candidate(BaseModel):
    """A candidate kernel body (the part under the contract, not the stitched source).

    ``source`` is empty when a model replied without a kernel; ``no_kernel_reason``
    then says why and ``raw_reply`` keeps what it said.
    """

    id: str
    name: str
    strategy: str = "user"  # baseline | A | B | C | D (evolved) | user
    origin: str = ""  # "library: sgemm/tiled bm=64 ..." or "nemotron: <model>"
    generation: int = 1
    params: dict[str, Any] = Field(default_factory=dict)
    source: str = ""
    raw_reply: str = ""
    reasoning: str = ""
    no_kernel_reason: str = ""
    rewrites: list[str] = Field(default_factory=list)


class GenerationContext(BaseModel):
    """What a candidate source may know when it proposes the next kernels."""

    workload: WorkloadInfo
    device: DeviceInfo
    generation: int = 1
    prelude: str = ""
    baseline_source: str = ""
    results: list[CandidateResult] = Field(default_factory=list)
    winner: CandidateResult | None = None
    budget: int = 6
    tried: list[str] = Field(default_factory=list)  # config keys already measured

"""A kernel proposed for measurement, whatever produced it."""

from __future__ import annotations

from typing import Any, Union

from pydantic import BaseModel, Field

from vajra_tui.engine.events import Calibration, CandidateResult, DeviceInfo, WorkloadInfo


class Candidate(BaseModel):
    """A candidate kernel body (the part under the contract, not the stitched source).

    ``source`` is empty when a model replied without a kernel; ``no_kernel_reason``
    then says why and ``raw_reply`` keeps what it said. ``messages`` is the
    conversation that produced a model's reply (system and user turns, and any
    earlier assistant turns), so the next generation can continue it with the
    reply appended: line numbers in later feedback then refer to text the model saw.
    """

    id: str
    name: str
    strategy: str = "user"  # baseline | A | B | C | D (evolved) | user
    origin: str = ""  # "library: sgemm/tiled bm=64 ..." or "nemotron: <model>"
    generation: int = 1
    params: dict[str, Any] = Field(default_factory=dict)
    # WGSL `override` values set as pipeline constants (a params-search configuration)
    constants: dict[str, Union[bool, int, float]] = Field(default_factory=dict)
    source: str = ""
    raw_reply: str = ""
    reasoning: str = ""
    no_kernel_reason: str = ""
    rewrites: list[str] = Field(default_factory=list)
    messages: list[dict[str, str]] = Field(default_factory=list)
    finish_reason: str = ""  # the model's last finish_reason ("stop", "length", ...)
    reply_kernels: int = 0  # kernels the reply held (a model may answer with several variants)
    reply_label: str = ""  # the strategy letter the reply gave the kernel taken for this slot


class GenerationContext(BaseModel):
    """What a candidate source may know when it proposes the next kernels.

    :meth:`Tuner.context` fills it from the session: the workload's declaration
    (``summary``, ``output_axes``, ``output``), the calibration, the baseline's
    measured result, every result so far and the candidates that produced them
    (their conversations and their sources as written).
    """

    workload: WorkloadInfo
    device: DeviceInfo
    generation: int = 1
    prelude: str = ""
    baseline_source: str = ""
    results: list[CandidateResult] = Field(default_factory=list)
    winner: CandidateResult | None = None  # fastest verified candidate (not the baseline)
    budget: int = 6
    tried: list[str] = Field(default_factory=list)  # config keys already measured
    summary: str = ""  # what the workload computes, e.g. "C = A·B, f32, row-major"
    # The size constant each output axis runs along, x first ("N", "M"); "1" for a flat axis.
    output_axes: list[str] = Field(default_factory=list)
    output: str = ""  # the output binding's name
    calibration: Calibration | None = None
    baseline: CandidateResult | None = None  # the baseline's measured numbers
    baseline_won: bool = False  # no candidate beat the baseline beyond noise
    candidates: dict[str, Candidate] = Field(default_factory=dict)

    def axes_text(self) -> str:
        """"x = N = 512, y = M = 512": the output grid per axis, from the workload's declaration."""
        grid = list(self.workload.output_grid) + [1, 1]
        names = list(self.output_axes) + ["", ""]
        parts = []
        for axis, n, name in zip("xy", grid[:2], names[:2]):
            label = f"{name} = {n}" if name and name != str(n) else str(n)
            parts.append(f"{axis} = {label}")
        return ", ".join(parts)

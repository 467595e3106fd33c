"""What a compiled kernel was found to be: correct or not, and how fast.

Verification against the reference, every timed dispatch, the GPU's clocks around a
timed batch, and the :class:`CandidateResult` that gathers them with every derived
number (roofline share, speedup, the browser's verdict). Consumers read a kernel's
outcome from here alone, so the result and the measurements it is made of sit together.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from pydantic import Field

from vajra_tui.engine.events.base import BaseEvent, Model, Status, TimingMethod
from vajra_tui.engine.events.candidates import Diagnostic


class VerificationFinished(BaseEvent):
    type: Literal["verification"] = "verification"
    id: str
    seed: int
    passed: bool
    max_rel_error: float | None = None
    worst_index: int | None = None
    reason: str = ""
    phase: Literal["pre", "timed"] = "pre"
    judged_by: str = ""  # "gpu", "cpu" (gpu/gpu_verify.py); "" in older recordings


class DispatchTimed(BaseEvent):
    type: Literal["dispatch_timed"] = "dispatch_timed"
    id: str
    round: int
    ms: float
    method: TimingMethod
    warmup: bool = False


class TelemetrySample(Model):
    """One NVML reading of the GPU that timed a batch."""

    t: float
    sm_clock_mhz: float
    mem_clock_mhz: float
    power_w: float
    temperature_c: float


class BatchTelemetry(Model):
    """The GPU's state at the start and end of one timed batch ("none": the driver tells nothing)."""

    source: Literal["nvml", "none"] = "none"
    first: TelemetrySample | None = None
    last: TelemetrySample | None = None
    sm_clock_drift: float | None = None  # |last - first| / first
    unstable: bool = False  # the SM clock moved by more than 10% during the batch
    note: str = ""
    warmed_ms: float = 0.0  # the batch's kernels ran untimed this long first, to bring the SM clock up


class CandidateResult(Model):
    """Everything measured about one kernel; derived numbers are filled once, here."""

    id: str
    name: str
    status: Status = "crashed"
    reason: str = ""
    strategy: str = "user"
    origin: str = ""
    generation: int = 1
    params: dict[str, Any] = Field(default_factory=dict)
    # WGSL `override` values the pipeline was built with (a params-search configuration)
    constants: dict[str, Union[bool, int, float]] = Field(default_factory=dict)
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    rewrites: list[str] = Field(default_factory=list)
    max_rel_error: float | None = None
    worst_index: int | None = None
    median_ms: float | None = None
    iqr_ms: float | None = None
    p25_ms: float | None = None
    p75_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    times_ms: list[float] = Field(default_factory=list)
    timing: TimingMethod | None = None
    gflops: float | None = None
    gbps: float | None = None
    intensity: float | None = None
    pct_of_roofline: float | None = None
    regime: Literal["memory", "compute"] | None = None
    suspicious: bool = False
    speedup: float | None = None
    workgroup_size: list[int] = Field(default_factory=list)
    grid: list[int] = Field(default_factory=list)
    source: str = ""
    stitched_source: str = ""
    source_sha256: str = ""
    raw_reply: str = ""
    deadline_s: float | None = None
    browser: str = ""  # browser-valid | tint-rejected | unchecked: <why>; crowned kernels only
    # A barrier in non-uniform control flow that was not repaired: browsers refuse the kernel.
    browser_invalid: str = ""
    # The grid this kernel was first planned on covered its output this many times over.
    over_dispatch: list[int] = Field(default_factory=list)
    duplicate_of: str = ""
    enables: list[str] = Field(default_factory=list)  # `enable` directives, hoisted
    batch: int | None = None  # the timing batch these numbers (and the speedup's baseline) come from
    warmup: int | None = None  # warm-up dispatches that ran before the timed ones
    cache_state: Literal["warm", "cold"] = "warm"
    telemetry: BatchTelemetry | None = None
    history: list[dict[str, Any]] = Field(default_factory=list)  # earlier batches' numbers
    from_cache: bool = False  # measured in an earlier run on this device (--resume)
    browser_diagnostics: list[Diagnostic] = Field(default_factory=list)
    # Which worker timed these numbers (``gpu0``, ``node-2/gpu1``) and its adapter index:
    # with several GPUs, a kernel's timings never mix adapters.
    lane: str = ""
    adapter_index: int | None = None
    # A multi-pass result's passes in order ({label, entry, source, grid, own}), and each
    # pass's median device time; a uniform's contents (hex) by binding name.
    passes: list[dict[str, Any]] = Field(default_factory=list)
    pass_ms: list[float] = Field(default_factory=list)
    uniforms: dict[str, str] = Field(default_factory=dict)
    # Whether the kernel fits WebGPU's default limits and the features asked for (None: not
    # judged), and why not: under ``--limits portable`` a kernel that does not is never crowned.
    portable: bool | None = None
    portability: list[str] = Field(default_factory=list)
    # What a real browser (headless Chromium, WebGPU) said of the exported module, when one
    # judged it: its adapter in words, the adapter's limits and features, the features the
    # kernel asked the device for, its compile messages, and the median of its timestamped
    # dispatches there (ms; software adapters such as SwiftShader say so in the adapter).
    browser_judge: str = ""  # "chromium 156 (headless)" | "node/dawn" | "" when none ran
    browser_adapter: str = ""
    browser_limits: dict[str, int] = Field(default_factory=dict)
    browser_features: list[str] = Field(default_factory=list)
    browser_used_features: list[str] = Field(default_factory=list)
    browser_messages: list[Diagnostic] = Field(default_factory=list)
    browser_ms: float | None = None


class CandidateFinished(BaseEvent):
    type: Literal["candidate_finished"] = "candidate_finished"
    result: CandidateResult

"""The one contract between the engine and everything that shows its results.

The CLI, the TUI, the recorder and replay all consume this stream. Every model
is a pydantic model with a literal ``type`` tag, so a recording (JSON lines)
can be read back into the same objects with :data:`EVENT_ADAPTER`.
Bump :data:`SCHEMA_VERSION` whenever a field changes meaning or disappears.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

SCHEMA_VERSION = 1

Status = Literal[
    "verified", "rejected", "compile_error", "timeout", "crashed", "no_kernel", "duplicate",
    "cancelled",  # stopped by the user (the TUI's cancel key) before it was judged
]
Stage = Literal[
    "queued", "streaming", "sanitizing", "compiling", "verifying", "warmup", "timing", "done"
]
TimingMethod = Literal["timestamp", "wall"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=False)


class DeviceInfo(_Model):
    """Identity of the adapter every number was measured on."""

    name: str
    vendor: str = ""
    vendor_id: int = 0
    device_id: int = 0
    backend: str = ""
    adapter_type: str = ""
    driver: str = ""
    software: bool = False
    features: list[str] = Field(default_factory=list)
    limits: dict[str, int] = Field(default_factory=dict)
    timestamp_query: bool = False
    subgroups: bool = False
    # Features requested on the device (what a kernel may use), not merely offered.
    enabled_features: list[str] = Field(default_factory=list)
    subgroup_min_size: int | None = None
    subgroup_max_size: int | None = None
    # Position in wgpu's enumeration (stable for one environment and driver only), and the
    # NVML GPU a busy probe found it to be (None: not probed, or no NVML). See gpu/adapters.py.
    adapter_index: int | None = None
    nvml: NvmlMatch | None = None


class NvmlMatch(_Model):
    """Which NVML GPU an adapter is, found by running a busy kernel on it (not by its name)."""

    index: int
    pci_bus_id: str = ""
    uuid: str = ""
    name: str = ""
    rise: float = 0.0  # utilization points it gained while the probe ran
    runner_up: float = 0.0  # the largest rise of any other GPU (near `rise`: not conclusive)
    method: str = "utilization"
    # When the probe ran (Unix time; None in recordings made before it was kept), and whether
    # this run reused that probe from the per-boot cache (gpu/probe_cache.py) instead of probing.
    probed_at: float | None = None
    cached: bool = False


class DiagnosticLabel(_Model):
    """One labelled span of a compiler message (Naga prints several)."""

    line: int
    column: int
    text: str = ""


class Diagnostic(_Model):
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


class Calibration(_Model):
    """Measured ceilings of one adapter: the roofline every result is judged by."""

    copy_gbps: float
    fma_gflops: float
    launch_floor_ms: float
    method: TimingMethod = "wall"
    device_key: str = ""
    driver: str = ""
    measured_at: float | None = None  # unix time; the age a screen shows
    copy_shape: int | None = None  # vec4s per invocation of the fastest copy kernel


class TelemetrySample(_Model):
    """One NVML reading of the GPU that timed a batch."""

    t: float
    sm_clock_mhz: float
    mem_clock_mhz: float
    power_w: float
    temperature_c: float


class BatchTelemetry(_Model):
    """The GPU's state at the start and end of one timed batch ("none": the driver tells nothing)."""

    source: Literal["nvml", "none"] = "none"
    first: TelemetrySample | None = None
    last: TelemetrySample | None = None
    sm_clock_drift: float | None = None  # |last - first| / first
    unstable: bool = False  # the SM clock moved by more than 10% during the batch
    note: str = ""


class CandidateResult(_Model):
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


class WorkloadInfo(_Model):
    name: str
    size: dict[str, int]
    flops: float
    min_bytes: float
    output_grid: list[int]
    atol: float
    rtol: float = 1e-4
    summary: str = ""
    # Group-0 buffers as declared: index, name, access, dtype, elements at this size. An
    # export of a recording needs them, whatever file the workload came from.
    bindings: list[dict[str, Any]] = Field(default_factory=list)
    origin: str = ""  # "built-in", "file: /path/mine.py", "module: pkg.mod:ATTR", ...
    definition_sha256: str = ""  # of the file that declares it: results of an edited one differ


class _Event(_Model):
    t: float = Field(default_factory=time.time)


class SessionStarted(_Event):
    type: Literal["session_started"] = "session_started"
    schema_version: int = SCHEMA_VERSION
    tool_version: str = ""
    device: DeviceInfo
    workload: WorkloadInfo
    source_mode: str = "library"
    grounding: bool = False
    warmup: int = 5
    reps: int = 9
    seeds: list[int] = Field(default_factory=list)
    fresh_seed: int | None = None  # drawn for this run: what a kernel must verify on before a crown
    # The limits a crowned kernel must fit: WebGPU's defaults ("portable") or this adapter's
    # (None: a recording made before the choice existed, when it was always the adapter's).
    limits: Literal["portable", "adapter"] | None = None


class CalibrationReady(_Event):
    type: Literal["calibration"] = "calibration"
    calibration: Calibration
    cached: bool = False


class GenerationStarted(_Event):
    type: Literal["generation_started"] = "generation_started"
    generation: int
    source: str = ""


class CandidateQueued(_Event):
    """A candidate exists (its source may still be streaming in)."""

    type: Literal["candidate_queued"] = "candidate_queued"
    id: str
    name: str
    strategy: str
    origin: str
    generation: int = 1
    params: dict[str, Any] = Field(default_factory=dict)


class StreamDelta(_Event):
    type: Literal["stream_delta"] = "stream_delta"
    id: str
    kind: Literal["content", "reasoning"] = "content"
    text: str


class ModelFailover(_Event):
    type: Literal["model_failover"] = "model_failover"
    id: str
    from_model: str
    to_model: str
    reason: str


class GroundingResult(_Event):
    type: Literal["grounding"] = "grounding"
    query: str
    results: list[dict[str, str]] = Field(default_factory=list)
    cached: bool = False
    error: str = ""


class SanitizerRewrite(_Event):
    type: Literal["sanitizer_rewrite"] = "sanitizer_rewrite"
    id: str
    findings: list[Diagnostic] = Field(default_factory=list)
    diff: str = ""
    repaired: bool = True


class StageChanged(_Event):
    type: Literal["stage"] = "stage"
    id: str
    stage: Stage
    detail: str = ""


class CandidateSource(_Event):
    """The final candidate source, once streaming and sanitizing are over."""

    type: Literal["candidate_source"] = "candidate_source"
    id: str
    source: str
    stitched_source: str = ""
    workgroup_size: list[int] = Field(default_factory=list)
    grid: list[int] = Field(default_factory=list)


class CompileFinished(_Event):
    type: Literal["compile_finished"] = "compile_finished"
    id: str
    ok: bool
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    seconds: float = 0.0


class VerificationFinished(_Event):
    type: Literal["verification"] = "verification"
    id: str
    seed: int
    passed: bool
    max_rel_error: float | None = None
    worst_index: int | None = None
    reason: str = ""
    phase: Literal["pre", "timed"] = "pre"
    judged_by: str = ""  # "gpu", "cpu" (gpu/gpu_verify.py); "" in older recordings


class DispatchTimed(_Event):
    type: Literal["dispatch_timed"] = "dispatch_timed"
    id: str
    round: int
    ms: float
    method: TimingMethod
    warmup: bool = False


class CandidateFinished(_Event):
    type: Literal["candidate_finished"] = "candidate_finished"
    result: CandidateResult


class Notice(_Event):
    type: Literal["notice"] = "notice"
    level: Literal["info", "warning", "error"] = "info"
    message: str


class RankingReady(_Event):
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


class LaneInfo(_Model):
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


class LanesUpdated(_Event):
    """The lanes of a run and what each is doing; ``spread`` = max/min of their baselines."""

    type: Literal["lanes"] = "lanes"
    lanes: list[LaneInfo]
    timing: list[str] = Field(default_factory=list)  # labels of the lanes timing right now
    spread: float | None = None
    final_lane: str = ""  # the lane whose shoot-out the report shows


class ReportTail(_Model):
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


class SessionFinished(_Event):
    type: Literal["session_finished"] = "session_finished"
    ok: bool = True
    error: str = ""
    # Added within schema 1 (optional: older readers ignore it, older recordings lack it, and
    # replay then derives what it can from the rankings). None from the TUI, which has no report.
    report: ReportTail | None = None


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

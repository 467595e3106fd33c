"""What a run is measured on and against, before any kernel exists.

The adapter (and the NVML GPU it was found to be), its calibrated roofline and the
workload are fixed for the whole run: every later number is read against them. They
open a recording (:class:`SessionStarted`, then :class:`CalibrationReady`), so they
live together, apart from the per-kernel events that follow.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from vajra_tui.engine.events.base import SCHEMA_VERSION, BaseEvent, Model, TimingMethod


class NvmlMatch(Model):
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


NVIDIA_VENDOR_ID = 0x10DE  # PCI vendor id; every NVIDIA GPU runs 32-lane subgroups (warps)


class DeviceInfo(Model):
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

    def least_subgroup(self) -> int:
        """The fewest lanes a subgroup here can have, 0 without subgroups. wgpu reports its
        generic 4..128 on Vulkan when the driver gives no range (the H200 says 4), which
        would keep every 8-lane shuffle off a GPU whose warps are 32 wide: a hardware NVIDIA
        adapter gets 32. A wrong floor could only produce wrong outputs, which verification
        rejects; the library's templates and the model's prompt both read it here."""
        if not self.subgroups:
            return 0
        reported = self.subgroup_min_size or 4
        return max(reported, 32) if self.vendor_id == NVIDIA_VENDOR_ID and not self.software else reported


class Calibration(Model):
    """Measured ceilings of one adapter: the roofline every result is judged by."""

    copy_gbps: float
    fma_gflops: float
    launch_floor_ms: float
    method: TimingMethod = "wall"
    device_key: str = ""
    driver: str = ""
    measured_at: float | None = None  # unix time; the age a screen shows
    checked_at: float | None = None  # unix time of its last quick copy check (store/calibration_cache.py)
    copy_shape: int | None = None  # vec4s per invocation of the fastest copy kernel


class WorkloadInfo(Model):
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


class SessionStarted(BaseEvent):
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
    fresh_seed: int | None = None  # drawn for this run: the inputs kernels are timed on; a crown verifies on it
    # The limits a crowned kernel must fit: WebGPU's defaults ("portable") or this adapter's
    # (None: a recording made before the choice existed, when it was always the adapter's).
    limits: Literal["portable", "adapter"] | None = None


class CalibrationReady(BaseEvent):
    type: Literal["calibration"] = "calibration"
    calibration: Calibration
    cached: bool = False

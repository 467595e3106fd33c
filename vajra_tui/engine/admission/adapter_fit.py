"""Can this adapter run this workload at this size? Asked before any buffer is made.

Two things stop a run that no kernel could fix: a feature the workload needs and the
adapter lacks (an f16 binding without ``shader-f16``), and a binding larger than the
adapter lets one buffer, or one storage binding, be. The second used to surface as the
GPU worker's ``GPUValidationError`` from ``createBuffer``: a driver's words for what is a
``--size`` the user can change.
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.workloads import Size, Workload
from vajra_tui.engine.workloads.base import padded

# What WebGPU guarantees when an adapter reports nothing (the spec's default limits).
DEFAULT_LIMITS = {"max-buffer-size": 1 << 28, "max-storage-buffer-binding-size": 1 << 27}


def missing_features(workload: Workload, device: DeviceInfo) -> str | None:
    """Why this adapter cannot run the workload (an f16 binding without shader-f16), or None."""
    missing = sorted(f for f in workload.features if f not in device.enabled_features)
    if not missing:
        return None
    dtypes = sorted({b.dtype for b in workload.bindings if b.dtype == "f16"})
    return (f"{workload.name} has {', '.join(dtypes)} bindings, which need {', '.join(missing)}; "
            f"{device.name} does not offer it")


def binding_bytes(workload: Workload, size: Size) -> dict[str, int]:
    """Each binding's buffer at ``size``, in bytes, as the worker allocates it (whole words)."""
    lengths = workload.checked_lengths(size)
    return {b.name: padded(b.width * lengths[b.name]) for b in workload.storage}


def oversized(workload: Workload, size: Size, device: DeviceInfo) -> str | None:
    """Why a binding at ``size`` cannot exist on this adapter, or None: the largest one named,
    with what it needs and what the adapter allows."""
    needs = binding_bytes(workload, size)
    name, largest = max(needs.items(), key=lambda item: item[1])
    for limit in ("max-storage-buffer-binding-size", "max-buffer-size"):
        allowed = int(device.limits.get(limit) or DEFAULT_LIMITS[limit])
        if largest > allowed:
            return (f"{workload.name} at {workload.label(size)}: binding {name!r} needs {_bytes(largest)}, "
                    f"and {device.name} allows {_bytes(allowed)} ({limit}); choose a smaller size")
    return None


def _bytes(n: int) -> str:
    value, unit = float(n), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if value < 1024 or unit == "EiB":
            break
        value /= 1024
    return f"{n} B" if unit == "B" else f"{value:.3g} {unit}"

"""Number formatting for display. Only formatting: every value arrives derived."""

from __future__ import annotations

from ..engine.events import DeviceInfo, WorkloadInfo

DASH = "—"


def num(value: float | None, digits: int = 2, unit: str = "") -> str:
    if value is None:
        return DASH
    text = f"{value:,.{digits}f}"
    return f"{text} {unit}".rstrip()


def ms(value: float | None) -> str:
    if value is None:
        return DASH
    return f"{value:.3f}" if value < 10 else f"{value:.2f}" if value < 1000 else f"{value:,.0f}"


def speedup(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}×"


def pct(value: float | None) -> str:
    return DASH if value is None else f"{value:.1f}%"


def sci(value: float | None) -> str:
    return DASH if value is None else f"{value:.2e}"


def si(value: float, unit: str) -> str:
    """268435456 → '268 M' + unit (for FLOPs and bytes on the picker)."""
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def dims(values: list[int] | tuple[int, ...]) -> str:
    return "×".join(str(v) for v in values) if values else DASH


def size_text(size: dict[str, int]) -> str:
    return "×".join(str(v) for v in size.values())


def device_label(device: DeviceInfo | None) -> str:
    """'llvmpipe (vulkan) — SOFTWARE adapter: CPU timings' when software."""
    if device is None:
        return "no adapter"
    backend = f" ({device.backend})" if device.backend else ""
    flag = " — SOFTWARE adapter: CPU timings" if device.software else ""
    return f"{device.name}{backend}{flag}"


def workload_label(workload: WorkloadInfo | None) -> str:
    if workload is None:
        return ""
    size = " ".join(f"{k}={v}" for k, v in workload.size.items())
    return f"{workload.name} {size}"

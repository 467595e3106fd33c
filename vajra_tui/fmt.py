"""Number formatting for display. Only formatting: every value arrives derived."""

from __future__ import annotations

import math
import time

from vajra_tui.engine.events import BatchTelemetry, Calibration, CandidateResult, DeviceInfo, WorkloadInfo

DASH = "—"


def num(value: float | None, digits: int = 2, unit: str = "") -> str:
    if value is None:
        return DASH
    text = f"{value:,.{digits}f}"
    return f"{text} {unit}".rstrip()


def ms(value: float | None) -> str:
    """A duration given in ms, with its unit, at the precision it has.

    Below a millisecond it reads in µs with three significant digits (0.0198 ms is
    "19.8 µs", 0.00004 ms "0.0400 µs"), so two GPU times never collapse into the
    same "0.020" and a statistic that is not zero never reads as zero.
    """
    if value is None:
        return DASH
    if value == 0:
        return "0 µs"
    magnitude = abs(value)
    if magnitude < 0.9995:  # 0.99999 ms reads as 1.00 ms, not 1000 µs
        return f"{_sig3(value * 1e3)} µs"
    if magnitude < 999.5:  # 999.7 ms reads as 1.00 s, not 1000 ms
        return f"{_sig3(value)} ms"
    # seconds keep three significant digits too: 1000 ms is "1.00 s" beside "1.13 s" (the
    # old "3g" dropped the zeros, so one view read "1 s" next to "1.13 s")
    seconds = value / 1e3
    return f"{_sig3(seconds)} s" if abs(seconds) < 99.95 else f"{seconds:,.0f} s"


def _sig3(value: float) -> str:
    """Three significant digits, trailing zeros kept (19.80 → '19.8', 0.04 → '0.0400')."""
    digits = max(0, 2 - int(math.floor(math.log10(abs(value))))) if value else 0
    text = f"{value:.{digits}f}"
    if digits and abs(float(text)) >= 10 ** (3 - digits):  # rounded up a decade: 9.999 is "10.0"
        text = f"{value:.{digits - 1}f}"
    return text


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
    """'llvmpipe (vulkan) · SOFTWARE (CPU timings)' when software: short enough that the flag
    never wraps at 80 columns, where it used to split off "timings" on every screen."""
    if device is None:
        return "no adapter"
    backend = f" ({device.backend})" if device.backend else ""
    flag = " · SOFTWARE (CPU timings)" if device.software else ""
    index = f"#{device.adapter_index} " if device.adapter_index is not None else ""  # what --adapter takes
    return f"{index}{device.name}{backend}{flag}"


def workload_label(workload: WorkloadInfo | None) -> str:
    if workload is None:
        return ""
    size = " ".join(f"{k}={v}" for k, v in workload.size.items())
    return f"{workload.name} {size}"


def calibration_note(cal: Calibration, cached: bool, now: float | None = None, recorded: bool = False) -> str:
    """'cached, measured 3 h ago on Mesa 22.3.6': how old the roofline is, and on which driver;
    a replay's is 'recorded, measured 2026-12-01 23:50 UTC' (when the recording was made)."""
    parts = ["cached" if cached else "measured now"]
    if recorded:
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(cal.measured_at)) if cal.measured_at else ""
        parts = ["recorded" + (f", measured {stamp}" if stamp else "")]
    elif cached and cal.measured_at:
        parts[0] += f", measured {age((now or time.time()) - cal.measured_at)} ago"
    elif cached:
        parts[0] += ", age unknown"
    if cal.driver:
        parts.append(f"driver {cal.driver}")
    return "; ".join(parts)


def age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{max(seconds, 0):.0f} s"


def telemetry(t: BatchTelemetry | None) -> str:
    """'SM 1980→1965 MHz · mem 3201 MHz · 412 W · 51 °C', flagged when the clock moved."""
    if t is None:
        return "no telemetry recorded"
    if t.source == "none" or t.first is None or t.last is None:
        return t.note or "no telemetry"
    text = (f"SM {t.first.sm_clock_mhz:.0f}→{t.last.sm_clock_mhz:.0f} MHz · mem "
            f"{t.last.mem_clock_mhz:.0f} MHz · {t.last.power_w:.0f} W · {t.last.temperature_c:.0f} °C")
    if t.warmed_ms:
        text += f" · clock brought up in {t.warmed_ms:.0f} ms"
    return text + (" · CLOCK MOVED >10%" if t.unstable else "") + (f" · {t.note}" if t.note else "")


_LEANED_ON = (("maxComputeInvocationsPerWorkgroup", "invocations"),
              ("maxComputeWorkgroupStorageSize", "B workgroup storage"))


def browser_line(result: CandidateResult) -> str:
    """What a browser said of a kernel's export, in one line for the CLI table and the report
    card alike: judge, adapter, the limits it leans on, features used, compile messages, its
    median there. A refusal or rejection is said as the judge worded it (judge and adapter
    included), an unjudged export as unchecked with why; "" when nothing was asked."""
    verdict = result.browser
    if not result.browser_judge:
        return f"browser: {verdict}" if verdict.startswith("unchecked") else ""
    if verdict.startswith(("browser-refused", "browser-rejected")):
        return f"browser: {verdict}"
    parts = [f"browser: {verdict or 'unchecked'} in {result.browser_judge}"]
    if result.browser_adapter:
        parts.append(f" on {result.browser_adapter}")
    told = [f"{result.browser_limits[k]} {label}" for k, label in _LEANED_ON if k in result.browser_limits]
    if told:
        parts.append(f" (limits {', '.join(told)})")
    if result.browser_used_features:
        parts.append(f"; uses {', '.join(result.browser_used_features)}")
    messages = result.browser_messages
    if messages:
        first = messages[0]
        parts.append(f"; {len(messages)} compile message{'s' if len(messages) != 1 else ''}, first "
                     f"{first.line}:{first.column} {first.message}")
    else:
        parts.append("; compiles clean")
    if result.browser_ms is not None:
        parts.append(f"; {ms(result.browser_ms)} there")
    return "".join(parts)

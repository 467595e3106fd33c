"""GPU clocks, power and temperature around each timed batch, where the driver tells them.

A batch timed while the SM clock ramps or throttles is not comparable with one
timed at full clock, and nothing in the timestamps says so. On NVIDIA, NVML
(``nvidia-ml-py``) reports the clocks; a batch whose SM clock moved by more than
10% between its first and last sample is flagged. Elsewhere there is no
telemetry, and the result says so rather than showing zeros.

A batch is one submission, so the clock it starts at is the clock the GPU idled down to
while the host verified the previous one (345 MHz on an idle H100; batches that began at
870-1560 MHz on it, benchmarks/NOTES.md round 13, which likely also made a conv1d call on an
H200 time every kernel 2.5-4x slow). ``bring_up`` runs the batch's own kernels, untimed,
until NVML reports the SM clock near its maximum (or half a second has passed), and the
batch's telemetry says how long that took. It runs where ``TimingSettings.clock_bring_up``
asks, on by default since round 14 measured it on an H100 (0.40 s after 5 s idle, every batch
then at full clock; no cost measurable in the nine-workload seed tune).
"""

from __future__ import annotations

import time
from typing import Callable

from vajra_tui.engine.events import BatchTelemetry, DeviceInfo, TelemetrySample

NVIDIA_VENDOR_ID = 0x10DE
CLOCK_DRIFT_LIMIT = 0.10
CLOCK_SHARE = 0.9  # a batch starts once the SM clock is at least this share of its maximum
BRING_UP_S = 0.5  # the most time spent bringing the clock up before one batch
MAX_COPIES = 256  # the untimed kernels' copies in one submission, doubled from 1
STEP_S = 0.025
"""A submission that takes longer is not doubled again: the clock is read at least this often.
An H100 ramps from 345 to 1980 MHz within one 200 ms sample, yet whole doubled submissions
took the bring-up to 0.40 s after an idle spell (benchmarks/NOTES.md, round 14)."""


class Telemetry:
    """Samples one GPU through NVML; ``available`` is False where NVML cannot see it."""

    def __init__(self, device: DeviceInfo, nvml_index: int | None = None) -> None:
        self.reason = ""
        self._handle = None
        self._nvml = None
        if device.vendor_id != NVIDIA_VENDOR_ID:
            self.reason = "no telemetry: not an NVIDIA adapter"
            return
        try:
            import pynvml

            pynvml.nvmlInit()
            count = pynvml.nvmlDeviceGetCount()
            index = nvml_index if nvml_index is not None else 0
            if count > 1 and nvml_index is None:
                self.reason = f"telemetry from NVML GPU 0 of {count} (adapter not matched to a GPU)"
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            self._nvml = pynvml
            self.index = index
        except Exception as exc:  # noqa: BLE001 - no library, no driver, no permission
            self.reason = f"no telemetry: NVML unavailable ({type(exc).__name__})"

    @property
    def available(self) -> bool:
        return self._handle is not None

    def max_sm_mhz(self) -> float | None:
        """The SM clock's maximum (boost) as the driver reports it, or None."""
        if self._handle is None:
            return None
        try:
            return float(self._nvml.nvmlDeviceGetMaxClockInfo(self._handle, self._nvml.NVML_CLOCK_SM))
        except Exception:  # noqa: BLE001 - no maximum reported: nothing to bring the clock up to
            return None

    def sample(self) -> TelemetrySample | None:
        if self._handle is None:
            return None
        nv, h = self._nvml, self._handle
        try:
            return TelemetrySample(
                t=time.time(),
                sm_clock_mhz=float(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
                mem_clock_mhz=float(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
                power_w=nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
                temperature_c=float(nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
            )
        except Exception:  # noqa: BLE001 - a sample that fails is a missing sample
            return None


def bring_up(sample: Callable[[], TelemetrySample | None], top_mhz: float | None,
             run: Callable[[int], None], budget_s: float = BRING_UP_S,
             clock: Callable[[], float] = time.perf_counter) -> tuple[float, str]:
    """Run ``run(copies)`` (the batch's kernels, untimed, ``copies`` times in one submission,
    doubling while a submission takes less than STEP_S) until ``sample`` shows the SM clock at
    CLOCK_SHARE of ``top_mhz`` or ``budget_s`` has passed. Returns (milliseconds spent, a note when the clock stayed low);
    (0, "") where the clock was up already or nothing reports it."""
    now = sample()
    if now is None or not top_mhz or now.sm_clock_mhz >= CLOCK_SHARE * top_mhz:
        return 0.0, ""
    began, copies = clock(), 1
    while now is not None and now.sm_clock_mhz < CLOCK_SHARE * top_mhz:
        if clock() - began > budget_s:
            return (clock() - began) * 1e3, (f"SM clock {now.sm_clock_mhz:.0f} of {top_mhz:.0f} MHz after "
                                             f"{budget_s:.1f} s of untimed warm-up")
        submitted = clock()
        run(copies)
        if clock() - submitted < STEP_S:
            copies = min(2 * copies, MAX_COPIES)
        now = sample()
    return (clock() - began) * 1e3, ""


def summarize(first: TelemetrySample | None, last: TelemetrySample | None,
              reason: str = "", warmed_ms: float = 0.0) -> BatchTelemetry:
    """The batch's first and last samples, and whether its SM clock held steady."""
    if first is None or last is None:
        return BatchTelemetry(source="none", note=reason or "no telemetry")
    drift = abs(last.sm_clock_mhz - first.sm_clock_mhz) / max(first.sm_clock_mhz, 1.0)
    return BatchTelemetry(source="nvml", first=first, last=last, sm_clock_drift=drift,
                          unstable=drift > CLOCK_DRIFT_LIMIT, note=reason, warmed_ms=warmed_ms)

"""GPU clocks, power and temperature around each timed batch, where the driver tells them.

A batch timed while the SM clock ramps or throttles is not comparable with one
timed at full clock, and nothing in the timestamps says so. On NVIDIA, NVML
(``nvidia-ml-py``) reports the clocks; a batch whose SM clock moved by more than
10% between its first and last sample is flagged. Elsewhere there is no
telemetry, and the result says so rather than showing zeros.
"""

from __future__ import annotations

import time

from vajra_tui.engine.events import BatchTelemetry, DeviceInfo, TelemetrySample

NVIDIA_VENDOR_ID = 0x10DE
CLOCK_DRIFT_LIMIT = 0.10


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


def summarize(first: TelemetrySample | None, last: TelemetrySample | None,
              reason: str = "") -> BatchTelemetry:
    """The batch's first and last samples, and whether its SM clock held steady."""
    if first is None or last is None:
        return BatchTelemetry(source="none", note=reason or "no telemetry")
    drift = abs(last.sm_clock_mhz - first.sm_clock_mhz) / max(first.sm_clock_mhz, 1.0)
    return BatchTelemetry(source="nvml", first=first, last=last, sm_clock_drift=drift,
                          unstable=drift > CLOCK_DRIFT_LIMIT, note=reason)

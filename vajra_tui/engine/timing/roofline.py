"""The roofline a session judges every result by: the cached one while it holds, else measured.

A cached calibration is checked with a quick copy at the start of a session, unless it was
checked minutes ago on a software adapter (store/calibration_cache.py says why), and measured
again when that copy rate is too far off. Kept apart from the session, which only asks for it.
"""

from __future__ import annotations

from typing import Callable

from vajra_tui.engine.events import Calibration, CalibrationReady, DeviceInfo, Event, Notice
from vajra_tui.engine.gpu.protocol import Calibrate, QuickCopy
from vajra_tui.engine.scale.lane import Lane
from vajra_tui.engine.store import calibration_cache

PREPARE_TIMEOUT_S = 900.0  # the worker's own setup (calibration); the workload's code has timing.prepare_deadline_s
RECALIBRATE_DRIFT = 0.15  # a cached roofline whose copy rate is further off than this is redone
# On a software adapter the copy is CPU work, and its rate moves by a third with the machine's
# load from one run to the next (0.063 to 0.087 GB/s back to back on a busy 2-core box): a
# roofline measured again under that load is no truer, and took seconds every run.
SOFTWARE_RECALIBRATE_DRIFT = 0.5


def _rate(gbps: float) -> str:
    """Three figures at any scale: "0.3 GB/s is 22% off the cached 0.3 GB/s" said nothing."""
    return f"{gbps:,.0f}" if gbps >= 100 else f"{gbps:.3g}"


async def roofline(client: Lane, device: DeviceInfo, emit: Callable[[Event], None]) -> Calibration:
    """The cached roofline, unless a quick copy check finds it more than 15% off (50% on a
    software adapter, whose roofline checked in the last minutes is not checked again)."""
    cached = calibration_cache.load(device)
    if cached is not None and not calibration_cache.needs_check(cached, device.software):
        emit(CalibrationReady(calibration=cached, cached=True))  # checked minutes ago
        return cached
    if cached is not None:
        quick = (await client.request(QuickCopy(shape=cached.copy_shape), PREPARE_TIMEOUT_S)).copy_gbps
        drift = abs(quick - cached.copy_gbps) / max(cached.copy_gbps, 1e-9)
        if drift <= (SOFTWARE_RECALIBRATE_DRIFT if device.software else RECALIBRATE_DRIFT):
            checked = calibration_cache.mark_checked(device, cached)
            emit(CalibrationReady(calibration=checked, cached=True))
            return checked
        emit(Notice(level="warning", message=(
            f"copy rate {_rate(quick)} GB/s is {drift:.0%} off the cached "
            f"{_rate(cached.copy_gbps)} GB/s: calibrating again")))
    fresh = (await client.request(Calibrate(), PREPARE_TIMEOUT_S)).calibration
    fresh.device_key = calibration_cache.key(device)
    fresh.checked_at = fresh.measured_at
    calibration_cache.store(device, fresh)
    emit(CalibrationReady(calibration=fresh, cached=False))
    return fresh

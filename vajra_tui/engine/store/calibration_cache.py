"""Per-adapter cache of calibration results in the user's cache directory.

A cached roofline is checked with a quick copy at each session start (timing/roofline.py). On a
software adapter that check is CPU work of its own (two 32 MiB buffers copied seven times:
about 1.3 CPU-seconds on lavapipe), so there a roofline checked in the last
``SOFTWARE_CHECK_FRESH_S`` seconds is trusted as it is: a script's or a test suite's runs in a
row pay for the check once every few minutes, not once a run. A GPU's check costs
milliseconds, and its clocks move within minutes, so a GPU is checked every time.
"""

from __future__ import annotations

import time
from pathlib import Path

from vajra_tui.config_env import flag_set
from vajra_tui.settings import cache_dir
from vajra_tui.engine.store import damage
from vajra_tui.engine.events import Calibration, DeviceInfo

SOFTWARE_CHECK_FRESH_S = 300.0  # a software adapter's roofline checked this recently is not checked again


def key(device: DeviceInfo) -> str:
    return f"{device.name}|{device.driver}|{device.backend}|{device.vendor_id:x}:{device.device_id:x}"


def _path() -> Path:
    return cache_dir() / "calibration.json"


def load(device: DeviceInfo) -> Calibration | None:
    if flag_set("VAJRA_RECALIBRATE"):
        return None
    entry = damage.read_json(_path()).get(key(device))
    try:
        return Calibration(**entry) if entry else None
    except (TypeError, ValueError):
        return None


def store(device: DeviceInfo, cal: Calibration) -> None:
    """Keep it for the next run; a damaged cache folder costs a recalibration, never the run."""
    data = damage.read_json(_path())
    data[key(device)] = cal.model_dump()
    damage.write_json(_path(), data, "the calibration", "the roofline is measured again")


def needs_check(cal: Calibration, software: bool, now: float | None = None) -> bool:
    """Whether ``cal`` gets a quick copy check before it is used (see the module's docstring)."""
    if not software or cal.checked_at is None:
        return True
    age = (time.time() if now is None else now) - cal.checked_at
    return not 0.0 <= age <= SOFTWARE_CHECK_FRESH_S  # a clock set back reads as stale


def mark_checked(device: DeviceInfo, cal: Calibration) -> Calibration:
    """``cal`` stamped as checked now, and kept so."""
    checked = cal.model_copy(update={"checked_at": time.time()})
    store(device, checked)
    return checked

"""Per-adapter cache of calibration results in the user's cache directory."""

from __future__ import annotations

from pathlib import Path

from vajra_tui.config_env import flag_set
from vajra_tui.settings import cache_dir
from vajra_tui.engine.store import damage
from vajra_tui.engine.events import Calibration, DeviceInfo


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

"""Per-adapter cache of calibration results in the user's cache directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..settings import cache_dir
from .atomic import atomic_write
from .events import Calibration, DeviceInfo


def key(device: DeviceInfo) -> str:
    return f"{device.name}|{device.driver}|{device.backend}|{device.vendor_id:x}:{device.device_id:x}"


def _path() -> Path:
    return cache_dir() / "calibration.json"


def _read() -> dict[str, dict]:
    try:
        data = json.loads(_path().read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def load(device: DeviceInfo) -> Calibration | None:
    if os.environ.get("VAJRA_RECALIBRATE"):
        return None
    entry = _read().get(key(device))
    try:
        return Calibration(**entry) if entry else None
    except (TypeError, ValueError):
        return None


def store(device: DeviceInfo, cal: Calibration) -> None:
    data = _read()
    data[key(device)] = cal.model_dump()
    atomic_write(_path(), json.dumps(data, indent=2))

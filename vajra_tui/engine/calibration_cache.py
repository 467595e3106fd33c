"""Per-adapter cache of calibration results in the user's cache directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..safe_text import one_line
from ..settings import cache_dir
from . import damage
from .atomic import atomic_write
from .events import Calibration, DeviceInfo


def key(device: DeviceInfo) -> str:
    return f"{device.name}|{device.driver}|{device.backend}|{device.vendor_id:x}:{device.device_id:x}"


def _path() -> Path:
    return cache_dir() / "calibration.json"


def _read() -> dict[str, dict]:
    try:
        data = json.loads(_path().read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):  # missing, a directory, not JSON, not UTF-8: no cache
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
    """Keep it for the next run; a damaged cache folder costs a recalibration, never the run."""
    path = _path()
    if not damage.file_slot(path, "the calibration"):
        return
    data = _read()
    data[key(device)] = cal.model_dump()
    try:
        atomic_write(path, json.dumps(data, indent=2))
    except OSError as exc:
        damage.note(f"cannot write {one_line(path)} ({one_line(exc.strerror or exc)}): the roofline "
                    "is measured again next run")

"""The NVML probe's mapping (adapter index -> NVML GPU), kept for the rest of the boot.

The probe (identify.py) keeps each NVIDIA adapter busy for about a second, one at a time:
on 2xH200 it cost ~4 s before every ``tune --gpus``, and would cost ~10 s on eight GPUs.
The mapping cannot change while nothing that decides it changes, so it is probed once and
read back from ``probe.json`` in the user cache folder until one of these changes:

* the boot (``/proc/sys/kernel/random/boot_id``; where it cannot be read, nothing is cached);
* an environment variable that reorders or filters Vulkan/CUDA enumeration
  (:data:`ENV_KEYS`; ``VAJRA_ADAPTER`` is not one: it chooses, it does not enumerate);
* the adapter list itself (each adapter's index, name, backend, type, driver, vendor and
  device ids), the wgpu version, and the NVIDIA GPUs this host or container exposes
  (``/proc/driver/nvidia/gpus`` and ``/dev/nvidiaN``: a cache folder shared by containers
  that see different GPUs of one host does not mix them up).

Not guaranteed: a driver unloaded and reloaded without a reboot (same version, same GPUs)
is not detected. ``vajra-tui devices --probe`` always probes afresh and rewrites the
mapping: that is how to refresh it. A reused match says so (``cached``, ``probed_at``) in
the device info that results and recordings keep. A damaged cache file is ignored and
rewritten by the next probe; it never fails a run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from vajra_tui.settings import cache_dir
from vajra_tui.engine.store import damage
from vajra_tui.engine.events import NvmlMatch
from vajra_tui.engine.gpu.adapter_entry import AdapterEntry

VERSION = 1
MAX_KEYS = 16  # environments kept per boot (each CUDA_VISIBLE_DEVICES a user tries is one)
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
ENV_KEYS = (
    # CUDA/container GPU selection: measured to reorder NVIDIA's Vulkan adapters
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES",
    # which Vulkan drivers the loader loads, and how it sorts and filters their devices
    "VK_ICD_FILENAMES", "VK_DRIVER_FILES", "VK_ADD_DRIVER_FILES",
    "VK_LOADER_DRIVERS_SELECT", "VK_LOADER_DRIVERS_DISABLE", "VK_LOADER_DEVICE_SELECT",
    "VK_LOADER_DISABLE_SELECT", "VK_INSTANCE_LAYERS", "VK_LOADER_LAYERS_ENABLE",
    "VK_LOADER_LAYERS_DISABLE",
    # Mesa's device-select layer and PRIME offload put another GPU first
    "MESA_VK_DEVICE_SELECT", "MESA_VK_DEVICE_SELECT_FORCE_DEFAULT_DEVICE", "DRI_PRIME",
    "__NV_PRIME_RENDER_OFFLOAD", "__NV_PRIME_RENDER_OFFLOAD_PROVIDER", "__VK_LAYER_NV_optimus",
    # which wgpu-native library enumerates, and through which backend
    "WGPU_LIB_PATH", "WGPU_BACKEND_TYPE",
)
_IDENTITY = ("index", "name", "backend", "adapter_type", "driver", "vendor_id", "device_id", "software")


def path() -> Path:
    return cache_dir() / "probe.json"


def boot_id() -> str | None:
    """This boot's id, or None (not Linux, no /proc): then the probe runs every time."""
    try:
        text = BOOT_ID.read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None
    return text or None


def _wgpu_version() -> str:
    try:
        return metadata.version("wgpu")
    except metadata.PackageNotFoundError:
        return ""


def _host_gpus() -> list[str]:
    """The NVIDIA GPUs visible here by bus id and device node (what a container was given)."""
    names: list[str] = []
    for folder, pattern in ((Path("/proc/driver/nvidia/gpus"), r".+"), (Path("/dev"), r"nvidia\d+")):
        try:
            names += sorted(f"{folder}/{n}" for n in os.listdir(folder) if re.fullmatch(pattern, n))
        except OSError:
            pass
    return names


def key(entries: list[AdapterEntry]) -> str | None:
    """What the mapping depends on, as one hash; None where the boot cannot be told."""
    boot = boot_id()
    if boot is None:
        return None
    parts = {"boot": boot, "env": {k: os.environ[k] for k in ENV_KEYS if k in os.environ},
             "adapters": [[getattr(e, f) for f in _IDENTITY] for e in entries],
             "wgpu": _wgpu_version(), "gpus": _host_gpus()}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _read() -> dict[str, Any]:
    """The cache's environments by key; {} for a missing or damaged file (rebuilt on store)."""
    data = damage.read_json(path())
    if data.get("version") != VERSION or not isinstance(data.get("keys"), dict):
        return {}
    return {k: v for k, v in data["keys"].items()
            if isinstance(v, dict) and isinstance(v.get("matches"), dict)}


def _match(raw: Any) -> NvmlMatch | None:
    try:
        return NvmlMatch.model_validate(raw) if isinstance(raw, dict) else None
    except ValueError:  # pydantic's ValidationError: a damaged entry is a miss
        return None


def load(entries: list[AdapterEntry], indices: Iterable[int]) -> dict[int, NvmlMatch]:
    """The cached matches among ``indices`` for this listing and environment, marked cached."""
    k = key(entries)
    if k is None:
        return {}
    stored = _read().get(k, {}).get("matches", {})
    found: dict[int, NvmlMatch] = {}
    for index in indices:
        match = _match(stored.get(str(index)))
        if match is not None:
            found[index] = match.model_copy(update={"cached": True})
    return found


def store(entries: list[AdapterEntry], probed: Iterable[int], matches: dict[int, NvmlMatch]) -> None:
    """Merge a probe's result: each index in ``probed`` now maps to its match, or to nothing
    (a probe that found no GPU drops the old answer too: a refresh replaces, never keeps)."""
    k = key(entries)
    if k is None:
        return
    boot, data = boot_id(), _read()
    mine = dict(data.get(k, {}).get("matches", {}))
    for index in probed:
        mine.pop(str(index), None)
    mine.update({str(i): m.model_copy(update={"cached": False}).model_dump() for i, m in matches.items()})
    if not mine and k not in data:
        return  # nothing to remember (no NVIDIA adapter, no NVML): no file either
    keep = {key_: v for key_, v in data.items() if v.get("boot") == boot and key_ != k}
    keep[k] = {"boot": boot, "stored_at": time.time(), "matches": mine}
    newest = sorted(keep.items(), key=lambda kv: _stamp(kv[1]), reverse=True)[:MAX_KEYS]
    damage.write_json(path(), {"version": VERSION, "keys": dict(newest)}, "the NVML probe's mapping",
                      "NVIDIA adapters are probed again")


def _stamp(entry: dict[str, Any]) -> float:
    value = entry.get("stored_at")
    return float(value) if isinstance(value, (int, float)) else 0.0

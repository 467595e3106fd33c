"""The :class:`DeviceInfo` of a wgpu adapter: its identity, features and compute limits.

Below both runtime.py (the worker's adapter) and adapters.py (whose listing child
describes every adapter): each imports this, neither imports the other for it.
runtime.py re-exports :func:`device_info`, where the doctor and the TUI's probe ask for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.gpu.adapter_entry import SOFTWARE_HINTS

if TYPE_CHECKING:
    import wgpu


def device_info(adapter: wgpu.GPUAdapter, enabled: list[str] | None = None,
                index: int | None = None) -> DeviceInfo:
    """What every result and recording says about the adapter; ``enabled``: the features
    requested on its device, ``index``: its position in wgpu's enumeration."""
    info = adapter.info
    name = info.get("device", "") or info.get("description", "") or "unknown adapter"
    kind = str(info.get("adapter_type", ""))
    software = kind.lower() == "cpu" or any(h in name.lower() for h in SOFTWARE_HINTS)
    features = sorted(str(f) for f in adapter.features)
    keys = [
        "max-compute-workgroup-storage-size", "max-compute-invocations-per-workgroup",
        "max-compute-workgroups-per-dimension", "max-compute-workgroup-size-x",
        "max-compute-workgroup-size-y", "max-storage-buffer-binding-size", "max-buffer-size",
    ]
    return DeviceInfo(
        name=name,
        vendor=str(info.get("vendor", "")),
        vendor_id=int(info.get("vendor_id", 0) or 0),
        device_id=int(info.get("device_id", 0) or 0),
        backend=str(info.get("backend_type", "")),
        adapter_type=kind,
        driver=str(info.get("description", "")),
        software=software,
        features=features,
        limits={k: int(adapter.limits[k]) for k in keys if k in adapter.limits},
        timestamp_query="timestamp-query" in features,
        subgroups="subgroup" in features,
        enabled_features=sorted(enabled or []),
        subgroup_min_size=_subgroup_size(info, "min"),
        subgroup_max_size=_subgroup_size(info, "max"),
        adapter_index=index,
    )


def _subgroup_size(info: dict, which: str) -> int | None:
    """wgpu-native reports the subgroup size range in its adapter info (under either spelling)."""
    for key in (f"subgroup_{which}_size", f"stackgroup_{which}_size"):
        value = info.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None

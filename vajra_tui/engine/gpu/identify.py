"""Which physical GPU an adapter index is, found by a short probe rather than by trust.

wgpu gives identical GPUs identical info and no PCI bus id or UUID, and its order moves
with the environment (see adapters.py). NVML knows bus ids and UUIDs but not wgpu's
order. The bridge: run a busy kernel on one adapter for about a second and see which NVML
GPU's utilization rises. The probe runs one adapter at a time, before any worker starts,
so nothing else of ours loads a GPU meanwhile; another user's job on the same host can
still blur it, which ``rise`` against ``runner_up`` shows.

Without NVML (no NVIDIA driver, lavapipe) there is nothing to probe: the mapping is empty.
Each match carries the time it was probed; :mod:`.probe_cache` keeps the mapping for the
rest of the boot, so a tune probes only adapters it has not seen in this environment.
"""

from __future__ import annotations

import time
from typing import Any

from vajra_tui.engine.events import NvmlMatch
from vajra_tui.engine.gpu.adapter_entry import AdapterEntry

NVIDIA_VENDOR_ID = 0x10DE
PROBE_S = 1.2
SAMPLE_S = 0.05
WORKGROUPS = 4096  # x 256 invocations x 4096 FMAs, 8 dispatches a submission: ~1 ms on an H200

_BUSY = """
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var x = f32(id.x) * 1e-7;
    for (var i = 0u; i < 4096u; i = i + 1u) { x = fma(x, 0.9999, 1e-4); }
    out[id.x] = x;
}
"""


def _nvml() -> Any | None:
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    except Exception:  # noqa: BLE001 - no library, no driver, no permission: nothing to probe
        return None


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _gpu(nv: Any, index: int) -> dict[str, Any]:
    h = nv.nvmlDeviceGetHandleByIndex(index)
    return {"index": index, "handle": h, "name": _text(nv.nvmlDeviceGetName(h)),
            "pci_bus_id": _text(nv.nvmlDeviceGetPciInfo(h).busId), "uuid": _text(nv.nvmlDeviceGetUUID(h))}


def probe_all(adapters: list[Any], entries: list[AdapterEntry]) -> dict[int, NvmlMatch]:
    """Adapter index -> the NVML GPU it runs on, for every NVIDIA hardware adapter."""
    targets = [e for e in entries if e.vendor_id == NVIDIA_VENDOR_ID and not e.software]
    nv = _nvml() if targets else None
    if nv is None:
        return {}
    try:
        gpus = [_gpu(nv, i) for i in range(nv.nvmlDeviceGetCount())]
    except Exception:  # noqa: BLE001
        return {}
    if len(gpus) == 1:  # nothing to tell apart
        g = gpus[0]
        return {e.index: NvmlMatch(index=0, pci_bus_id=g["pci_bus_id"], uuid=g["uuid"], name=g["name"],
                                   method="only NVML GPU", probed_at=time.time()) for e in targets}
    found: dict[int, NvmlMatch] = {}
    for entry in targets:
        try:
            match = probe_one(nv, gpus, adapters[entry.index])
        except Exception:  # noqa: BLE001 - a probe that fails leaves that adapter unmatched
            match = None
        if match is not None:
            found[entry.index] = match
    return found


def probe_one(nv: Any, gpus: list[dict[str, Any]], adapter: Any) -> NvmlMatch | None:
    """Keep ``adapter`` busy for PROBE_S and return the GPU whose utilization rose most."""
    import wgpu

    device = adapter.request_device_sync()
    n = 256 * WORKGROUPS
    buf = device.create_buffer(size=4 * n, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    module = device.create_shader_module(code=_BUSY)
    pipeline = device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
    group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0),
                                     entries=[{"binding": 0, "resource": {"buffer": buf}}])
    before = {g["index"]: _util(nv, g) for g in gpus}
    peak = dict(before)
    end = time.perf_counter() + PROBE_S
    while time.perf_counter() < end:
        encoder = device.create_command_encoder()
        pass_ = encoder.begin_compute_pass()
        pass_.set_pipeline(pipeline)
        pass_.set_bind_group(0, group)
        for _ in range(8):
            pass_.dispatch_workgroups(n // 256)
        pass_.end()
        device.queue.submit([encoder.finish()])
        _wait(device, buf)
        for g in gpus:
            peak[g["index"]] = max(peak[g["index"]], _util(nv, g))
        time.sleep(SAMPLE_S)
    rises = sorted(((peak[i] - before[i], i) for i in peak), reverse=True)
    best_rise, best = rises[0]
    if best_rise <= 0:
        return None
    g = gpus[best]
    return NvmlMatch(index=best, pci_bus_id=g["pci_bus_id"], uuid=g["uuid"], name=g["name"],
                     rise=float(best_rise), runner_up=float(rises[1][0]) if len(rises) > 1 else 0.0,
                     probed_at=time.time())


def _wait(device: Any, buf: Any) -> None:
    """Until the queue is idle (wgpu-native's blocking poll; elsewhere a read must wait)."""
    poll = getattr(device, "_poll_wait", None)
    if poll is not None:
        poll()
    else:
        device.queue.read_buffer(buf, 0, 4)


def _util(nv: Any, gpu: dict[str, Any]) -> float:
    try:
        return float(nv.nvmlDeviceGetUtilizationRates(gpu["handle"]).gpu)
    except Exception:  # noqa: BLE001
        return 0.0

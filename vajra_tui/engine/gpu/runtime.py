"""The GPU side of the engine: adapter, buffers, pipelines, dispatch and timing.

It runs only inside the worker process, so a hung kernel can be killed with it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import wgpu

from ..events import DeviceInfo
from ..verify import POISON_BITS
from .flush import CacheFlusher

SOFTWARE_HINTS = ("llvmpipe", "lavapipe", "swiftshader", "software", "warp")
NAN_FILL = f"""
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {{
    let i = g.x + g.y * n.x * 256u;
    if (i < arrayLength(&out)) {{ out[i] = {POISON_BITS:#x}u; }}
}}
"""
# Requested whenever the adapter offers them: the prompt advertises exactly these to a model.
KERNEL_FEATURES = ("timestamp-query", "subgroup", "shader-f16")


def device_info(adapter: wgpu.GPUAdapter, enabled: list[str] | None = None) -> DeviceInfo:
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
    )


def _subgroup_size(info: dict, which: str) -> int | None:
    """wgpu-native reports the subgroup size range in its adapter info (under either spelling)."""
    for key in (f"subgroup_{which}_size", f"stackgroup_{which}_size"):
        value = info.get(key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def pick_adapter(prefer: str | None = None) -> wgpu.GPUAdapter:
    """The high-performance adapter, or the one whose name contains ``prefer``."""
    if prefer:
        for adapter in wgpu.gpu.enumerate_adapters_sync():
            if prefer.lower() in str(adapter.info.get("device", "")).lower():
                return adapter
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    if adapter is None:
        raise RuntimeError("no WebGPU adapter found")
    return adapter


@dataclass
class Timing:
    wall_ms: float
    ts_ms: float | None


@dataclass
class StreamTiming:
    """Device times per entry (in round order), the wall clock of the whole stream, snapshots."""

    ts_ms: list[list[float]]
    wall_ms: float
    snapshots: list[wgpu.GPUBuffer]


class Runtime:
    """One device with the workload's buffers bound through an explicit layout."""

    def __init__(self, prefer: str | None = None) -> None:
        self.adapter = pick_adapter(prefer)
        wanted = [f for f in KERNEL_FEATURES if f in self.adapter.features]
        limits = {k: self.adapter.limits[k] for k in self.adapter.limits}
        self.device = self.adapter.request_device_sync(
            required_features=wanted, required_limits=limits
        )
        self.info = device_info(self.adapter, wanted)
        self.queue = self.device.queue
        self.timestamps = "timestamp-query" in wanted
        self.period = _timestamp_period(self.queue) if self.timestamps else 1.0
        self.buffers: dict[str, wgpu.GPUBuffer] = {}
        self.flusher: CacheFlusher | None = None  # set for --cache cold
        self.layout: wgpu.GPUBindGroupLayout | None = None
        self.bind_group: wgpu.GPUBindGroup | None = None
        self._fill: tuple[wgpu.GPUComputePipeline, wgpu.GPUBindGroup, tuple[int, int]] | None = None
        if self.timestamps:
            self.query_set = self.device.create_query_set(type="timestamp", count=2)
            self.resolve = self.device.create_buffer(
                size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
            )

    # ---- buffers -------------------------------------------------------------
    def allocate(self, lengths: dict[str, int], outputs: set[str], order: list[str]) -> None:
        """Create one storage buffer per binding, in binding order."""
        self.buffers.clear()
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
        for name in order:
            self.buffers[name] = self.device.create_buffer(size=4 * max(lengths[name], 1), usage=usage)
        entries = []
        for index, name in enumerate(order):
            kind = (wgpu.BufferBindingType.storage if name in outputs
                    else wgpu.BufferBindingType.read_only_storage)
            entries.append({"binding": index, "visibility": wgpu.ShaderStage.COMPUTE,
                            "buffer": {"type": kind}})
        self.layout = self.device.create_bind_group_layout(entries=entries)
        self.bind_group = self.device.create_bind_group(
            layout=self.layout,
            entries=[{"binding": i, "resource": {"buffer": self.buffers[n]}} for i, n in enumerate(order)],
        )
        self._output = next(n for n in order if n in outputs)
        self._fill = self._fill_pipeline(self.buffers[self._output])

    def upload(self, arrays: dict[str, np.ndarray]) -> None:
        for name, data in arrays.items():
            self.queue.write_buffer(self.buffers[name], 0, np.ascontiguousarray(data, np.float32))

    def read_output(self) -> np.ndarray:
        return np.frombuffer(self.queue.read_buffer(self.buffers[self._output]), dtype=np.float32)

    # ---- pipelines -----------------------------------------------------------
    def compile(self, source: str) -> wgpu.GPUComputePipeline:
        """Raises the wgpu error (with Naga's located message) when the source is bad."""
        module = self.device.create_shader_module(code=source)
        layout = self.device.create_pipeline_layout(bind_group_layouts=[self.layout])
        return self.device.create_compute_pipeline(
            layout=layout, compute={"module": module, "entry_point": "main"}
        )

    def _fill_pipeline(self, out: wgpu.GPUBuffer):
        module = self.device.create_shader_module(code=NAN_FILL)
        pipe = self.device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
        group = self.device.create_bind_group(
            layout=pipe.get_bind_group_layout(0), entries=[{"binding": 0, "resource": {"buffer": out}}]
        )
        groups = -(-out.size // 4 // 256)
        gx = min(groups, 65535)
        return pipe, group, (gx, -(-groups // gx))

    # ---- dispatch ------------------------------------------------------------
    def wait(self) -> None:
        """Block until the queue is idle (wgpu-native's blocking device poll)."""
        poll = getattr(self.device, "_poll_wait", None)
        if poll is not None:
            poll()
        else:  # another backend: a buffer read cannot finish before earlier work
            self.queue.read_buffer(self.resolve if self.timestamps else self.buffers[self._output], 0, 4)

    def poison_output(self) -> None:
        """Fill the output with NaN so an unwritten element can never pass."""
        pipe, group, (gx, gy) = self._fill
        enc = self.device.create_command_encoder()
        rp = enc.begin_compute_pass()
        rp.set_pipeline(pipe)
        rp.set_bind_group(0, group)
        rp.dispatch_workgroups(gx, gy, 1)
        rp.end()
        self.queue.submit([enc.finish()])

    def dispatch(self, pipeline: wgpu.GPUComputePipeline, grid: tuple[int, int, int],
                 group: wgpu.GPUBindGroup | None = None) -> Timing:
        """Poison (workload dispatches only), then one timed dispatch; waits for the GPU."""
        if group is None:
            self.poison_output()
            if self.flusher is not None:
                flush = self.device.create_command_encoder()
                self.flusher.record(flush)
                self.queue.submit([flush.finish()])
            self.wait()
        enc = self.device.create_command_encoder()
        writes = None
        if self.timestamps:
            writes = {"query_set": self.query_set, "beginning_of_pass_write_index": 0,
                      "end_of_pass_write_index": 1}
        cp = enc.begin_compute_pass(timestamp_writes=writes)
        cp.set_pipeline(pipeline)
        cp.set_bind_group(0, group or self.bind_group)
        cp.dispatch_workgroups(*grid)
        cp.end()
        if self.timestamps:
            enc.resolve_query_set(self.query_set, 0, 2, self.resolve, 0)
        command = enc.finish()
        start = time.perf_counter()
        self.queue.submit([command])
        self.wait()
        wall = (time.perf_counter() - start) * 1e3
        ts = None
        if self.timestamps:
            stamps = np.frombuffer(self.queue.read_buffer(self.resolve), dtype=np.uint64)
            ts = float(int(stamps[1]) - int(stamps[0])) * self.period / 1e6 if stamps[1] > stamps[0] else 0.0
        return Timing(wall_ms=wall, ts_ms=ts)


    def _pass(self, enc, pipeline, grid, writes=None) -> None:
        cp = enc.begin_compute_pass(timestamp_writes=writes)
        cp.set_pipeline(pipeline)
        cp.set_bind_group(0, self.bind_group)
        cp.dispatch_workgroups(*grid)
        cp.end()

    def _poison_pass(self, enc) -> None:
        pipe, group, (gx, gy) = self._fill
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipe)
        cp.set_bind_group(0, group)
        cp.dispatch_workgroups(gx, gy, 1)
        cp.end()

    def set_cache_state(self, state: str) -> None:
        """"cold": flush the GPU's caches before every dispatch, outside its timestamps."""
        if state == "cold" and self.flusher is None:
            self.flusher = CacheFlusher(self.device, self.info)
        elif state != "cold" and self.flusher is not None:
            self.flusher.destroy()
            self.flusher = None

    def _flush(self, enc) -> None:
        if self.flusher is not None:
            self.flusher.record(enc)

    def time_stream(self, entries: list[tuple[wgpu.GPUComputePipeline, tuple[int, int, int]]],
                    warmup: int, reps: int) -> StreamTiming:
        """Warm-ups and rotating timed rounds for several kernels in ONE submission.

        A GPU left idle between dispatches (while the host waits, reads back and
        loops) lowers its clocks within a few hundred milliseconds, which once made
        kernels look 3-6x slower than they are. Back to back, it stays at speed.
        Each dispatch still follows its own NaN poisoning, and the output of every
        entry's last timed dispatch is copied aside so it can be verified.
        """
        n = len(entries)
        queries = self.device.create_query_set(type="timestamp", count=2 * n * reps)
        resolve = self.device.create_buffer(
            size=16 * n * reps, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        out = self.buffers[self._output]
        snapshots = [self.device.create_buffer(
            size=out.size, usage=wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC) for _ in entries]
        enc = self.device.create_command_encoder()
        for pipeline, grid in entries:
            for _ in range(warmup):
                self._poison_pass(enc)
                self._flush(enc)
                self._pass(enc, pipeline, grid)
        slots: list[list[int]] = [[] for _ in entries]
        slot = -1
        for rnd in range(reps):
            for e in [(i + rnd) % n for i in range(n)]:
                slot += 1
                slots[e].append(slot)
                self._poison_pass(enc)
                self._flush(enc)
                self._pass(enc, *entries[e], writes={
                    "query_set": queries, "beginning_of_pass_write_index": 2 * slot,
                    "end_of_pass_write_index": 2 * slot + 1})
                if rnd == reps - 1:
                    enc.copy_buffer_to_buffer(out, 0, snapshots[e], 0, out.size)
        enc.resolve_query_set(queries, 0, 2 * n * reps, resolve, 0)
        command = enc.finish()
        start = time.perf_counter()
        self.queue.submit([command])
        self.wait()
        wall = (time.perf_counter() - start) * 1e3
        stamps = np.frombuffer(self.queue.read_buffer(resolve), dtype=np.uint64).astype(np.int64)
        spans = (stamps[1::2] - stamps[0::2]) * self.period / 1e6
        queries.destroy()
        resolve.destroy()
        return StreamTiming([[float(max(spans[s], 0.0)) for s in ss] for ss in slots], wall, snapshots)

    def read(self, buffer: wgpu.GPUBuffer) -> np.ndarray:
        return np.frombuffer(self.queue.read_buffer(buffer), dtype=np.float32)


def _timestamp_period(queue: wgpu.GPUQueue) -> float:
    """Nanoseconds per timestamp tick (1.0 on most drivers, not all)."""
    try:
        from wgpu.backends.wgpu_native._ffi import lib

        period = float(lib.wgpuQueueGetTimestampPeriod(queue._internal))
        return period if period > 0 else 1.0
    except Exception:  # an older wgpu-native without the extension
        return 1.0

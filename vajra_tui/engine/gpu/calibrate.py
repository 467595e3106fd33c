"""Calibration micro-benchmarks: copy bandwidth, f32 FMA rate and the launch floor.

These are the roofline every result is placed on, so they run through the same
dispatch and timing path as candidates.
"""

from __future__ import annotations

import time

import numpy as np
import wgpu

from vajra_tui.engine.events import Calibration
from vajra_tui.engine.timing.stats import plausible_timestamp
from vajra_tui.engine.gpu.runtime import Runtime

# PER vec4s per invocation, strided by the whole grid so every load stays coalesced;
# several shapes are tried and the fastest is the ceiling (more bytes in flight helps HBM).
COPY = """
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let threads = n.x * n.y * 256u;
    let i = g.x + g.y * n.x * 256u;
    let total = arrayLength(&dst);
    for (var j = 0u; j < PERu; j = j + 1u) {
        let k = i + j * threads;
        if (k < total) { dst[k] = src[k]; }
    }
}
"""
COPY_SHAPES = (1, 2, 4)

# ACC independent vec4 accumulators per invocation (4*ACC scalar chains), so no FMA
# waits on the previous one: a handful of dependent chains measures latency, not the
# pipes. Several widths are tried and the fastest is the ceiling.
FMA = """
@group(0) @binding(0) var<storage, read_write> sink: array<vec4<f32>>;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = g.x + g.y * n.x * WGu;
    let s = vec4<f32>(f32(i & 7u) * 1e-7);
    let b = vec4<f32>(0.9999); let c = vec4<f32>(1e-6);
    DECLARE
    for (var k = 0u; k < ITERSu; k = k + 1u) {
        BODY
    }
    sink[i] = SUM;
}
"""
FMA_SHAPES = ((8, 256), (16, 256), (16, 128), (32, 128))  # (vec4 accumulators, workgroup size)


def fma_kernel(accumulators: int, workgroup: int, iters: int) -> str:
    """The FMA probe, written out so every accumulator is its own variable (a register)."""
    names = [f"a{j}" for j in range(accumulators)]
    declare = " ".join(f"var {n} = s + vec4<f32>({j * 0.01:.2f});" for j, n in enumerate(names))
    body = " ".join(f"{n} = fma({n}, b, c);" for n in names)
    return (FMA.replace("DECLARE", declare).replace("BODY", body).replace("SUM", " + ".join(names))
            .replace("ITERS", str(iters)).replace("WG", str(workgroup)))


EMPTY = """
@group(0) @binding(0) var<storage, read_write> sink: array<u32>;
@compute @workgroup_size(1)
fn main(@builtin(local_invocation_index) i: u32) {
    if (i > 1u) { sink[0] = 1u; }
}
"""


def _pipeline(rt: Runtime, code: str, buffers: list[wgpu.GPUBuffer]):
    module = rt.device.create_shader_module(code=code)
    pipe = rt.device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
    group = rt.device.create_bind_group(
        layout=pipe.get_bind_group_layout(0),
        entries=[{"binding": i, "resource": {"buffer": b}} for i, b in enumerate(buffers)],
    )
    return pipe, group


def _median_ms(rt: Runtime, pipe, group, grid, reps: int, warmup: int = 5) -> tuple[float, str]:
    for _ in range(warmup):  # also lets the clocks ramp up from idle
        rt.dispatch(pipe, grid, group)
    runs = [rt.dispatch(pipe, grid, group) for _ in range(reps)]
    stamps = [r.ts_ms for r in runs if plausible_timestamp(r.ts_ms, r.wall_ms)]
    if len(stamps) == len(runs):
        return float(np.median(stamps)), "timestamp"
    return float(np.median([r.wall_ms for r in runs])), "wall"


def _grid(groups: int) -> tuple[int, int, int]:
    gx = min(groups, 65535)
    return gx, -(-groups // gx), 1


def _copy_bytes(rt: Runtime) -> int:
    limit = rt.info.limits.get("max-storage-buffer-binding-size", 1 << 27)
    size = min(limit, (32 << 20) if rt.info.software else (512 << 20))
    return size - size % 4096


def quick_copy_gbps(rt: Runtime, reps: int = 5, shape: int | None = None) -> float:
    """A few reps of the copy: a cheap check of the copy ceiling at session start.

    ``shape``: the one the calibration found fastest (then only it is built and timed);
    without it, every shape the calibration tries, so the two numbers compare.
    """
    storage = wgpu.BufferUsage.STORAGE
    copy_bytes = _copy_bytes(rt)
    src = rt.device.create_buffer(size=copy_bytes, usage=storage)
    dst = rt.device.create_buffer(size=copy_bytes, usage=storage)
    best = 0.0
    for per in [shape] if shape in COPY_SHAPES else COPY_SHAPES:
        pipe, group = _pipeline(rt, COPY.replace("PER", str(per)), [src, dst])
        ms, _ = _median_ms(rt, pipe, group, _grid(-(-copy_bytes // 16 // 256 // per)), reps, warmup=2)
        best = max(best, 2 * copy_bytes / (ms / 1e3) / 1e9)
    src.destroy()
    dst.destroy()
    return best


def calibrate(rt: Runtime, reps: int = 9) -> Calibration:
    storage = wgpu.BufferUsage.STORAGE
    software = rt.info.software
    copy_bytes = _copy_bytes(rt)
    src = rt.device.create_buffer(size=copy_bytes, usage=storage)
    dst = rt.device.create_buffer(size=copy_bytes, usage=storage)
    copy_gbps, method, copy_shape = 0.0, "wall", COPY_SHAPES[0]
    for per in COPY_SHAPES:
        pipe, group = _pipeline(rt, COPY.replace("PER", str(per)), [src, dst])
        ms, how = _median_ms(rt, pipe, group, _grid(-(-copy_bytes // 16 // 256 // per)), reps)
        if 2 * copy_bytes / (ms / 1e3) / 1e9 > copy_gbps:
            copy_gbps, method, copy_shape = 2 * copy_bytes / (ms / 1e3) / 1e9, how, per

    threads = (1 << 14) if software else (1 << 20)
    sink = rt.device.create_buffer(size=threads * 16, usage=storage)
    fma_gflops = 0.0
    for accumulators, workgroup in FMA_SHAPES[:1] if software else FMA_SHAPES:
        iters = (512 if software else 32768) // accumulators
        pipe, group = _pipeline(rt, fma_kernel(accumulators, workgroup, iters), [sink])
        fma_ms, _ = _median_ms(rt, pipe, group, _grid(threads // workgroup), reps)
        fma_gflops = max(fma_gflops, threads * iters * accumulators * 4 * 2 / (fma_ms / 1e3) / 1e9)

    tiny = rt.device.create_buffer(size=16, usage=storage)
    pipe, group = _pipeline(rt, EMPTY, [tiny])
    floor_ms, _ = _median_ms(rt, pipe, group, (1, 1, 1), reps)
    for buf in (src, dst, sink, tiny):
        buf.destroy()
    return Calibration(copy_gbps=copy_gbps, fma_gflops=fma_gflops, launch_floor_ms=floor_ms,
                       method=method, driver=rt.info.driver, measured_at=time.time(),
                       copy_shape=copy_shape)

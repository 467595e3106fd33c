"""Calibration micro-benchmarks: copy bandwidth, f32 FMA rate and the launch floor.

These are the roofline every result is placed on, so they run through the same
dispatch and timing path as candidates.
"""

from __future__ import annotations

import numpy as np
import wgpu

from ..events import Calibration
from ..stats import plausible_timestamp
from .runtime import Runtime

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

FMA = """
@group(0) @binding(0) var<storage, read_write> sink: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let i = g.x + g.y * n.x * 256u;
    let s = f32(i & 7u) * 1e-7;
    var a0 = vec4<f32>(s); var a1 = a0 + 0.1; var a2 = a0 + 0.2; var a3 = a0 + 0.3;
    var a4 = a0 + 0.4; var a5 = a0 + 0.5; var a6 = a0 + 0.6; var a7 = a0 + 0.7;
    let b = vec4<f32>(0.9999); let c = vec4<f32>(1e-6);
    for (var k = 0u; k < ITERS; k = k + 1u) {
        a0 = fma(a0, b, c); a1 = fma(a1, b, c); a2 = fma(a2, b, c); a3 = fma(a3, b, c);
        a4 = fma(a4, b, c); a5 = fma(a5, b, c); a6 = fma(a6, b, c); a7 = fma(a7, b, c);
    }
    sink[i] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}
"""

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


def calibrate(rt: Runtime, reps: int = 9) -> Calibration:
    storage = wgpu.BufferUsage.STORAGE
    software = rt.info.software
    limit = rt.info.limits.get("max-storage-buffer-binding-size", 1 << 27)
    copy_bytes = min(limit, (32 << 20) if software else (512 << 20))
    copy_bytes -= copy_bytes % 4096
    src = rt.device.create_buffer(size=copy_bytes, usage=storage)
    dst = rt.device.create_buffer(size=copy_bytes, usage=storage)
    copy_gbps, method = 0.0, "wall"
    for per in COPY_SHAPES:
        pipe, group = _pipeline(rt, COPY.replace("PER", str(per)), [src, dst])
        ms, how = _median_ms(rt, pipe, group, _grid(-(-copy_bytes // 16 // 256 // per)), reps)
        if 2 * copy_bytes / (ms / 1e3) / 1e9 > copy_gbps:
            copy_gbps, method = 2 * copy_bytes / (ms / 1e3) / 1e9, how

    threads = (1 << 14) if software else (1 << 20)
    iters = 64 if software else 4096
    sink = rt.device.create_buffer(size=threads * 16, usage=storage)
    pipe, group = _pipeline(rt, FMA.replace("ITERS", f"{iters}u"), [sink])
    fma_ms, _ = _median_ms(rt, pipe, group, _grid(threads // 256), reps)
    fma_gflops = threads * iters * 8 * 4 * 2 / (fma_ms / 1e3) / 1e9

    tiny = rt.device.create_buffer(size=16, usage=storage)
    pipe, group = _pipeline(rt, EMPTY, [tiny])
    floor_ms, _ = _median_ms(rt, pipe, group, (1, 1, 1), reps)
    for buf in (src, dst, sink, tiny):
        buf.destroy()
    return Calibration(copy_gbps=copy_gbps, fma_gflops=fma_gflops, launch_floor_ms=floor_ms,
                       method=method)

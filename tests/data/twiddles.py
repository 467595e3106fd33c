"""Every twiddle exp(-2*pi*i*k/M) of the fft built-in's WGSL, for k < 2M (k past M wraps),
as a user's workload (M reaches the kernel as the size constant): the float64 reference holds it to 2.5e-7 (tests/test_fft.py)."""

import numpy as np

from vajra_tui import Binding, Workload
from vajra_tui.engine.workloads.fft import TWIDDLE

KERNEL = """\
@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read_write> Y: array<vec2<f32>>;
""" + TWIDDLE + """
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let k = id.x;
    if (k < 2u * M) {
        Y[k] = twiddle(k, M) + vec2<f32>(0.0 * X[0], 0.0);
    }
}
"""


def reference(size, inputs):
    m = size["M"]
    a = -2.0 * np.pi * np.arange(2 * m, dtype=np.float64) / m
    return np.stack([np.cos(a), np.sin(a)], axis=-1).ravel()


WORKLOAD = Workload(
    name="twiddles",
    summary="the fft twiddle's values for k < 2M",
    dims=("M",),
    presets={"seed": {"M": 4096}},
    bindings=(Binding(0, "X", "read"), Binding(1, "Y", "read_write")),
    buffer_len=lambda s: {"X": 1, "Y": 4 * s["M"]},
    make_inputs=lambda s, rng: {"X": rng.uniform(0.5, 1.0, 1).astype(np.float32)},
    reference=reference,
    flops=lambda s: 1.0,
    grid=lambda s, p: (-(-2 * s["M"] // 64), 1, 1),
    baseline=KERNEL,
    atol=2.5e-7,
    rtol=0.0,
)

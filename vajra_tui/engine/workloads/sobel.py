"""3×3 Sobel gradient magnitude with clamp-to-edge borders: a stencil.

A built-in, declared exactly as a user's workload file is (see the README).
"""

from __future__ import annotations

import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"IMG": rng.uniform(-1, 1, s["H"] * s["W"]).astype(np.float32)}


def reference(s: dict[str, int], x: dict[str, np.ndarray]) -> np.ndarray:
    p = np.pad(x["IMG"].astype(np.float64).reshape(s["H"], s["W"]), 1, mode="edge")
    tl, tc, tr = p[:-2, :-2], p[:-2, 1:-1], p[:-2, 2:]
    ml, mr = p[1:-1, :-2], p[1:-1, 2:]
    bl, bc, br = p[2:, :-2], p[2:, 1:-1], p[2:, 2:]
    gx = (tr + 2 * mr + br) - (tl + 2 * ml + bl)
    gy = (bl + 2 * bc + br) - (tl + 2 * tc + tr)
    return np.sqrt(gx * gx + gy * gy).ravel()


BASELINE = """\
// Naive Sobel: one invocation per pixel, nine clamped reads from global memory.
fn px(x: i32, y: i32) -> f32 {
    let cx = u32(clamp(x, 0, i32(W) - 1));
    let cy = u32(clamp(y, 0, i32(H) - 1));
    return IMG[cy * W + cx];
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let x = t.x * 16u + lid.x;
    let y = t.y * 16u + lid.y;
    if (x >= W || y >= H) {
        return;
    }
    let xi = i32(x);
    let yi = i32(y);
    let gx = (px(xi + 1, yi - 1) + 2.0 * px(xi + 1, yi) + px(xi + 1, yi + 1))
           - (px(xi - 1, yi - 1) + 2.0 * px(xi - 1, yi) + px(xi - 1, yi + 1));
    let gy = (px(xi - 1, yi + 1) + 2.0 * px(xi, yi + 1) + px(xi + 1, yi + 1))
           - (px(xi - 1, yi - 1) + 2.0 * px(xi, yi - 1) + px(xi + 1, yi - 1));
    OUT[y * W + x] = sqrt(gx * gx + gy * gy);
}
"""

WORKLOAD = Workload(
    name="sobel",
    summary="3×3 Sobel gradient magnitude, clamp-to-edge",
    dims=("H", "W"),
    presets={"seed": {"H": 2048, "W": 2048}, "large": {"H": 8192, "W": 8192}},
    bindings=(Binding(0, "IMG", "read"), Binding(1, "OUT", "read_write")),
    atol=lambda s: 1e-5,
    buffer_len=lambda s: {"IMG": s["H"] * s["W"], "OUT": s["H"] * s["W"]},
    make_inputs=make_inputs,
    reference=reference,
    # gx and gy: 7 each; magnitude: 3 and a sqrt
    flops=lambda s: 18.0 * s["H"] * s["W"],
    output_grid=lambda s: (s["W"], s["H"]),
    baseline=BASELINE,
    broadcast=("H", "W"),
)

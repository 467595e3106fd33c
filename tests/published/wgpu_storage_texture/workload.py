"""gfx-rs/wgpu examples `storage_texture/shader.wgsl`, kept as a REFUSAL case
(see ../SOURCES.md).

The kernel writes a Mandelbrot escape count into `texture: texture_storage_2d<rgba8unorm,
write>`. This workload describes that image as an f32 RGBA buffer under the texture's
name; Vajra must refuse the kernel in one line that names the texture. The reference is
the picture itself (escape iteration / 50 in r, g, b; alpha 1).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

MAX_ITERATIONS = 50


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    w, h = size["W"], size["H"]
    x, y = np.meshgrid(np.arange(w), np.arange(h))
    c = (x / w * 3.0 - 2.25) + 1j * (y / h * 3.0 - 1.5)
    z = c.copy()
    final = np.full(c.shape, MAX_ITERATIONS)
    for i in range(MAX_ITERATIONS):
        z = np.where(final == MAX_ITERATIONS, z * z + c, z)
        final = np.where((final == MAX_ITERATIONS) & (np.abs(z) > 4.0), i, final)
    out = np.ones((h, w, 4))
    out[..., :3] = (final / MAX_ITERATIONS)[..., None]
    return out.ravel()


WORKLOAD = Workload(
    name="wgpu_storage_texture",
    summary="wgpu storage_texture Mandelbrot: writes a storage texture, refused by Vajra",
    dims=("W", "H"),
    presets={"seed": {"W": 16, "H": 16}},
    bindings=(Binding(0, "texture", "read_write"),),
    buffer_len=lambda s: {"texture": 4 * s["W"] * s["H"]},
    make_inputs=lambda s, rng: {},
    reference=reference,
    flops=lambda s: 10.0 * MAX_ITERATIONS * s["W"] * s["H"],
    grid=lambda s, p: (s["W"], s["H"], 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1.0 / 255,
    rtol=0.0,
)

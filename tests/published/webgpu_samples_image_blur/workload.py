"""webgpu-samples imageBlur `blur.wgsl`, kept as a REFUSAL case (see ../SOURCES.md).

The sample blurs an rgba8 texture through a sampler (`samp`, `inputTex`) into a storage
texture (`outputTex`), in bind groups 0 and 1. Vajra works on buffers it can poison,
fill and verify, so this workload describes the image as f32 RGBA buffers under the
textures' names (and the two uniforms as the sample fills them); Vajra must refuse the
kernel in one line that names the texture. The reference is the blur itself (one
horizontal pass, `flip.value = 0`, clamp-to-edge as the sampler does), so the file is a
complete workload should textures ever be supported.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

FILTER = 15  # the sample's default filterSize
TILE = 128
BLOCK = TILE - (FILTER - 1)  # blockDim, as the sample computes it


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    img = rng.uniform(0, 1, (size["H"], size["W"], 4)).astype(np.float32)
    return {"inputTex": img.ravel()}


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    h, w = size["H"], size["W"]
    img = inputs["inputTex"].astype(np.float64).reshape(h, w, 4)
    off = (FILTER - 1) // 2
    cols = np.clip(np.arange(w)[:, None] + np.arange(-off, off + 1)[None, :], 0, w - 1)
    out = np.ones((h, w, 4))
    out[..., :3] = img[:, cols, :3].mean(axis=2)
    return out.ravel()


WORKLOAD = Workload(
    name="webgpu_samples_image_blur",
    summary="webgpu-samples box blur (blur.wgsl): texture kernel, refused by Vajra",
    dims=("W", "H"),
    presets={"seed": {"W": 64, "H": 16}},
    bindings=(
        Binding(1, "params", "uniform", struct="Params", fields=(("filterDim", "i32"), ("blockDim", "u32")),
                values=lambda s, p: {"filterDim": FILTER, "blockDim": BLOCK}),
        Binding(1, "inputTex", "read", group=1),
        Binding(2, "outputTex", "read_write", group=1),
        Binding(3, "flip", "uniform", group=1, struct="Flip", fields=(("value", "u32"),),
                values=lambda s, p: {"value": 0}),
    ),
    buffer_len=lambda s: {"inputTex": 4 * s["W"] * s["H"], "outputTex": 4 * s["W"] * s["H"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * FILTER * 3 * s["W"] * s["H"],
    grid=lambda s, p: (-(-s["W"] // BLOCK), -(-s["H"] // 4), 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1.0 / 255,  # the sample's output texture is rgba8unorm
    rtol=0.0,
)

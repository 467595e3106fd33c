"""gfx-rs/wgpu examples `boids/compute.wgsl`, run as published (see ../SOURCES.md).

wgpu's boids step: the same three rules as the webgpu-samples kernel, written with
`loop`/`continuing`, a bounds check (so NP need not be a multiple of 64) and
`array<Particle>` bindings. SimParams holds the example's own values (boids/mod.rs).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

SIM = {"deltaT": 0.04, "rule1Distance": 0.1, "rule2Distance": 0.025, "rule3Distance": 0.025,
       "rule1Scale": 0.02, "rule2Scale": 0.05, "rule3Scale": 0.005}  # examples/src/boids/mod.rs


def make_inputs(size: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    n = size["NP"]
    p = np.empty((n, 4), np.float32)
    p[:, :2] = rng.uniform(-1, 1, (n, 2))
    p[:, 2:] = rng.uniform(-0.1, 0.1, (n, 2))
    return {"particlesSrc": p.ravel()}


def boids_step(particles: np.ndarray, sim: dict[str, float]) -> np.ndarray:
    """One step of the published rules in float64: (n, 4) [pos.xy, vel.xy] -> (n, 4)."""
    pos, vel = particles[:, :2], particles[:, 2:]
    n = len(pos)
    d = np.sqrt(((pos[None, :, :] - pos[:, None, :]) ** 2).sum(-1))
    other = ~np.eye(n, dtype=bool)
    m1 = other & (d < sim["rule1Distance"])
    m2 = other & (d < sim["rule2Distance"])
    m3 = other & (d < sim["rule3Distance"])
    c1, c3 = m1.sum(1), m3.sum(1)
    cmass = m1.astype(float) @ pos
    cmass = np.where(c1[:, None] > 0, cmass / np.maximum(c1, 1)[:, None] - pos, cmass)
    colvel = -(m2.astype(float) @ pos - m2.sum(1)[:, None] * pos)
    cvel = m3.astype(float) @ vel
    cvel = np.where(c3[:, None] > 0, cvel / np.maximum(c3, 1)[:, None], cvel)
    v = vel + cmass * sim["rule1Scale"] + colvel * sim["rule2Scale"] + cvel * sim["rule3Scale"]
    speed = np.sqrt((v * v).sum(1, keepdims=True))
    v = v / speed * np.clip(speed, 0.0, 0.1)
    p = pos + v * sim["deltaT"]
    p = np.where(p < -1.0, 1.0, p)
    p = np.where(p > 1.0, -1.0, p)
    return np.concatenate([p, v], axis=1)


def reference(size: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    return boids_step(inputs["particlesSrc"].astype(np.float64).reshape(-1, 4), SIM).ravel()


WORKLOAD = Workload(
    name="wgpu_boids",
    summary="wgpu example boids step (compute.wgsl), NP particles, uniform SimParams",
    dims=("NP",),
    presets={"seed": {"NP": 100}, "large": {"NP": 4000}},
    bindings=(
        Binding(0, "params", "uniform", struct="SimParams",
                fields=tuple((k, "f32") for k in SIM), values=lambda s, p: dict(SIM)),
        Binding(1, "particlesSrc", "read"),
        Binding(2, "particlesDst", "read_write"),
    ),
    buffer_len=lambda s: {"particlesSrc": 4 * s["NP"], "particlesDst": 4 * s["NP"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 30.0 * s["NP"] * s["NP"],
    grid=lambda s, p: (-(-s["NP"] // 64), 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-5,
    rtol=1e-4,
)

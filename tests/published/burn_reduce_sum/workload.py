"""burn-wgpu `crates/burn-wgpu/src/template/reduction/reduce_dim_shared_memory.wgsl`, run as
published (see ../SOURCES.md).

A reduction along one dim through workgroup memory, one workgroup per reduced group. Its
`{{ update }}` and `{{ assign }}` placeholders take WGSL statements (here a sum), and it names
a local after a placeholder: `let workgroup_size_x = {{ workgroup_size_x }}u;`, so a template
value must fill the placeholder and leave the identifier alone. `info` holds the rank, the
input's and the output's strides and shapes, the reduced dim and the values per invocation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload


def info(s: dict[str, int]) -> np.ndarray:
    R, C = s["R"], s["C"]
    return np.array([2, C, 1, 1, 1, R, C, R, 1, 1, -(-C // 256)], dtype=np.uint32)


def make_inputs(s: dict[str, int], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"input": rng.uniform(-1, 1, s["R"] * s["C"]).astype(np.float32), "info": info(s)}


def reference(s: dict[str, int], inputs: dict[str, np.ndarray]) -> np.ndarray:
    return inputs["input"].astype(np.float64).reshape(s["R"], s["C"]).sum(axis=1)


WORKLOAD = Workload(
    name="burn_reduce_sum",
    summary="burn-wgpu shared-memory sum over the last dim",
    dims=("R", "C"),
    presets={"seed": {"R": 37, "C": 1000}},
    bindings=(Binding(0, "input", "read"), Binding(1, "output", "read_write"), Binding(2, "info", "read", dtype="u32")),
    buffer_len=lambda s: {"input": s["R"] * s["C"], "output": s["R"], "info": 11},
    make_inputs=make_inputs, reference=reference,
    flops=lambda s: 1.0 * s["R"] * s["C"],
    defines=lambda s: {"elem": "f32", "workgroup_size_x": "16", "workgroup_size_y": "16", "shared_size": "256",
                       "update": "shared_memory[local_id] += value;",
                       "assign": "output[output_position] = final_value;"},
    grid=lambda s, p: (s["R"], 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=1e-4, rtol=1e-4,
)

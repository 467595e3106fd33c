"""gfx-rs/wgpu examples `hello_synchronization/shaders.wgsl`, entry `patient_main`
(see ../SOURCES.md).

Each of the 16 invocations of a workgroup adds 1 to a workgroup atomic, waits at a
barrier, and invocation 0 writes the count: every output is 16, provided workgroup
memory starts zeroed on every dispatch (Vajra's zeroing must reach this entry point,
which is not `main`). The module's other entry, `hasty_main`, races by design and is
not run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Workload

WORKLOAD = Workload(
    name="wgpu_hello_synchronization",
    summary="wgpu hello_synchronization patient_main: a workgroup atomic counted after a barrier",
    dims=("N",),
    presets={"seed": {"N": 32}, "large": {"N": 65535}},
    bindings=(Binding(0, "output", "read_write", "u32"),),
    buffer_len=lambda s: {"output": s["N"]},
    make_inputs=lambda s, rng: {},
    reference=lambda s, inputs: np.full(s["N"], 16, np.uint32),
    flops=lambda s: 0.0,
    entry="patient_main",
    grid=lambda s, p: (s["N"], 1, 1),
    baseline=Path(__file__).with_name("kernel.wgsl").read_text(encoding="utf-8"),
    atol=0.0,
    rtol=0.0,
)

"""Y = ALPHA · X / rowsum(X): two passes, a uniform params struct, bindings in two groups.

The kernel (``row_normalize.wgsl``) is written as a host application would write it, not
to Vajra's contract: it reads its sizes from a ``Params`` uniform, binds at
``@group(0) @binding(0/2/4)`` and ``@group(1) @binding(0)``, and has one entry point per
pass. The workload says what each binding is and how each pass is dispatched; Vajra runs
the two passes as one result, verifies Y, and times each pass.

    vajra-tui bench -w examples/workloads/row_normalize.py
    vajra-tui tune -w examples/workloads/row_normalize.py --kernel examples/workloads/row_normalize.wgsl --source params
"""

from pathlib import Path

import numpy as np

from vajra_tui import Binding, Pass, Workload

ALPHA = 0.5


def make_inputs(size, rng):  # positive entries, so no row sums to zero
    return {"x": rng.uniform(0.5, 1.5, size["ROWS"] * size["COLS"]).astype(np.float32)}


def reference(size, inputs):
    x = inputs["x"].astype(np.float64).reshape(size["ROWS"], size["COLS"])
    return (ALPHA * x / x.sum(axis=1, keepdims=True)).ravel()


WORKLOAD = Workload(
    name="row_normalize",
    summary="Y = ALPHA * X / rowsum(X), two passes (row sums, then scale), f32",
    dims=("ROWS", "COLS"),
    presets={"seed": {"ROWS": 512, "COLS": 1024}, "large": {"ROWS": 4096, "COLS": 4096}},
    bindings=(
        Binding(0, "x", "read"),
        Binding(2, "y", "read_write"),
        Binding(4, "params", "uniform", struct="Params",
                fields=(("rows", "u32"), ("cols", "u32"), ("alpha", "f32")),
                values=lambda size, params: {"rows": size["ROWS"], "cols": size["COLS"], "alpha": ALPHA}),
        Binding(0, "sums", "scratch", group=1),
    ),
    buffer_len=lambda s: {"x": s["ROWS"] * s["COLS"], "y": s["ROWS"] * s["COLS"], "sums": s["ROWS"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: 2.0 * s["ROWS"] * s["COLS"],
    passes=(
        Pass("row_sums", grid=lambda size, params: (size["ROWS"], 1, 1)),  # one workgroup per row
        # x: columns, y: rows (a 1-D grid of ROWS*COLS/256 passes 65535 at 4096 x 4096, and
        # only the first pass's grid can be folded)
        Pass("normalize", grid=lambda size, params: (-(-size["COLS"] // 256), size["ROWS"], 1)),
    ),
    baseline=Path(__file__).with_name("row_normalize.wgsl").read_text(encoding="utf-8"),
    atol=1e-7,
    rtol=1e-5,
)

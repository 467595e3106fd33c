"""An experiment, not a built-in: the 1-D fft's two passes run chunk by chunk over the batch.

Why (benchmarks/NOTES.md, #27, 2026-12-05): at 16 x 2^20 the built-in's best kernel moves
X, T, T and Y through HBM (512 MiB) at about 60% of the copy rate, 0.92x cuFFT. Run as
``cols`` then ``rows`` on ``CH`` batch rows at a time, with the scratch T bound to the same
CH rows for every chunk, T is 8 MiB a row: at CH = 2 or 4 it may stay in the H200's L2
between a chunk's two passes, so its write and read need not reach HBM at all. The cost is
2 x 16 / CH dispatches instead of 2. Declared as a user's workload file is: each chunk's
passes are the same two entry points with the chunk's index as an ``override``
(``Pass(constants=...)``); the kernels are the library's register design (fft_gen.py) with X
and Y offset by the chunk and T not.
"""

from __future__ import annotations

from vajra_tui import Binding, Pass, Workload
from vajra_tui.engine.sources.library.fft import blocked, templates_for
from vajra_tui.engine.sources.library.fft_gen import PassSpec
from vajra_tui.engine.workloads import fft
from vajra_tui.engine.workloads.fft import BASELINE as FFT_BASELINE

OVERRIDE = "override CHUNK: u32;\n"


def specs_for(ch: int):
    """The built-in's four-step passes with X read and Y written at row ``b + CHUNK * ch``."""

    def specs(s: dict[str, int]) -> list[PassSpec]:
        n1, n2 = fft.split(s["N"])
        row = f"(b + CHUNK * {ch}u) * N"
        return [PassSpec("cols", n2, n1, "X", "T", f"{row} + g", n1, "b * N + g", n1, s["N"], "CA"),
                PassSpec("rows", n1, n2, "T", "Y", f"b * N + g * {n1}u", 1, f"{row} + g", n2, 0, "CB")]

    return specs


def kernel(params: dict, size: dict[str, int], ch: int) -> str:
    """The library's register kernel at ``params`` (regs, cols, ex, blk) for chunks of ``ch`` rows."""
    design = templates_for("fft_chunked", specs_for(ch), blocked)[0]
    return OVERRIDE + design.render(params, size, None)


def _baseline(ch: int) -> str:
    """fft's radix-2 baseline with X and Y offset by the chunk (T is the chunk's own rows)."""
    src = FFT_BASELINE.replace("const N1:", f"{OVERRIDE}const N1:", 1)
    src = src.replace("    let base = wid.y * N + n1;\n",
                      f"    let base = wid.y * N + n1;\n    let xb = (wid.y + CHUNK * {ch}u) * N + n1;\n", 1)
    src = src.replace("X[base + j * N1]", "X[xb + j * N1]").replace("X[base + (j + half) * N1]",
                                                                     "X[xb + (j + half) * N1]")
    return src.replace("let dst = wid.y * N + k2;", f"let dst = (wid.y + CHUNK * {ch}u) * N + k2;", 1)


def workload(batch: int, ch: int) -> Workload:
    """fft at BATCH = ``batch`` run as ``batch / ch`` chunks of both passes."""
    if batch % ch:
        raise ValueError(f"fft_chunked: {ch} does not divide BATCH={batch}")
    passes = []
    for c in range(batch // ch):
        const = (lambda c: lambda s, p: {"CHUNK": c})(c)
        passes += [Pass("cols", grid=lambda s, p: (fft.split(s["N"])[0] // int(p.get("CA", 1)), ch, 1),
                        name=f"cols{c}", constants=const),
                   Pass("rows", grid=lambda s, p: (fft.split(s["N"])[1] // int(p.get("CB", 1)), ch, 1),
                        name=f"rows{c}", constants=const)]
    w = fft.WORKLOAD
    return Workload(name=f"fft_chunked{ch}", summary=f"fft in chunks of {ch} batch rows", dims=w.dims,
                    presets=w.presets, bindings=(Binding(0, "X", "read"), Binding(1, "Y", "read_write"),
                                                 Binding(2, "T", "scratch")),
                    buffer_len=w.buffer_len, make_inputs=w.make_inputs, reference=w.reference, flops=w.flops,
                    atol=w.atol, rtol=0.0, passes=tuple(passes), defines=fft.defines, baseline=_baseline(ch))


# module-level names, so a worker process can load each by "path:NAME" (get_workload)
LARGE = {ch: workload(16, ch) for ch in (16, 8, 4, 2, 1)}  # fft's large preset, BATCH = 16
SEED = {ch: workload(4, ch) for ch in (4, 2, 1)}  # its seed preset, BATCH = 4
globals().update({f"LARGE_CH{ch}": w for ch, w in LARGE.items()})
globals().update({f"SEED_CH{ch}": w for ch, w in SEED.items()})

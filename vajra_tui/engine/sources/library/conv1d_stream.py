"""Conv1d C streaming ``seq`` tiles through one workgroup (``seq > 1``), the next tile's X
window loaded into registers while the current one computes.

Why: a tile of the vec4 kernels (conv1d.py, conv1d_run.py) stages its X window, waits at
a barrier, then issues its FMAs. Every workgroup is short (512 FMAs per invocation at
K=64 with runs of two vec4), so the global loads of one phase overlap the FMAs of another
only where other workgroups happen to be resident: on the H200 the vec4 kernels sit near
the SUM of their memory time (0.064 ms at 2^25) and their FMA time (0.074 ms), 0.16 ms,
not the larger of the two. Here each invocation issues its share of the next window's
loads before the current tile's FMAs and writes them to workgroup memory after them: the
loads' latency hides behind the FMAs of the same invocation, and the weights are staged
once per workgroup instead of once per tile (``wsrc=0``), or held in registers for the
workgroup's life (``wsrc=2``: no shared read of W per step), or read as a uniform
(``wsrc=3``: W declared ``var<uniform>``, each tap an operand from the constant bank on
NVIDIA, so neither a register nor a shared read; 4.5-5.5% faster than ``wsrc=2`` on an H100,
benchmarks/NOTES.md round 13).

``pd=2`` keeps two windows in flight: the loads for the tile after next are issued while a
tile computes, twice the bytes outstanding per invocation for ``words`` more registers
(seq is a power of two, so the tiles go in pairs).

The loads are coalesced scalars (consecutive lanes, consecutive words, every warp a
128-byte line) written to the vec4 window one word at a time; the compute is
conv1d_run.py's register windows of ``run`` vec4, unrolled over K.
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.base import TILE_GUARD, Emitter, Params, Size, open_main
from vajra_tui.engine.sources.library.conv1d_run import check as unrolled
from vajra_tui.engine.sources.library.conv1d_run import (declare_window, nx, phases, slot, stage_weights, w_slots,
                                                           windows)
from vajra_tui.engine.workloads.uniforms import MAX_UNIFORM_BYTES

SEQS = (1, 2, 4, 8, 16)


def words(p: Params, s: Size) -> int:
    """Scalars of X one invocation carries for the next tile (the window, evenly split)."""
    return -(-4 * nx(p, s) // p["wg"])


def check(p: Params, s: Size) -> str | None:
    """Why this streaming configuration is not usable (None when it is)."""
    if p["slide"] or p["xsrc"]:
        return "seq streams the vec4 kernels' tiles (slide=0); sliding windows take tiles in turn by run"
    if p["wsrc"] == 1:
        return "streamed tiles take W staged (wsrc=0), in registers (wsrc=2) or as a uniform (wsrc=3)"
    if p["wsrc"] == 3 and (s["K"] % 4 or 4 * s["K"] > MAX_UNIFORM_BYTES):
        return f"W as a uniform (wsrc=3) needs K a multiple of 4, at most {MAX_UNIFORM_BYTES // 4}"
    if unrolled(p, s):
        return unrolled(p, s)
    if words(p, s) * p.get("pd", 1) > 64:
        return "the windows carried ahead would take more than 64 registers per invocation"
    return None


def _prefetch(e: Emitter, p: Params, s: Size, at: str, declare: bool, name: str = "f") -> None:
    """Lane-consecutive scalars of the window that starts at output ``at`` into f0.. (or
    ``name``0..; past the end of X: zero, never read by a stored output)."""
    wg = p["wg"]
    for m in range(words(p, s)):
        g = f"{at} + lid.x + {m * wg}u"
        value = f"select(0.0, X[min({g}, xlen - 1u)], {g} < xlen)"
        e(f"var {name}{m} = {value};" if declare else f"{name}{m} = {value};")


def _fill(e: Emitter, p: Params, s: Size, carried: str = "f") -> None:
    """The carried scalars into the vec4 window: word j of the window is xs[j / 4][j % 4]."""
    wg, n4 = p["wg"], 4 * nx(p, s)
    for m in range(words(p, s)):
        j = f"lid.x + {m * wg}u"
        line = f"{slot(f'({j}) / 4u', phases(p))}[({j}) % 4u] = {carried}{m};"
        e(line if (m + 1) * wg <= n4 else f"if ({j} < {n4}u) {{ {line} }}")


def _weights_in_registers(e: Emitter, s: Size) -> None:
    """``wsrc=2``: W as w0.. vec4 registers for the workgroup's life, zero past K (the taps are
    known when the kernel is generated, so every index is a constant): no shared read of W per
    step, at the cost of K registers."""
    for k4 in range(w_slots(s)):
        parts = [f"W[{4 * k4 + c}u]" if 4 * k4 + c < s["K"] else "0.0" for c in range(4)]
        e(f"let w{k4} = vec4<f32>({', '.join(parts)});")


def _weights_from_uniform(e: Emitter, s: Size) -> None:
    """``wsrc=3``: w0.. name W's vec4 in the uniform (declared at the workload's slot of W),
    each index a constant, so the compiler may take each tap straight from the constant bank."""
    for k4 in range(w_slots(s)):
        e(f"let w{k4} = W[{k4}u];")


def _w_source(wsrc: int) -> str:
    return {0: "workgroup vec4", 2: "registers", 3: "a uniform (the constant bank)"}[wsrc]


def render(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wg, g, r, q = p["wg"], p["groups"], p["run"], p["seq"]
    tile = 4 * r * wg * g
    e = Emitter()
    e(f"// Conv1d stream: {q} tiles of {tile} outputs in turn per workgroup of {wg}; each invocation",
      f"// owns {g} run(s) of {4 * r} outputs sharing a register window of X, K unrolled; it loads",
      f"// {words(p, s)} words of the {'tile after next' if p.get('pd', 1) == 2 else 'next tile'}'s window while the current tile computes. W: "
      f"{_w_source(p['wsrc'])}.",
      f"// tile: {tile * q}")
    if p["wsrc"] == 3:
        e(f"@group(0) @binding(1) var<uniform> W: array<vec4<f32>, {w_slots(s)}>;")
    staged_w = p["wsrc"] == 0
    declare_window(e, p["v4out"], nx(p, s), w_slots(s) if staged_w else 0, phases(p))
    open_main(e, wg)
    e(*TILE_GUARD, "let xlen = N + K - 1u;", f"let first = t.x * {tile * q}u;")
    if staged_w:
        stage_weights(e, wg, w_slots(s))
    elif p["wsrc"] == 3:
        _weights_from_uniform(e, s)
    else:
        _weights_in_registers(e, s)
    _prefetch(e, p, s, "first", declare=True)
    if p.get("pd", 1) == 2:
        _two_ahead(e, p, s, tile, staged_w)
        e.close()
        return e.text()
    e.open(f"for (var r = 0u; r < {q}u; r = r + 1u) {{")
    e(f"let base = first + r * {tile}u;")
    _tile(e, p, s, "f", f"r + 1u < {q}u", f"base + {tile}u", staged_w)
    e.close()
    e.close()
    return e.text()


def _tile(e: Emitter, p: Params, s: Size, carried: str, more: str, at: str, staged_w: bool) -> None:
    """One tile at ``base``: the window carried in ``carried``0.. into xs, then (while ``more``)
    the loads of the window at ``at`` into the same registers, then the FMAs."""
    e("workgroupBarrier();  // the previous tile's readers are done with xs")
    _fill(e, p, s, carried)
    e("workgroupBarrier();")
    e.open(f"if ({more}) {{")
    _prefetch(e, p, s, at, declare=False, name=carried)
    e.close()
    windows(e, p, s, staged_w)


def _two_ahead(e: Emitter, p: Params, s: Size, tile: int, staged_w: bool) -> None:
    """``pd=2``: tiles in pairs, the even ones' windows carried in f0.., the odd ones' in h0..;
    each tile requests the window two tiles on into the registers it has just emptied, so a
    load has two tiles of FMAs to arrive (no register copies, which would wait for it)."""
    q = p["seq"]
    _prefetch(e, p, s, f"first + {tile}u", declare=True, name="h")
    e.open(f"for (var r = 0u; r < {q}u; r = r + 2u) {{")
    for half, carried in enumerate(("f", "h")):
        e.open("{")
        e(f"let base = first + (r + {half}u) * {tile}u;")
        _tile(e, p, s, carried, f"r + {half + 2}u < {q}u", f"base + {2 * tile}u", staged_w)
        e.close()
    e.close()

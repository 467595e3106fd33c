"""Conv1d C with scalar sliding windows (``slide=P > 0``): each invocation owns ``groups``
windows of P consecutive outputs, P scalar accumulators each, and the K taps unrolled.

Why scalar: at tap k a window needs X[o+k .. o+k+P-1]; tap k+1 drops the first and adds
X[o+k+P], so after unrolling each tap reads ONE new scalar of X and issues P FMAs on
registers that were simply renamed (no moves). With P odd, the lanes of a warp read
words P apart: every shared read is conflict-free (the vec4 runs of conv1d_run.py use
128-bit reads whose conflicts depend on the quarter-warp; the H200 sweep showed their
longer runs getting slower, which points at registers or issue slots, not bandwidth).

The window lives in a 2-D workgroup array of rows of P floats, read as
``xs[lid.x + c][col]`` with constant c and col: Naga clamps every dynamic index with
``min``; this way one clamp serves a whole row (about (P+K)/P clamps per window instead
of one per tap) and the column folds into the load's immediate offset.

Axes this design adds to conv1d/regs (old configurations keep ``slide=0``):
  slide  P outputs per window (odd: conflict-free scalar reads from workgroup memory)
  wsrc   weights: 0 staged once in workgroup memory, read as vec4 broadcasts (one per 4
         taps); 1 ``W[k]`` from the storage buffer at a constant index (uniform address,
         an L1 broadcast); 2 loaded into 64 registers once, before the loop over tiles;
         3 (the streamed kernel's only, conv1d_stream.py) W declared var<uniform>
  xsrc   X: 0 staged per tile in workgroup memory with coalesced scalar loads; 1 read
         straight from global memory (L1-cached; no staging, no barrier)
  run    tiles one workgroup processes in sequence (weights loaded once, reused run times)
  v4out  xsrc=0: results go through workgroup memory and leave as coalesced vec4 stores
         (0: coalesced scalar stores, any N); xsrc=1: vec4 stores straight from registers
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.base import TILE_GUARD, Emitter, Params, Size, open_main
from vajra_tui.engine.sources.library.conv1d_run import stage_weights, w_slots

SLIDES = (0, 5, 7, 8, 9, 11, 12, 13, 15, 16)  # 0: the vec4 kernels of conv1d.py / conv1d_run.py
MAX_TAPS = 128
MAX_FMAS = 8192  # unrolled FMA lines per invocation: keeps the kernel a few thousand lines


def _span(p: Params, s: Size) -> int:
    """X elements one tile needs: its outputs plus the K-1 taps after the last one."""
    return p["wg"] * p["groups"] * p["slide"] + s["K"] - 1


def rows(p: Params, s: Size) -> int:
    return -(-_span(p, s) // p["slide"])


def smem_bytes(p: Params, s: Size) -> int:
    xs = 4 * rows(p, s) * p["slide"] if p["xsrc"] == 0 else 0
    ws = 16 * w_slots(s) if p["wsrc"] == 0 else 0
    return xs + ws


def check(p: Params, s: Size) -> str | None:
    """Why this slide configuration is not usable (None when it is)."""
    big, g, k = p["slide"], p["groups"], s["K"]
    if p["wsrc"] == 3:
        return "W as a uniform (wsrc=3) is the streamed kernel's (seq > 1)"
    if k > MAX_TAPS or big * g * k > MAX_FMAS:
        return f"sliding windows unroll the taps: K up to {MAX_TAPS}, slide*groups*K up to {MAX_FMAS}"
    if p["xsrc"] == 0 and big % 2 == 0:
        return "scalar workgroup reads at an even lane stride conflict: staged X needs an odd slide"
    if p["xsrc"] == 1 and p["v4out"] and big % 4:
        return "vec4 stores from registers need slide to be a multiple of 4"
    return None


def _tap_w(k: int, wsrc: int) -> str:
    if wsrc == 0:
        return f"w{k // 4}.{'xyzw'[k % 4]}"
    return f"wr{k}" if wsrc == 2 else f"wk{k}"


def _load_x(p: Params, j: int, m: int) -> str:
    """Element m of window j: constant row offset and column (staged) or a clamped global read."""
    big, wg = p["slide"], p["wg"]
    if p["xsrc"] == 0:
        return f"xs[lid.x + {j * wg + m // big}u][{m % big}]"
    return f"X[min(o{j} + {m}u, xlen - 1u)]"


def _compute(e: Emitter, p: Params, s: Size) -> None:
    """All K taps of every window, unrolled: one new x per tap and window, P FMAs on it."""
    big, g, k_taps, wsrc = p["slide"], p["groups"], s["K"], p["wsrc"]
    for j in range(g):
        if p["xsrc"] == 1:
            e(f"let o{j} = base + (lid.x + {j * p['wg']}u) * {big}u;")
        e(*[f"var a{j}_{q} = 0.0;" for q in range(big)])
        e(*[f"let x{j}_{m} = {_load_x(p, j, m)};" for m in range(big - 1)])
    for k in range(k_taps):
        if wsrc == 0 and k % 4 == 0:
            e(f"let w{k // 4} = ws[{k // 4}u];")
        elif wsrc == 1:
            e(f"let wk{k} = W[{k}u];")
        w = _tap_w(k, wsrc)
        for j in range(g):
            m = k + big - 1
            e(f"let x{j}_{m} = {_load_x(p, j, m)};")
            e(*[f"a{j}_{q} = fma(x{j}_{k + q}, {w}, a{j}_{q});" for q in range(big)])


def _store(e: Emitter, p: Params) -> None:
    big, g, wg, v4 = p["slide"], p["groups"], p["wg"], p["v4out"]
    tile = wg * g * big
    if p["xsrc"] == 1:  # straight from registers
        for j in range(g):
            if v4:
                for q in range(0, big, 4):
                    vec = ", ".join(f"a{j}_{q + c}" for c in range(4))
                    e(f"if (o{j} + {q}u < N) {{ Y[(o{j} + {q}u) / 4u] = vec4<f32>({vec}); }}")
            else:
                e(*[f"if (o{j} + {q}u < N) {{ Y[o{j} + {q}u] = a{j}_{q}; }}" for q in range(big)])
        return
    # through workgroup memory: lanes write rows P words apart (odd: conflict-free), then
    # consecutive lanes store consecutive outputs
    e("workgroupBarrier();")
    for j in range(g):
        e(*[f"xs[lid.x + {j * wg}u][{q}] = a{j}_{q};" for q in range(big)])
    e("workgroupBarrier();")
    if v4:
        e.open(f"for (var i = lid.x; i < {tile // 4}u; i = i + {wg}u) {{")
        parts = [f"xs[(i * 4u + {c}u) / {big}u][(i * 4u + {c}u) % {big}u]" for c in range(4)]
        e(f"if (base + i * 4u < N) {{ Y[base / 4u + i] = vec4<f32>({', '.join(parts)}); }}")
    else:
        e.open(f"for (var i = lid.x; i < {tile}u; i = i + {wg}u) {{")
        e(f"if (base + i < N) {{ Y[base + i] = xs[i / {big}u][i % {big}u]; }}")
    e.close()


def render(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wg, g, big, r = p["wg"], p["groups"], p["slide"], p["run"]
    wsrc, xsrc, k_taps = p["wsrc"], p["xsrc"], s["K"]
    k4 = w_slots(s)
    tile = wg * g * big
    e = Emitter()
    e(f"// Conv1d slide: {tile * r} outputs per workgroup of {wg} ({r} tile(s) of {tile} in turn);",
      f"// each invocation owns {g} window(s) of {big} consecutive outputs; K unrolled: one new x",
      f"// per tap and window, {big} FMAs on it. W: {('workgroup vec4', 'storage', 'registers')[wsrc]};"
      f" X: {('staged', 'global')[xsrc]}.",
      f"// tile: {tile * r}")
    if p["v4out"]:
        e("@group(0) @binding(2) var<storage, read_write> Y: array<vec4<f32>>;")
    if xsrc == 0:
        e(f"var<workgroup> xs: array<array<f32, {big}>, {rows(p, s)}>;")
    if wsrc == 0:
        e(f"var<workgroup> ws: array<vec4<f32>, {k4}>;")
    open_main(e, wg)
    e(*TILE_GUARD, "let xlen = N + K - 1u;")
    if wsrc == 0:
        stage_weights(e, wg, k4)
        if xsrc == 1:
            e("workgroupBarrier();")
    elif wsrc == 2:
        e(*[f"let wr{k} = W[{k}u];" for k in range(k_taps)])
    e.open(f"for (var r = 0u; r < {r}u; r = r + 1u) {{")
    e(f"let base = (t.x * {r}u + r) * {tile}u;")
    if xsrc == 0:
        e("workgroupBarrier();  // the previous tile's readers are done with xs")
        e.open(f"for (var i = lid.x; i < {_span(p, s)}u; i = i + {wg}u) {{")
        e(f"xs[i / {big}u][i % {big}u] = X[min(base + i, xlen - 1u)];  // past the end: unused")
        e.close()
        e("workgroupBarrier();")
    _compute(e, p, s)
    _store(e, p)
    e.close()
    e.close()
    return e.text()

"""Conv1d C with runs longer than one vec4 (``run=R > 1``): R consecutive vec4 outputs per
run share one sliding window of X in registers.

With ``run=1`` each run of 4 outputs reads one vec4 of X from workgroup memory per 4
taps and does 16 FMAs with it: 1 byte of shared traffic per FMA, exactly what an
NVIDIA SM's shared memory delivers per FMA slot, so that kernel sits at about half
the FMA roof (25 TFLOP/s on the H200). A run of R vec4 needs only the window
X[v .. v+R] for taps 4s..4s+3, and the next step's window shifts by one vec4: one
new shared read per 16R FMAs. The K loop is unrolled completely (K/4 steps, known
when the kernel is generated), so every window vec4 has its own name and the taps
of W are read at constant indices (no bounds clamps). Runs are laid out R vec4
apart, so a quarter-warp's 8 reads land R x 16 bytes apart: conflict-free for odd
R, 2- or 4-way bank conflicts for even R (kept in the space to measure that).
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.base import TILE_GUARD, Emitter, Params, Size, open_main

MAX_STEPS = 64  # K up to 256: the unrolled kernel stays a few thousand lines at most


def w_slots(s: Size) -> int:
    """vec4 slots of W: the K taps, zero-padded to whole vec4."""
    return -(-s["K"] // 4)


def nx(p: Params, s: Size) -> int:
    """vec4 slots of the X window one workgroup stages (its outputs plus K-1 taps, padded)."""
    return p["run"] * p["wg"] * p["groups"] + w_slots(s) + 1


def phases(p: Params) -> int:
    """Arrays the X window is split over. ``lay=1`` puts window vec4 i in array i % run at
    slot i / run: a lane's run starts ``run`` vec4 after its neighbour's, so with one flat
    array a quarter-warp's 128-bit reads hit the same banks 2- or 4-way at even runs; split,
    every read of a step is one array at consecutive slots (conflict-free at any run)."""
    return p["run"] if p.get("lay", 0) else 1


def slot(i: str, ph: int) -> str:
    """The window's vec4 ``i`` (an expression) in a layout of ``ph`` phase arrays."""
    return f"xs[{i}]" if ph == 1 else f"xs[({i}) % {ph}u][({i}) / {ph}u]"


def check(p: Params, s: Size) -> str | None:
    if w_slots(s) > MAX_STEPS:
        return f"runs longer than one vec4 unroll the taps: K up to {4 * MAX_STEPS}"
    return None


def declare_window(e: Emitter, v4: int, n: int, k4: int, ph: int = 1) -> None:
    """Y as vec4 (``v4out``), the X window of ``n`` vec4 (in ``ph`` phase arrays) and the
    ``k4`` vec4 of W in workgroup memory."""
    if v4:
        e("@group(0) @binding(2) var<storage, read_write> Y: array<vec4<f32>>;")
    if ph == 1:
        e(f"var<workgroup> xs: array<vec4<f32>, {n}>;")
    else:
        e(f"var<workgroup> xs: array<array<vec4<f32>, {-(-n // ph)}>, {ph}>;")
    if k4:  # 0: the weights live in registers (conv1d_stream.py, wsrc=2)
        e(f"var<workgroup> ws: array<vec4<f32>, {k4}>;")


def stage_weights(e: Emitter, wg: int, k4: int) -> None:
    """W, zero-padded to whole vec4, into workgroup memory (no barrier)."""
    e.open(f"for (var i = lid.x; i < {k4}u; i = i + {wg}u) {{")
    parts = [f"select(0.0, W[min(i * 4u + {c}u, K - 1u)], i * 4u + {c}u < K)" for c in range(4)]
    e(f"ws[i] = vec4<f32>({', '.join(parts)});")
    e.close()


def stage_window(e: Emitter, wg: int, n: int, k4: int, ph: int = 1) -> None:
    """X window and W (zero-padded to whole vec4) into workgroup memory: every run length
    stages the same way (conv1d.py's runs of one vec4 too)."""
    e.open(f"for (var i = lid.x; i < {n}u; i = i + {wg}u) {{")
    e("let g0 = base + i * 4u;")
    parts = [f"select(0.0, X[min(g0 + {c}u, xlen - 1u)], g0 + {c}u < xlen)" for c in range(4)]
    e(f"{slot('i', ph)} = vec4<f32>({', '.join(parts)});")
    e.close()
    stage_weights(e, wg, k4)
    e("workgroupBarrier();")


def taps(e: Emitter, acc: str, w: str, p: str, n: str) -> None:
    """4 taps of one output vec4: the window pair (p, n) shifted by 0..3 lanes."""
    e(f"{acc} = fma({p}, vec4<f32>({w}.x), {acc});",
      f"{acc} = fma(vec4<f32>({p}.yzw, {n}.x), vec4<f32>({w}.y), {acc});",
      f"{acc} = fma(vec4<f32>({p}.zw, {n}.xy), vec4<f32>({w}.z), {acc});",
      f"{acc} = fma(vec4<f32>({p}.w, {n}.xyz), vec4<f32>({w}.w), {acc});")


def store(e: Emitter, o: str, acc: str, v4: int) -> None:
    """The four outputs from ``o`` on: one vec4 store (``v4out``) or four bounds-checked scalars."""
    if v4:
        e(f"if ({o} < N) {{ Y[{o} / 4u] = {acc}; }}")
    else:
        e(*[f"if ({o} + {c}u < N) {{ Y[{o} + {c}u] = {acc}[{c}]; }}" for c in range(4)])


def windows(e: Emitter, p: Params, s: Size, staged_w: bool = True) -> None:
    """Every invocation's ``groups`` runs of ``run`` vec4 from the staged window, K unrolled,
    stored from ``base`` on (conv1d_stream.py reuses it per streamed tile). ``staged_w``: each
    step reads its vec4 of W from workgroup memory; else w0.. are registers already."""
    wg, g, r, v4 = p["wg"], p["groups"], p["run"], p["v4out"]
    ph = phases(p)

    def read(j: int, c: int) -> str:  # vec4 c of run j's window: v{j} + c, or its phase slot
        return f"xs[v{j} + {c}u]" if ph == 1 else f"xs[{c % ph}][lid.x + {j * wg + c // ph}u]"

    for j in range(g):
        e(f"let v{j} = (lid.x + {j * wg}u) * {r}u;")
        e(*[f"var a{j}_{i} = vec4<f32>(0.0);" for i in range(r)])
        e(*[f"let x{j}_{i} = {read(j, i)};" for i in range(r)])
    for step in range(w_slots(s)):  # one scope: a vec4 this step reads is the next step's window too
        if staged_w:
            e(f"let w{step} = ws[{step}u];")
        for j in range(g):
            e(f"let x{j}_{step + r} = {read(j, step + r)};")
            for i in range(r):
                taps(e, f"a{j}_{i}", f"w{step}", f"x{j}_{step + i}", f"x{j}_{step + i + 1}")
    for j in range(g):
        for i in range(r):
            e(f"let o{j}_{i} = base + (v{j} + {i}u) * 4u;")
            store(e, f"o{j}_{i}", f"a{j}_{i}", v4)


def render(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wg, g, r, v4 = p["wg"], p["groups"], p["run"], p["v4out"]
    k4 = w_slots(s)
    tile = 4 * r * wg * g
    e = Emitter()
    e(f"// Conv1d regs, runs of {r} vec4: {tile} outputs per workgroup of {wg}; each invocation",
      f"// owns {g} run(s) of {4 * r} consecutive outputs sharing one register window of X;",
      f"// K unrolled: per 4 taps one new vec4 of X and {4 * r} vec4 FMAs per run.",
      f"// tile: {tile}")
    declare_window(e, v4, nx(p, s), k4, phases(p))
    open_main(e, wg)
    e(*TILE_GUARD, f"let base = t.x * {tile}u;", "let xlen = N + K - 1u;")
    stage_window(e, wg, nx(p, s), k4, phases(p))
    windows(e, p, s)
    e.close()
    return e.text()

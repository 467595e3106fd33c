"""SGEMM C, the hoisted layout (``lay=1``): every workgroup-memory read in the FMA loop has a
constant outer index and the thread's own coordinate as its inner one.

WGSL bounds-checks every dynamic index (Naga clamps it with ``min``), so the flat
layout's ``As[abuf + 40u + ty]`` costs an add and a clamp per read and keeps the
driver from folding the constant into the load's immediate offset: about 12 integer
instructions per 128 FMAs at 16x8 outputs per invocation, and on NVIDIA every one of
them takes an issue slot an FMA could have used. Here the tiles are 2-D,
``As[(buf * BK + kk) * TM4 + h][ty]``: the outer index is a constant (the K loop is
unrolled by two so the double buffer's index is one too), the clamp of ``ty`` is
loop-invariant, and each read is a base register plus an immediate. Global loads
use per-thread offsets computed once; the arithmetic is the flat layout's.
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.base import Emitter, Params, Size

HEAD = ("@compute @workgroup_size({wx}, {wy})\n"
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,\n"
        "        @builtin(local_invocation_index) li: u32) {{")


class _Shape:
    """The tile arithmetic every part of the generator shares."""

    def __init__(self, p: Params) -> None:
        self.bm, self.bn, self.bk, self.tm, self.tn = p["bm"], p["bn"], p["bk"], p["tm"], p["tn"]
        self.db, self.spec = bool(p["db"]), bool(p["spec"])
        self.wx, self.wy = self.bn // self.tn, self.bm // self.tm
        self.nt = self.wx * self.wy
        self.tm4, self.tn4 = self.tm // 4, self.tn // 4
        self.la, self.lb = self.bk * self.bm // 4, self.bk * self.bn // 4  # vec4 loads per slice
        self.sa, self.sb = -(-self.la // self.nt), -(-self.lb // self.nt)


def _guarded(e: Emitter, sh: _Shape, q: int, count: int, lines: list[str]) -> None:
    """Lines for the q-th vec4 a thread moves, inside a guard when the slice runs out first."""
    if q * sh.nt + sh.nt > count:
        e.open(f"if (li + {q * sh.nt}u < {count}u) {{")
        e(*lines)
        e.close()
    else:
        e(*lines)


def _offsets(e: Emitter, sh: _Shape) -> None:
    """Per-thread load and store positions, computed once outside the K loop."""
    k4, n4 = sh.bk // 4, sh.bn // 4
    for q in range(sh.sa):
        e(f"let ia{q} = li + {q * sh.nt}u;", f"let am{q} = ia{q} / {k4}u;", f"let ak{q} = (ia{q} % {k4}u) * 4u;",
          f"let sao{q} = ak{q} * {sh.tm4}u + (am{q} / 4u) / {sh.wy}u;",
          f"let sai{q} = (am{q} / 4u) % {sh.wy}u;", f"let sac{q} = am{q} % 4u;")
        if sh.spec:
            e(f"let ga{q} = (row0 + am{q}) * (K / 4u) + ak{q} / 4u;")
    for q in range(sh.sb):
        e(f"let ib{q} = li + {q * sh.nt}u;", f"let bkr{q} = ib{q} / {n4}u;",
          f"let bc{q} = col0 + (ib{q} % {n4}u) * 4u;",
          f"let sbo{q} = ib{q} / {sh.wx}u;", f"let sbi{q} = ib{q} % {sh.wx}u;")
        if sh.spec:
            e(f"let gb{q} = bkr{q} * (N / 4u) + bc{q} / 4u;")


def _load(e: Emitter, sh: _Shape, k0: str) -> None:
    """Prefetch the K-slice starting at k0 into the ra/rb registers."""
    for q in range(sh.sa):
        if sh.spec:
            line = f"ra{q} = A[ga{q} + ({k0}) / 4u];"
        else:
            parts = [f"select(0.0, A[min((row0 + am{q}) * K + {k0} + ak{q} + {c}u, M * K - 1u)], "
                     f"row0 + am{q} < M && {k0} + ak{q} + {c}u < K)" for c in range(4)]
            line = f"ra{q} = vec4<f32>({', '.join(parts)});"
        _guarded(e, sh, q, sh.la, [line])
    for q in range(sh.sb):
        if sh.spec:
            line = f"rb{q} = B[gb{q} + ({k0}) * (N / 4u)];"
        else:
            parts = [f"select(0.0, B[min(({k0} + bkr{q}) * N + bc{q} + {c}u, K * N - 1u)], "
                     f"{k0} + bkr{q} < K && bc{q} + {c}u < N)" for c in range(4)]
            line = f"rb{q} = vec4<f32>({', '.join(parts)});"
        _guarded(e, sh, q, sh.lb, [line])


def _store(e: Emitter, sh: _Shape, buf: int) -> None:
    """The prefetched registers into buffer ``buf``: A transposed (scalar), B as vec4."""
    for q in range(sh.sa):
        _guarded(e, sh, q, sh.la, [f"As[{(buf * sh.bk + c) * sh.tm4}u + sao{q}][sai{q}][sac{q}] = ra{q}[{c}];"
                                   for c in range(4)])
    for q in range(sh.sb):
        _guarded(e, sh, q, sh.lb, [f"Bs[{buf * sh.bk * sh.tn4}u + sbo{q}][sbi{q}] = rb{q};"])


def _compute(e: Emitter, sh: _Shape, buf: int) -> None:
    """BK rank-1 updates from buffer ``buf``; every read is [constant][tx or ty]."""
    for kk in range(sh.bk):
        row = buf * sh.bk + kk
        e(*[f"let a{h}_{kk} = As[{row * sh.tm4 + h}][ty];" for h in range(sh.tm4)])
        e(*[f"let b{g}_{kk} = Bs[{row * sh.tn4 + g}][tx];" for g in range(sh.tn4)])
        for i in range(sh.tm):
            a = f"vec4<f32>(a{i // 4}_{kk}.{'xyzw'[i % 4]})"
            e(*[f"c{i}_{g} = fma({a}, b{g}_{kk}, c{i}_{g});" for g in range(sh.tn4)])


def _step(e: Emitter, sh: _Shape, buf: int, nxt: int, k0: str, more: str | None) -> None:
    """One K-slice: prefetch the next, multiply this buffer, store the next into ``nxt``."""
    e.open("{")
    if more:
        e.open(f"if ({more}) {{")
    _load(e, sh, k0)
    if more:
        e.close()
    _compute(e, sh, buf)
    if not sh.db:
        e("workgroupBarrier();")
    if more:
        e.open(f"if ({more}) {{")
    _store(e, sh, nxt)
    if more:
        e.close()
    e.close()


def _epilogue(e: Emitter, sh: _Shape) -> None:
    for h in range(sh.tm4):
        for c in range(4):
            i = h * 4 + c
            e(f"let r{i} = row0 + ({h * sh.wy}u + ty) * 4u + {c}u;")
            for g in range(sh.tn4):
                colq = f"col0 / 4u + {g * sh.wx}u + tx"
                if sh.spec:
                    e(f"C[r{i} * (N / 4u) + {colq}] = c{i}_{g};")
                else:
                    for j in range(4):
                        e(f"if (r{i} < M && ({colq}) * 4u + {j}u < N) "
                          f"{{ C[r{i} * N + ({colq}) * 4u + {j}u] = c{i}_{g}[{j}]; }}")


def render(p: Params, s: Size, d: DeviceInfo | None) -> str:
    sh = _Shape(p)
    nbuf = 2 if sh.db else 1
    e = Emitter()
    e(f"// SGEMM vec4, hoisted layout: {sh.bm}x{sh.bn} tile, K-slices of {sh.bk}, {sh.tm}x{sh.tn} outputs",
      "// per invocation in vec4 registers; 2-D workgroup tiles read as [constant][tx|ty] so",
      "// the bounds clamps leave the FMA loop; next slice prefetched"
      + (", double-buffered (K loop unrolled by 2)." if sh.db else "."),
      "// size-specialised: M, N, K multiples of the tile" if sh.spec else "// general: bounds-checked",
      f"// tile: {sh.bn}x{sh.bm}")
    if sh.spec:
        e("@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;",
          "@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;",
          "@group(0) @binding(2) var<storage, read_write> C: array<vec4<f32>>;")
    e(f"var<workgroup> As: array<array<vec4<f32>, {sh.wy}>, {nbuf * sh.bk * sh.tm4}>;",
      f"var<workgroup> Bs: array<array<vec4<f32>, {sh.wx}>, {nbuf * sh.bk * sh.tn4}>;")
    e(HEAD.format(wx=sh.wx, wy=sh.wy))
    e.depth = 1
    e("let t = vajra_tile(wid);", "if (t.y >= TILES_Y) {", "    return;", "}",
      f"let row0 = t.y * {sh.bm}u;", f"let col0 = t.x * {sh.bn}u;", "let tx = lid.x;", "let ty = lid.y;")
    _offsets(e, sh)
    for i in range(sh.tm):
        e(*[f"var c{i}_{g} = vec4<f32>(0.0);" for g in range(sh.tn4)])
    e(*[f"var ra{q} = vec4<f32>(0.0);" for q in range(sh.sa)])
    e(*[f"var rb{q} = vec4<f32>(0.0);" for q in range(sh.sb)])
    e.open("{")
    _load(e, sh, "0u")
    _store(e, sh, 0)
    e.close()
    bk = sh.bk
    if sh.db:  # an even number of slices; a general kernel's extra slice loads zeros
        e(f"let KT = (K + {2 * bk - 1}u) / {2 * bk}u * 2u;" if not sh.spec else f"let KT = K / {bk}u;")
        e.open("for (var kt = 0u; kt < KT; kt = kt + 2u) {")
        e("workgroupBarrier();")
        _step(e, sh, 0, 1, f"(kt + 1u) * {bk}u", None)
        e("workgroupBarrier();", "let more = kt + 2u < KT;")
        _step(e, sh, 1, 0, f"(kt + 2u) * {bk}u", "more")
    else:
        e(f"let KT = (K + {bk - 1}u) / {bk}u;")
        e.open("for (var kt = 0u; kt < KT; kt = kt + 1u) {")
        e("workgroupBarrier();", "let more = kt + 1u < KT;")
        _step(e, sh, 0, 0, f"(kt + 1u) * {bk}u", "more")
    e.close()
    _epilogue(e, sh)
    e.close()
    return e.text()

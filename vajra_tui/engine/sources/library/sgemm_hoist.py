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
from vajra_tui.engine.sources.library.sgemm_tile import Tile, begin, bindings, epilogue, fmas, guarded, registers


def _offsets(e: Emitter, sh: Tile) -> None:
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


def _load(e: Emitter, sh: Tile, k0: str) -> None:
    """Prefetch the K-slice starting at k0 into the ra/rb registers."""
    for q in range(sh.sa):
        if sh.spec:
            line = f"ra{q} = A[ga{q} + ({k0}) / 4u];"
        else:
            parts = [f"select(0.0, A[min((row0 + am{q}) * K + {k0} + ak{q} + {c}u, M * K - 1u)], "
                     f"row0 + am{q} < M && {k0} + ak{q} + {c}u < K)" for c in range(4)]
            line = f"ra{q} = vec4<f32>({', '.join(parts)});"
        guarded(e, sh, q, sh.la, [line])
    for q in range(sh.sb):
        if sh.spec:
            line = f"rb{q} = B[gb{q} + ({k0}) * (N / 4u)];"
        else:
            parts = [f"select(0.0, B[min(({k0} + bkr{q}) * N + bc{q} + {c}u, K * N - 1u)], "
                     f"{k0} + bkr{q} < K && bc{q} + {c}u < N)" for c in range(4)]
            line = f"rb{q} = vec4<f32>({', '.join(parts)});"
        guarded(e, sh, q, sh.lb, [line])


def _store(e: Emitter, sh: Tile, buf: int) -> None:
    """The prefetched registers into buffer ``buf``: A transposed (scalar), B as vec4."""
    for q in range(sh.sa):
        guarded(e, sh, q, sh.la, [f"As[{(buf * sh.bk + c) * sh.tm4}u + sao{q}][sai{q}][sac{q}] = ra{q}[{c}];"
                                  for c in range(4)])
    for q in range(sh.sb):
        guarded(e, sh, q, sh.lb, [f"Bs[{buf * sh.bk * sh.tn4}u + sbo{q}][sbi{q}] = rb{q};"])


def _compute(e: Emitter, sh: Tile, buf: int) -> None:
    """BK rank-1 updates from buffer ``buf``; every read is [constant][tx or ty]."""
    for kk in range(sh.bk):
        row = buf * sh.bk + kk
        e(*[f"let a{h}_{kk} = As[{row * sh.tm4 + h}][ty];" for h in range(sh.tm4)])
        e(*[f"let b{g}_{kk} = Bs[{row * sh.tn4 + g}][tx];" for g in range(sh.tn4)])
        fmas(e, sh, kk)


def _step(e: Emitter, sh: Tile, buf: int, nxt: int, k0: str, more: str | None) -> None:
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


def render(p: Params, s: Size, d: DeviceInfo | None) -> str:
    sh = Tile(p)
    nbuf = 2 if sh.db else 1
    e = Emitter()
    e(f"// SGEMM vec4, hoisted layout: {sh.bm}x{sh.bn} tile, K-slices of {sh.bk}, {sh.tm}x{sh.tn} outputs",
      "// per invocation in vec4 registers; 2-D workgroup tiles read as [constant][tx|ty] so",
      "// the bounds clamps leave the FMA loop; next slice prefetched"
      + (", double-buffered (K loop unrolled by 2)." if sh.db else "."),
      "// size-specialised: M, N, K multiples of the tile" if sh.spec else "// general: bounds-checked",
      f"// tile: {sh.bn}x{sh.bm}")
    bindings(e, sh)
    e(f"var<workgroup> As: array<array<vec4<f32>, {sh.wy}>, {nbuf * sh.bk * sh.tm4}>;",
      f"var<workgroup> Bs: array<array<vec4<f32>, {sh.wx}>, {nbuf * sh.bk * sh.tn4}>;")
    begin(e, sh)
    _offsets(e, sh)
    registers(e, sh)
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
    epilogue(e, sh)
    e.close()
    return e.text()

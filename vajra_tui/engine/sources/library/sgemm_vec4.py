"""SGEMM C, the flat layout (``lay=0``): vec4 register tiles, A transposed in workgroup memory.

A (bm x bn) tile per workgroup, (tm x tn) outputs per invocation held in vec4
registers with constant indices (Python unrolls every loop that touches them), A
staged transposed in workgroup memory so both operands are read as vec4, the next
K-slice prefetched into registers while the current one is multiplied, and
optionally double-buffered shared memory (one barrier per slice). With ``spec=1``
it is size-specialised: vec4 global loads and stores and no bounds checks, only
proposed when M, N, K are multiples of the tile. ``lay=1`` lives in sgemm_hoist.py.
"""

from __future__ import annotations

from typing import NamedTuple

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library import sgemm_hoist
from vajra_tui.engine.sources.library.base import Emitter, Params, Size, storage_fits, workgroup_fits
from vajra_tui.engine.sources.library.sgemm_tile import Tile, begin, bindings, epilogue, fmas, guarded, registers


def fits_tile(p: Params, s: Size) -> bool:
    return s["M"] % p["bm"] == 0 and s["N"] % p["bn"] == 0 and s["K"] % p["bk"] == 0


def check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    """Why a point of sgemm/vec4 cannot run at this size on this adapter (either layout), or None."""
    bm, bn, bk, tm, tn = p["bm"], p["bn"], p["bk"], p["tm"], p["tn"]
    if bm % tm or bn % tn or bk % 4:
        return "tile not divisible by outputs per invocation"
    if p["spec"] and not fits_tile(p, s):
        return "size-specialised variant needs M, N, K multiples of the tile"
    if p["lay"] and p["spec"] and p["db"] and s["K"] % (2 * bk):
        return "the hoisted double buffer runs slices in pairs: K must be a multiple of 2 x bk"
    nbuf = 2 if p["db"] else 1
    return workgroup_fits(d, bn // tn, bm // tm) or storage_fits(d, 4 * nbuf * bk * (bm + bn))


def render(p: Params, s: Size, d: DeviceInfo | None) -> str:
    """sgemm/vec4's kernel: the hoisted layout for ``lay=1`` (sgemm_hoist.py), else the flat one."""
    if p["lay"]:
        return sgemm_hoist.render(p, s, d)
    return _flat(p, s, d)


class _Operand(NamedTuple):
    """How one operand's K-slice is prefetched: A and B differ only in these names and sizes."""

    buf: str  # the global buffer
    reg: str  # its prefetch registers
    idx: str  # names of the per-thread values: vec4 index, row, column
    r: str
    c: str
    slots: int  # vec4 registers per thread
    count: int  # vec4 loads per slice
    per_row: int  # vec4 per row of the slice
    rows: str  # the buffer's extent, for the bounds checks
    cols: str


def _header(e: Emitter, sh: Tile) -> None:
    """The comment, bindings, workgroup arrays, entry point and register declarations."""
    e(f"// SGEMM vec4: {sh.bm}x{sh.bn} tile, K-slices of {sh.bk}, {sh.tm}x{sh.tn} outputs per invocation in",
      "// vec4 registers; A stored transposed so both operands are read as vec4;",
      "// next slice prefetched into registers" + (", double-buffered." if sh.db else "."),
      "// size-specialised: M, N, K multiples of the tile" if sh.spec else "// general: bounds-checked",
      f"// tile: {sh.bn}x{sh.bm}")
    bindings(e, sh)
    e(f"var<workgroup> As: array<vec4<f32>, {sh.la * (2 if sh.db else 1)}>;",
      f"var<workgroup> Bs: array<vec4<f32>, {sh.lb * (2 if sh.db else 1)}>;")
    begin(e, sh)
    e(f"let KT = (K + {sh.bk - 1}u) / {sh.bk}u;")
    registers(e, sh)


def _load_operand(e: Emitter, sh: Tile, op: _Operand, row_base: str, col_base: str) -> None:
    """Prefetch one operand's K-slice into vec4 registers."""
    for q in range(op.slots):
        lines = [f"let {op.idx}{q} = li + {q * sh.nt}u;",
                 f"let {op.r}{q} = {row_base} + {op.idx}{q} / {op.per_row}u;",
                 f"let {op.c}{q} = {col_base} + ({op.idx}{q} % {op.per_row}u) * 4u;"]
        if sh.spec:
            lines.append(f"{op.reg}{q} = {op.buf}[({op.r}{q} * {op.cols} + {op.c}{q}) / 4u];")
        else:
            parts = [f"select(0.0, {op.buf}[min({op.r}{q} * {op.cols} + {op.c}{q} + {k}u, "
                     f"{op.rows} * {op.cols} - 1u)], "
                     f"{op.r}{q} < {op.rows} && {op.c}{q} + {k}u < {op.cols})" for k in range(4)]
            lines.append(f"{op.reg}{q} = vec4<f32>({', '.join(parts)});")
        guarded(e, sh, q, op.count, lines)


def _load(e: Emitter, sh: Tile, k0: str) -> None:
    """Prefetch the K-slice starting at ``k0`` of both operands into the ra/rb registers."""
    _load_operand(e, sh, _Operand("A", "ra", "ia", "am", "ak", sh.sa, sh.la, sh.bk // 4, "M", "K"), "row0", k0)
    _load_operand(e, sh, _Operand("B", "rb", "ib", "bk", "bn", sh.sb, sh.lb, sh.bn // 4, "K", "N"), k0, "col0")


def _store(e: Emitter, sh: Tile, abuf: str, bbuf: str) -> None:
    """The prefetched registers into workgroup memory: A transposed, B as loaded."""
    for q in range(sh.sa):
        lines = [f"let sa{q} = li + {q * sh.nt}u;", f"let sm{q} = sa{q} / {sh.bk // 4}u;",
                 f"let sk{q} = (sa{q} % {sh.bk // 4}u) * 4u;"]
        lines += [f"As[{abuf}(sk{q} + {c}u) * {sh.bm // 4}u + sm{q} / 4u][sm{q} % 4u] = ra{q}[{c}];" for c in range(4)]
        guarded(e, sh, q, sh.la, lines)
    for q in range(sh.sb):
        guarded(e, sh, q, sh.lb, [f"Bs[{bbuf}li + {q * sh.nt}u] = rb{q};"])


def _compute(e: Emitter, sh: Tile, abuf: str, bbuf: str) -> None:
    """One K-slice's FMAs from workgroup memory, every loop unrolled (constant register indices)."""
    for kk in range(sh.bk):
        e(*[f"let a{h}_{kk} = As[{abuf}{kk * sh.bm // 4 + h * sh.wy}u + ty];" for h in range(sh.tm4)])
        e(*[f"let b{g}_{kk} = Bs[{bbuf}{kk * sh.bn // 4 + g * sh.wx}u + tx];" for g in range(sh.tn4)])
        fmas(e, sh, kk)


def _k_loop(e: Emitter, sh: Tile) -> None:
    """The first slice staged, then the loop over K: prefetch the next slice while multiplying this one."""
    e.open("{")
    _load(e, sh, "0u")
    e.close()
    e.open("{")
    _store(e, sh, "", "")
    e.close()
    e.open("for (var kt = 0u; kt < KT; kt = kt + 1u) {")
    if sh.db:
        e("workgroupBarrier();", f"let abuf = (kt & 1u) * {sh.la}u;", f"let bbuf = (kt & 1u) * {sh.lb}u;",
          "let more = kt + 1u < KT;")
        e.open("if (more) {")
        _load(e, sh, f"(kt + 1u) * {sh.bk}u")
        e.close()
        _compute(e, sh, "abuf + ", "bbuf + ")
        e.open("if (more) {")
        e(f"let nabuf = {sh.la}u - abuf;", f"let nbbuf = {sh.lb}u - bbuf;")
        _store(e, sh, "nabuf + ", "nbbuf + ")
        e.close()
    else:
        e("workgroupBarrier();", "let more = kt + 1u < KT;")
        e.open("if (more) {")
        _load(e, sh, f"(kt + 1u) * {sh.bk}u")
        e.close()
        _compute(e, sh, "", "")
        e("workgroupBarrier();")
        e.open("if (more) {")
        _store(e, sh, "", "")
        e.close()
    e.close()


def _flat(p: Params, s: Size, d: DeviceInfo | None) -> str:
    """The flat layout's kernel (``lay=0``), built from the parts above."""
    sh = Tile(p)
    e = Emitter()
    _header(e, sh)
    _k_loop(e, sh)
    epilogue(e, sh)
    e.close()
    return e.text()

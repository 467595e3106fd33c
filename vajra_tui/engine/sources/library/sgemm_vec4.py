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

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library import sgemm_hoist
from vajra_tui.engine.sources.library.base import Emitter, Params, Size, storage_fits, workgroup_fits

HEAD = ("@compute @workgroup_size({wx}, {wy})\n"
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,\n"
        "        @builtin(local_invocation_index) li: u32) {{")


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


def _flat(p: Params, s: Size, d: DeviceInfo | None) -> str:
    bm, bn, bk, tm, tn, db, spec = p["bm"], p["bn"], p["bk"], p["tm"], p["tn"], p["db"], p["spec"]
    wx, wy = bn // tn, bm // tm
    nt = wx * wy
    asz, bsz = bk * bm // 4, bk * bn // 4  # vec4 slots of one A / B slice
    la, lb = asz, bsz  # vec4 loads per slice
    sa, sb = -(-la // nt), -(-lb // nt)
    e = Emitter()
    e(f"// SGEMM vec4: {bm}x{bn} tile, K-slices of {bk}, {tm}x{tn} outputs per invocation in",
      "// vec4 registers; A stored transposed so both operands are read as vec4;",
      "// next slice prefetched into registers" + (", double-buffered." if db else "."),
      "// size-specialised: M, N, K multiples of the tile" if spec else "// general: bounds-checked",
      f"// tile: {bn}x{bm}")
    if spec:
        e("@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;",
          "@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;",
          "@group(0) @binding(2) var<storage, read_write> C: array<vec4<f32>>;")
    e(f"var<workgroup> As: array<vec4<f32>, {asz * (2 if db else 1)}>;",
      f"var<workgroup> Bs: array<vec4<f32>, {bsz * (2 if db else 1)}>;")
    e(HEAD.format(wx=wx, wy=wy))
    e.depth = 1
    e("let t = vajra_tile(wid);", "if (t.y >= TILES_Y) {", "    return;", "}",
      f"let row0 = t.y * {bm}u;", f"let col0 = t.x * {bn}u;", "let tx = lid.x;", "let ty = lid.y;",
      f"let KT = (K + {bk - 1}u) / {bk}u;")
    for i in range(tm):
        e(*[f"var c{i}_{g} = vec4<f32>(0.0);" for g in range(tn // 4)])
    e(*[f"var ra{q} = vec4<f32>(0.0);" for q in range(sa)])
    e(*[f"var rb{q} = vec4<f32>(0.0);" for q in range(sb)])

    def load_operand(buf: str, reg: str, idx: str, r: str, c: str, slots: int, count: int,
                     row_base: str, col_base: str, per_row: int, rows: str, cols: str) -> None:
        """Prefetch one operand's K-slice into vec4 registers (A and B differ only in names)."""
        for q in range(slots):
            guard = q * nt + nt > count
            if guard:
                e.open(f"if (li + {q * nt}u < {count}u) {{")
            e(f"let {idx}{q} = li + {q * nt}u;",
              f"let {r}{q} = {row_base} + {idx}{q} / {per_row}u;",
              f"let {c}{q} = {col_base} + ({idx}{q} % {per_row}u) * 4u;")
            if spec:
                e(f"{reg}{q} = {buf}[({r}{q} * {cols} + {c}{q}) / 4u];")
            else:
                parts = [f"select(0.0, {buf}[min({r}{q} * {cols} + {c}{q} + {k}u, {rows} * {cols} - 1u)], "
                         f"{r}{q} < {rows} && {c}{q} + {k}u < {cols})" for k in range(4)]
                e(f"{reg}{q} = vec4<f32>({', '.join(parts)});")
            if guard:
                e.close()

    def load(k0: str) -> None:
        load_operand("A", "ra", "ia", "am", "ak", sa, la, "row0", k0, bk // 4, "M", "K")
        load_operand("B", "rb", "ib", "bk", "bn", sb, lb, k0, "col0", bn // 4, "K", "N")

    def store(abuf: str, bbuf: str) -> None:
        for q in range(sa):
            guard = q * nt + nt > la
            if guard:
                e.open(f"if (li + {q * nt}u < {la}u) {{")
            e(f"let sa{q} = li + {q * nt}u;",
              f"let sm{q} = sa{q} / {bk // 4}u;", f"let sk{q} = (sa{q} % {bk // 4}u) * 4u;")
            for c in range(4):
                e(f"As[{abuf}(sk{q} + {c}u) * {bm // 4}u + sm{q} / 4u][sm{q} % 4u] = ra{q}[{c}];")
            if guard:
                e.close()
        for q in range(sb):
            guard = q * nt + nt > lb
            if guard:
                e.open(f"if (li + {q * nt}u < {lb}u) {{")
            e(f"Bs[{bbuf}li + {q * nt}u] = rb{q};")
            if guard:
                e.close()

    def compute(abuf: str, bbuf: str) -> None:
        for kk in range(bk):
            e(*[f"let a{h}_{kk} = As[{abuf}{kk * bm // 4 + h * wy}u + ty];" for h in range(tm // 4)])
            e(*[f"let b{g}_{kk} = Bs[{bbuf}{kk * bn // 4 + g * wx}u + tx];" for g in range(tn // 4)])
            for i in range(tm):
                a = f"vec4<f32>(a{i // 4}_{kk}.{'xyzw'[i % 4]})"
                e(*[f"c{i}_{g} = fma({a}, b{g}_{kk}, c{i}_{g});" for g in range(tn // 4)])

    e.open("{")
    load("0u")
    e.close()
    e.open("{")
    store("", "")
    e.close()
    e.open("for (var kt = 0u; kt < KT; kt = kt + 1u) {")
    if db:
        e("workgroupBarrier();", f"let abuf = (kt & 1u) * {asz}u;", f"let bbuf = (kt & 1u) * {bsz}u;",
          "let more = kt + 1u < KT;")
        e.open("if (more) {")
        load(f"(kt + 1u) * {bk}u")
        e.close()
        compute("abuf + ", "bbuf + ")
        e.open("if (more) {")
        e(f"let nabuf = {asz}u - abuf;", f"let nbbuf = {bsz}u - bbuf;")
        store("nabuf + ", "nbbuf + ")
        e.close()
    else:
        e("workgroupBarrier();", "let more = kt + 1u < KT;")
        e.open("if (more) {")
        load(f"(kt + 1u) * {bk}u")
        e.close()
        compute("", "")
        e("workgroupBarrier();")
        e.open("if (more) {")
        store("", "")
        e.close()
    e.close()
    for h in range(tm // 4):
        for c in range(4):
            i = h * 4 + c
            e(f"let r{i} = row0 + ({h * wy}u + ty) * 4u + {c}u;")
            for g in range(tn // 4):
                colq = f"col0 / 4u + {g * wx}u + tx"
                if spec:
                    e(f"C[r{i} * (N / 4u) + {colq}] = c{i}_{g};")
                else:
                    for j in range(4):
                        e(f"if (r{i} < M && ({colq}) * 4u + {j}u < N) "
                          f"{{ C[r{i} * N + ({colq}) * 4u + {j}u] = c{i}_{g}[{j}]; }}")
    e.close()
    return e.text()



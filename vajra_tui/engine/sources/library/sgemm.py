"""SGEMM templates: direct register blocking (A), shared tiles (B), vec4 tiles (C).

C is the fast one: a (bm x bn) tile per workgroup, (tm x tn) outputs per
invocation held in vec4 registers with constant indices (Python unrolls every
loop that touches them), A staged transposed in workgroup memory so both operands
are read as vec4, the next K-slice prefetched into registers while the current one
is multiplied, and optionally double-buffered shared memory (one barrier per
slice). With ``spec=1`` it is size-specialised: vec4 global loads and stores and no
bounds checks, only proposed when M, N, K are multiples of the tile.
"""

from __future__ import annotations

from ...events import DeviceInfo
from .base import Emitter, Params, Size, Template, big_gpu, storage_fits, workgroup_fits

HEAD = ("@compute @workgroup_size({wx}, {wy})\n"
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,\n"
        "        @builtin(local_invocation_index) li: u32) {{")


# ---- A: direct, register-blocked, no shared memory ----------------------------------
def _direct_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    return workgroup_fits(d, p["wx"], p["wy"])


def _direct(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, wy, tm, tn = p["wx"], p["wy"], p["tm"], p["tn"]
    e = Emitter()
    e(f"// SGEMM direct: {wx}x{wy} workgroup, {tm}x{tn} outputs per invocation (strided,",
      "// so loads stay coalesced), operands straight from global memory.",
      f"// tile: {wx * tn}x{wy * tm}")
    e(HEAD.format(wx=wx, wy=wy))
    e.depth = 1
    e("let t = vajra_tile(wid);", "if (t.y >= TILES_Y) {", "    return;", "}")
    for i in range(tm):
        e(f"let r{i} = t.y * {wy * tm}u + lid.y + {i * wy}u;",
          f"let ra{i} = min(r{i}, M - 1u) * K;")
    for j in range(tn):
        e(f"let c{j} = t.x * {wx * tn}u + lid.x + {j * wx}u;", f"let cb{j} = min(c{j}, N - 1u);")
    for i in range(tm):
        e(*[f"var acc{i}_{j} = 0.0;" for j in range(tn)])
    e.open("for (var k = 0u; k < K; k = k + 1u) {")
    e(*[f"let a{i} = A[ra{i} + k];" for i in range(tm)])
    e(*[f"let b{j} = B[k * N + cb{j}];" for j in range(tn)])
    for i in range(tm):
        e(*[f"acc{i}_{j} = fma(a{i}, b{j}, acc{i}_{j});" for j in range(tn)])
    e.close()
    for i in range(tm):
        for j in range(tn):
            e(f"if (r{i} < M && c{j} < N) {{ C[r{i} * N + c{j}] = acc{i}_{j}; }}")
    e.close()
    return e.text()


# ---- B: shared-memory tiles, scalar --------------------------------------------------
def _tiled_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    bm, bn, bk, tm, tn = p["bm"], p["bn"], p["bk"], p["tm"], p["tn"]
    if bm % tm or bn % tn:
        return "tile not divisible by outputs per invocation"
    return workgroup_fits(d, bn // tn, bm // tm) or storage_fits(d, 4 * bk * (bm + bn))


def _tiled(p: Params, s: Size, d: DeviceInfo | None) -> str:
    bm, bn, bk, tm, tn = p["bm"], p["bn"], p["bk"], p["tm"], p["tn"]
    wx, wy = bn // tn, bm // tm
    nt = wx * wy
    e = Emitter()
    e(f"// SGEMM tiled: {bm}x{bn} tile, K-slices of {bk} in workgroup memory,",
      f"// {tm}x{tn} outputs per invocation (strided: conflict-free shared reads).",
      f"// tile: {bn}x{bm}",
      f"var<workgroup> As: array<f32, {bm * bk}>;",
      f"var<workgroup> Bs: array<f32, {bk * bn}>;")
    e(HEAD.format(wx=wx, wy=wy))
    e.depth = 1
    e("let t = vajra_tile(wid);", "if (t.y >= TILES_Y) {", "    return;", "}",
      f"let row0 = t.y * {bm}u;", f"let col0 = t.x * {bn}u;")
    for i in range(tm):
        e(*[f"var acc{i}_{j} = 0.0;" for j in range(tn)])
    e.open(f"for (var k0 = 0u; k0 < K; k0 = k0 + {bk}u) {{")
    e.open(f"for (var i = li; i < {bm * bk}u; i = i + {nt}u) {{")
    e(f"let r = row0 + i / {bk}u;", f"let k = k0 + i % {bk}u;",
      "As[i] = select(0.0, A[min(r * K + k, M * K - 1u)], r < M && k < K);")
    e.close()
    e.open(f"for (var i = li; i < {bk * bn}u; i = i + {nt}u) {{")
    e(f"let k = k0 + i / {bn}u;", f"let c = col0 + i % {bn}u;",
      "Bs[i] = select(0.0, B[min(k * N + c, K * N - 1u)], k < K && c < N);")
    e.close()
    e("workgroupBarrier();")
    e.open(f"for (var kk = 0u; kk < {bk}u; kk = kk + 1u) {{")
    e(*[f"let a{i} = As[(lid.y + {i * wy}u) * {bk}u + kk];" for i in range(tm)])
    e(*[f"let b{j} = Bs[kk * {bn}u + lid.x + {j * wx}u];" for j in range(tn)])
    for i in range(tm):
        e(*[f"acc{i}_{j} = fma(a{i}, b{j}, acc{i}_{j});" for j in range(tn)])
    e.close()
    e("workgroupBarrier();")
    e.close()
    for i in range(tm):
        e(f"let r{i} = row0 + lid.y + {i * wy}u;")
        for j in range(tn):
            e(f"if (r{i} < M && col0 + lid.x + {j * wx}u < N) "
              f"{{ C[r{i} * N + col0 + lid.x + {j * wx}u] = acc{i}_{j}; }}")
    e.close()
    return e.text()


# ---- C: vec4 registers, transposed A tile, prefetch, optional double buffer ---------
def fits_tile(p: Params, s: Size) -> bool:
    return s["M"] % p["bm"] == 0 and s["N"] % p["bn"] == 0 and s["K"] % p["bk"] == 0


def _vec4_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    bm, bn, bk, tm, tn = p["bm"], p["bn"], p["bk"], p["tm"], p["tn"]
    if bm % tm or bn % tn or bk % 4:
        return "tile not divisible by outputs per invocation"
    if p["spec"] and not fits_tile(p, s):
        return "size-specialised variant needs M, N, K multiples of the tile"
    nbuf = 2 if p["db"] else 1
    return workgroup_fits(d, bn // tn, bm // tm) or storage_fits(d, 4 * nbuf * bk * (bm + bn))


def _vec4(p: Params, s: Size, d: DeviceInfo | None) -> str:
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


TEMPLATES = [
    Template("sgemm", "direct", "A", "workgroup geometry + strided register blocking",
             {"wx": (8, 16, 32, 64), "wy": (1, 2, 4, 8, 16), "tm": (1, 2, 4), "tn": (1, 2, 4)},
             _direct, _direct_check),
    Template("sgemm", "tiled", "B", "shared-memory tiles, scalar",
             {"bm": (16, 32, 64, 128), "bn": (16, 32, 64, 128), "bk": (8, 16, 32),
              "tm": (1, 2, 4, 8), "tn": (1, 2, 4, 8)},
             _tiled, _tiled_check),
    Template("sgemm", "vec4", "C", "vec4 register tiles, transposed A, prefetch",
             {"bm": (32, 64, 128, 256), "bn": (32, 64, 128, 256), "bk": (4, 8, 16, 32),
              "tm": (4, 8, 16), "tn": (4, 8, 16), "db": (0, 1), "spec": (0, 1)},
             _vec4, _vec4_check, general=lambda p: not p["spec"]),
]


def priors(s: Size, d: DeviceInfo | None) -> dict[str, list[Params]]:
    """Best guesses per strategy, best first: big tiles for big problems, and for small
    ones tiles small enough that a discrete GPU still gets >= ~128 workgroups."""
    want = 120 if big_gpu(d) else 1

    def tiles(bm: int, bn: int) -> int:
        return -(-s["M"] // bm) * -(-s["N"] // bn)

    c = []
    for bm, bn, tm, tn, bk in [(128, 128, 8, 8, 8), (128, 64, 8, 8, 8), (64, 64, 8, 8, 8),
                               (64, 64, 4, 4, 8), (64, 32, 4, 4, 8), (32, 32, 4, 4, 8)]:
        for db in (1, 0):
            p = {"bm": bm, "bn": bn, "bk": bk, "tm": tm, "tn": tn, "db": db, "spec": 1}
            q = {**p, "spec": 0}
            c.append((tiles(bm, bn) >= want, p))
            c.append((tiles(bm, bn) >= want, q))
    c.sort(key=lambda x: not x[0])  # stable: keeps size order within each group
    b = [{"bm": bm, "bn": bn, "bk": 16, "tm": tm, "tn": tn} for bm, bn, tm, tn in
         sorted([(64, 64, 4, 4), (32, 32, 2, 2), (16, 16, 1, 1)],
                key=lambda t: tiles(t[0], t[1]) < want)]
    a = [{"wx": 16, "wy": 16, "tm": 2, "tn": 2}, {"wx": 16, "wy": 16, "tm": 1, "tn": 1}]
    return {"A": a, "B": b, "C": [p for _, p in c]}

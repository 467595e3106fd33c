"""Attention B, "tiled": both products register-tiled, SGEMM-style, and no per-block reductions.

A workgroup of ``wx`` x ``wy`` lanes owns ``bq = wy * tm`` query rows of one head; keys pass
through workgroup memory ``bk = wx * tn`` at a time (K and V as vec4 rows, each row padded by
one vec4 so the ``wx`` lanes of a row, reading ``wx`` different keys at one column, hit
distinct banks while the lanes of other rows read the same addresses: a broadcast).

Lane ``(tx, ty)`` keeps its ``tm`` query rows in registers for the whole kernel (D/4 vec4
each, pre-scaled by log2(e)/sqrt(D) so the weights are ``exp2``) and owns keys
``tx + b*wx`` of every block: per block it computes ``tm x tn`` scores from vec4 reads of K,
then adds ``P·V`` with P still in registers and V read as vec4 rows, into ``tm x D/4`` vec4
outputs. The lanes of a row therefore hold disjoint key subsets and each runs its own online
softmax (running max ``m`` and sum ``l``, the outputs rescaled only when the lane's max
rises): the block loop has no reductions and two barriers. The ``wx`` partial results of a
row are combined once at the end (split-K style: a common max, the sums, then the outputs
added lane after lane in workgroup memory), and written out as vec4.

Registers grow as 2 x tm x D floats (Q and O), so D=128 wants tm=1. Needs D % 4 == 0.
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.attention_parts import (NEG, QSCALE, heaviest_first, max_of, open_key_loop,
                                                              vec4_bindings)
from vajra_tui.engine.sources.library.base import Emitter, Params, Size, open_main, storage_fits, workgroup_fits


def shape(p: Params, s: Size) -> tuple[int, int, int, int]:
    """(bq, bk, d4, pad): rows and keys per block, vec4 per row, padded vec4 stride of a key row."""
    d4 = s["D"] // 4
    return p["wy"] * p["tm"], p["wx"] * p["tn"], d4, d4 + 1


def _extra(p: Params, s: Size) -> tuple[bool, bool]:
    """Whether the final combine needs arrays of its own (else it reuses Ks and Vs):
    (the bq x D output sums, the bq x wx per-lane max and sum)."""
    bq, bk, d4, pad = shape(p, s)
    return bq * d4 > bk * pad, bq * p["wx"] > bk * pad


def smem_bytes(p: Params, s: Size) -> int:
    bq, bk, d4, pad = shape(p, s)
    own_o, own_ml = _extra(p, s)
    return 16 * (2 * bk * pad + (bq * d4 if own_o else 0) + (bq * p["wx"] if own_ml else 0))


def check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    """Why this point cannot run at this size on this adapter, or None."""
    if s["D"] % 4:
        return f"D={s['D']} is not a multiple of 4 (Q, K, V and O are read as vec4)"
    if p["tm"] * s["D"] > 128 or p["tm"] * p["tn"] > 16:
        return "register tile too large"
    return workgroup_fits(d, p["wx"], p["wy"]) or storage_fits(d, smem_bytes(p, s))


def _header(e: Emitter, p: Params, s: Size) -> tuple[str, str]:
    """Comment, bindings, workgroup arrays, entry point; the names the combine writes to."""
    bq, bk, d4, pad = shape(p, s)
    wx, wy, tm, tn = p["wx"], p["wy"], p["tm"], p["tn"]
    own_o, own_ml = _extra(p, s)
    e(f"// Attention, register-tiled: {bq} query rows per workgroup of {wx}x{wy}, keys in blocks of {bk}",
      f"// (K, V as padded vec4 rows); per lane {tm} Q rows in registers, {tm}x{tn} scores, P.V from",
      "// registers into vec4 outputs; a per-lane online softmax over its own keys, combined once at the end.",
      f"// tile: {bq}*D x 1")
    vec4_bindings(e)
    e(f"var<workgroup> Ks: array<vec4<f32>, {bk * pad}>;", f"var<workgroup> Vs: array<vec4<f32>, {bk * pad}>;")
    if own_o:
        e(f"var<workgroup> Os: array<vec4<f32>, {bq * d4}>;")
    if own_ml:
        e(f"var<workgroup> ML: array<vec4<f32>, {bq * wx}>;")
    open_main(e, wx, wy)
    return ("Os" if own_o else "Ks"), ("ML" if own_ml else "Vs")


def _setup(e: Emitter, p: Params, s: Size) -> None:
    """Tile coordinates (causal: the heaviest query blocks first), Q rows into registers."""
    bq, _, d4, _ = shape(p, s)
    heaviest_first(e, bq, d4)
    e(QSCALE, "let tx = lid.x;")
    for a in range(p["tm"]):
        e(f"let r{a} = lid.y + {a * p['wy']}u;",
          f"let qrow{a} = head4 + min(q0 + r{a}, S - 1u) * {d4}u;",
          *[f"let q{a}_{c} = Q[qrow{a} + {c}u] * qscale;" for c in range(d4)],
          f"var m{a} = {NEG};", f"var l{a} = 0.0;",
          *[f"var o{a}_{c} = vec4<f32>(0.0);" for c in range(d4)])


def _stage(e: Emitter, p: Params, s: Size) -> None:
    """The key block k0.. of K and V into workgroup memory (zeros past S), then a barrier."""
    _, bk, d4, pad = shape(p, s)
    nt = p["wx"] * p["wy"]
    e.open(f"for (var si = li; si < {bk * d4}u; si = si + {nt}u) {{")
    e(f"let sj = si / {d4}u;", f"let sc = si % {d4}u;", "let key = k0 + sj;",
      f"let g = head4 + min(key, S - 1u) * {d4}u + sc;", f"let w = sj * {pad}u + sc;",
      "Ks[w] = select(vec4<f32>(0.0), K[g], key < S);",
      "Vs[w] = select(vec4<f32>(0.0), V[g], key < S);")
    e.close()
    e("workgroupBarrier();")


def _block(e: Emitter, p: Params, s: Size) -> None:
    """One block's scores (masked), the lane's online-softmax step and P·V, all unrolled."""
    _, _, d4, pad = shape(p, s)
    wx, tm, tn = p["wx"], p["tm"], p["tn"]
    for b in range(tn):
        e(f"let key{b} = k0 + tx + {b * wx}u;", f"let kb{b} = (tx + {b * wx}u) * {pad}u;")
        e(*[f"var s{a}_{b} = 0.0;" for a in range(tm)])
    for c in range(d4):
        for b in range(tn):
            e(f"let k{b}_{c} = Ks[kb{b} + {c}u];")
            e(*[f"s{a}_{b} = s{a}_{b} + dot(q{a}_{c}, k{b}_{c});" for a in range(tm)])
    for a in range(tm):
        for b in range(tn):
            e(f"let ok{a}_{b} = key{b} < S && (MASK != 2u || key{b} <= q0 + r{a});",
              f"s{a}_{b} = select({NEG}, s{a}_{b}, ok{a}_{b});")
        e(f"let bm{a} = {max_of([f's{a}_{b}' for b in range(tn)])};")
        e.open(f"if (bm{a} > m{a}) {{")  # lane-local: rescale only when this lane's max rises
        e(f"let al{a} = exp2(m{a} - bm{a});", f"m{a} = bm{a};", f"l{a} = l{a} * al{a};",
          *[f"o{a}_{c} = o{a}_{c} * al{a};" for c in range(d4)])
        e.close()
        for b in range(tn):
            e(f"let p{a}_{b} = select(0.0, exp2(s{a}_{b} - m{a}), ok{a}_{b});", f"l{a} = l{a} + p{a}_{b};")
    for b in range(tn):
        for c in range(d4):
            e(f"let v{b}_{c} = Vs[kb{b} + {c}u];")
            e(*[f"o{a}_{c} = fma(vec4<f32>(p{a}_{b}), v{b}_{c}, o{a}_{c});" for a in range(tm)])


def _combine(e: Emitter, p: Params, s: Size, osum: str, ml: str) -> None:
    """The row's wx partial (m, l, O) into one normalised output, then O written as vec4."""
    bq, _, d4, _ = shape(p, s)
    wx, tm, nt = p["wx"], p["tm"], p["wx"] * p["wy"]
    e(*[f"{ml}[r{a} * {wx}u + tx] = vec4<f32>(m{a}, l{a}, 0.0, 0.0);" for a in range(tm)])
    e("workgroupBarrier();")
    for a in range(tm):
        e(f"var mx{a} = {ml}[r{a} * {wx}u].x;",
          f"for (var u = 1u; u < {wx}u; u = u + 1u) {{ mx{a} = max(mx{a}, {ml}[r{a} * {wx}u + u].x); }}",
          f"var sm{a} = 0.0;",
          f"for (var u = 0u; u < {wx}u; u = u + 1u) {{ let e{a} = {ml}[r{a} * {wx}u + u]; "
          f"sm{a} = sm{a} + e{a}.y * exp2(e{a}.x - mx{a}); }}",
          f"let f{a} = exp2(m{a} - mx{a}) / sm{a};")
    e.open(f"for (var u = 0u; u < {wx}u; u = u + 1u) {{")
    e.open("if (tx == u) {")
    for a in range(tm):
        for c in range(d4):
            slot = f"{osum}[r{a} * {d4}u + {c}u]"
            e(f"{slot} = select({slot}, vec4<f32>(0.0), u == 0u) + o{a}_{c} * f{a};")
    e.close()
    e("workgroupBarrier();")
    e.close()
    e.open(f"for (var oi = li; oi < {bq * d4}u; oi = oi + {nt}u) {{")
    e(f"let orow = q0 + oi / {d4}u;")
    e(f"if (orow < S) {{ O[head4 + orow * {d4}u + oi % {d4}u] = {osum}[oi]; }}")
    e.close()


def render(p: Params, s: Size, d: DeviceInfo | None) -> str:
    bq, bk, _, _ = shape(p, s)
    e = Emitter()
    osum, ml = _header(e, p, s)
    _setup(e, p, s)
    open_key_loop(e, bq, bk)
    _stage(e, p, s)
    _block(e, p, s)
    e("workgroupBarrier();")
    e.close()
    _combine(e, p, s, osum, ml)
    e.close()
    return e.text()


AXES = {"wx": (2, 4, 8, 16, 32), "wy": (2, 4, 8, 16, 32), "tm": (1, 2), "tn": (1, 2, 4, 8)}

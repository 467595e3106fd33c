"""Attention templates: FlashAttention-2 style, one query block per workgroup.

Every template is one design with three faces: a workgroup of ``wx`` x ``wy`` lanes
owns ``bq = wy * tq`` query rows of one head (tile ``bq*D x 1``); the head's keys
pass through workgroup memory ``bk`` at a time (K and V staged, Q staged once and
pre-scaled by log2(e)/sqrt(D) so the weights are ``exp2``). Lane ``(tx, ty)`` holds
``tq`` rows (``ty + a*wy``) x ``bk/wx`` keys of scores and ``tq`` x ``D/wx`` outputs, so
both products are register-blocked. The softmax is online: per row a running max
``m`` and sum ``l``; each block's max is reduced over the row's ``wx`` lanes, the
block's weights go through workgroup memory to the P·V product, and ``l`` stays a
per-lane partial (every lane of a row rescales by the same factor), summed once at
the end. A causal workgroup stops at its last row's key, so it does half the work.

A: scalar, the reductions through workgroup memory (``sg=0``) or by ``subgroupShuffleXor``
butterflies (``sg=1``; subgroupMax/Add would mix rows, as several rows share a subgroup),
only where the adapter's smallest subgroup holds ``wx`` lanes. B ("tiled",
attention_gen.py): both products register-tiled SGEMM-style, Q in registers, a per-lane
online softmax with no per-block reductions. It replaced the subgroup-only template, the
slowest of the three on the H200 (#27); A keeps its reductions. C ("outer",
attention_outer.py): Q, K, P and V transposed in workgroup memory as vec4 columns and both
products as outer products, SGEMM's vec4 design; it replaced A with V and O as vec4 (#27:
at 14.5 ms the slowest on the H200).

C also splits the keys (``ks`` > 1, split-K, attention_split.py): each query block's keys
over ``ks`` workgroups, whose partial (max, sum, O) results the workload's optional
``combine`` pass merges. On a discrete GPU it is proposed first where the query blocks alone
are too few to fill it (few heads, long S: 2x on the H200 at two heads of 8192).
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library import attention_gen, attention_outer
from vajra_tui.engine.sources.library.attention_parts import NEG, QSCALE, max_of, open_key_loop, xor_steps
from vajra_tui.engine.sources.library.base import (TILE_GUARD, Emitter, Params, Size, Template, big_gpu,
                                                    least_subgroup, open_main, shuffles_fit, storage_fits,
                                                    workgroup_fits)


def _shape(p: Params, s: Size) -> tuple[int, int, int, int, int]:
    """(bq, bk, tq, tk, td): rows and keys per block, per lane rows, keys and outputs."""
    wx, wy, tq, bk = p["wx"], p["wy"], p["tq"], p["bk"]
    return wy * tq, bk, tq, bk // wx, s["D"] // wx


def _smem_bytes(p: Params, s: Size) -> int:
    bq, bk, _, _, _ = _shape(p, s)
    d = s["D"]
    return 4 * (bq * (d + 1) + bk * (d + 1) + bk * d + bq * (bk + 1) + bq * p["wx"])


def check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    wx = p["wx"]
    if p["bk"] % wx:
        return "keys per block must be a multiple of the lanes per row"
    if s["D"] % wx:
        return f"D={s['D']} is not a multiple of {wx} (lanes per row)"
    if p["tq"] * (s["D"] // wx) > 64 or p["tq"] * (p["bk"] // wx) > 32:
        return "register tile too large"
    if p["sg"] and (why := shuffles_fit(d, wx)):
        return why
    return workgroup_fits(d, wx, p["wy"]) or storage_fits(d, _smem_bytes(p, s))


def _reduce(e: Emitter, names: list[str], op: str, p: Params) -> None:
    """Every lane of a row gets ``op`` over the row's ``wx`` lanes of each name in ``names``
    (one per owned row ``a``). Barriers sit in uniform control flow: every lane calls this."""
    wx = p["wx"]
    comb = "max({x}, {y})" if op == "max" else "({x} + {y})"
    if p["sg"]:
        for step in xor_steps(wx):
            for n in names:
                e(f"{n} = {comb.format(x=n, y=f'subgroupShuffleXor({n}, {step}u)')};")
        return
    for a, n in enumerate(names):
        e(f"red[r{a} * {wx}u + lid.x] = {n};")
    e("workgroupBarrier();")
    for a, n in enumerate(names):
        e(f"{n} = red[r{a} * {wx}u];")
        e(f"for (var ri = 1u; ri < {wx}u; ri = ri + 1u) {{ {n} = {comb.format(x=n, y=f'red[r{a} * {wx}u + ri]')}; }}")
    e("workgroupBarrier();")


def _stage(e: Emitter, p: Params, s: Size) -> None:
    """The key block k0.. of K and V into workgroup memory (zeros past S)."""
    nt, bk, d = p["wx"] * p["wy"], p["bk"], s["D"]
    e.open(f"for (var si = li; si < {bk * d}u; si = si + {nt}u) {{")
    e(f"let sj = si / {d}u;", f"let sc = si % {d}u;", "let key = k0 + sj;",
      "let g = head + min(key, S - 1u) * D + sc;",
      f"Ks[sj * {d + 1}u + sc] = select(0.0, K[g], key < S);", "Vs[si] = select(0.0, V[g], key < S);")
    e.close()
    e("workgroupBarrier();")


def _scores(e: Emitter, p: Params, s: Size) -> None:
    """Register-blocked Q·Kᵀ for the lane's rows x keys, masked, in log2 units."""
    wx, tq, tk, d = p["wx"], p["tq"], p["bk"] // p["wx"], s["D"]
    for a in range(tq):
        e(*[f"var s{a}_{b} = 0.0;" for b in range(tk)])
    e.open(f"for (var c = 0u; c < {d}u; c = c + 1u) {{")
    e(*[f"let qv{a} = Qs[r{a} * {d + 1}u + c];" for a in range(tq)])
    e(*[f"let kv{b} = Ks[(lid.x + {b * wx}u) * {d + 1}u + c];" for b in range(tk)])
    for a in range(tq):
        e(*[f"s{a}_{b} = fma(qv{a}, kv{b}, s{a}_{b});" for b in range(tk)])
    e.close()
    for b in range(tk):
        e(f"let key{b} = k0 + lid.x + {b * wx}u;")
        for a in range(tq):
            e(f"s{a}_{b} = select({NEG}, s{a}_{b}, key{b} < S && (MASK != 2u || key{b} <= q0 + r{a}));")
    for a in range(tq):
        e(f"var bm{a} = {max_of([f's{a}_{b}' for b in range(tk)])};")


def _softmax(e: Emitter, p: Params, s: Size) -> None:
    """New running max per row, the block's weights into Ps, old sums and outputs rescaled."""
    wx, tq, tk, td = p["wx"], p["tq"], p["bk"] // p["wx"], s["D"] // p["wx"]
    _reduce(e, [f"bm{a}" for a in range(tq)], "max", p)
    pst = p["bk"] + 1
    for a in range(tq):
        e(f"let mn{a} = max(m{a}, bm{a});", f"let al{a} = exp2(m{a} - mn{a});", f"m{a} = mn{a};",
          f"l{a} = l{a} * al{a};")
        for b in range(tk):
            e(f"let p{a}_{b} = exp2(s{a}_{b} - mn{a});", f"l{a} = l{a} + p{a}_{b};",
              f"Ps[r{a} * {pst}u + lid.x + {b * wx}u] = p{a}_{b};")
        e(*[f"o{a}_{j} = o{a}_{j} * al{a};" for j in range(td)])
    e("workgroupBarrier();")


def _pv(e: Emitter, p: Params, s: Size) -> None:
    """outputs += P·V over the block's keys."""
    wx, tq, bk, d = p["wx"], p["tq"], p["bk"], s["D"]
    td = d // wx
    e.open(f"for (var c = 0u; c < {bk}u; c = c + 1u) {{")
    e(*[f"let w{a} = Ps[r{a} * {bk + 1}u + c];" for a in range(tq)])
    e(*[f"let v{j} = Vs[c * {d}u + lid.x + {j * wx}u];" for j in range(td)])
    for a in range(tq):
        e(*[f"o{a}_{j} = fma(w{a}, v{j}, o{a}_{j});" for j in range(td)])
    e.close()
    e("workgroupBarrier();")


def render(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, wy = p["wx"], p["wy"]
    bq, bk, tq, tk, _ = _shape(p, s)
    dim = s["D"]
    td = dim // wx
    e = Emitter()
    e(f"// Attention, FlashAttention-2 style: {bq} query rows per workgroup of {wx}x{wy}, keys in",
      f"// blocks of {bk} through workgroup memory, {tq}x{tk} scores and {tq}x{td} outputs per lane;",
      "// online softmax",
      "// (running max and sum per row), block maxima reduced by "
      + ("subgroup shuffles." if p["sg"] else "workgroup memory."),
      f"// tile: {bq}*D x 1")
    e(f"var<workgroup> Qs: array<f32, {bq * (dim + 1)}>;", f"var<workgroup> Ks: array<f32, {bk * (dim + 1)}>;",
      f"var<workgroup> Vs: array<f32, {bk * dim}>;",
      f"var<workgroup> Ps: array<f32, {bq * (bk + 1)}>;")
    if not p["sg"]:
        e(f"var<workgroup> red: array<f32, {bq * wx}>;")
    open_main(e, wx, wy)
    e(*TILE_GUARD, f"let q0 = t.x * {bq}u;", "let head = t.y * S * D;", QSCALE)
    e.open(f"for (var qi = li; qi < {bq * dim}u; qi = qi + {wx * wy}u) {{")
    e(f"let qr = qi / {dim}u;", f"let qc = qi % {dim}u;",
      f"Qs[qr * {dim + 1}u + qc] = Q[head + min(q0 + qr, S - 1u) * D + qc] * qscale;")
    e.close()
    for a in range(tq):
        e(f"let r{a} = lid.y + {a * wy}u;", f"var m{a} = {NEG};", f"var l{a} = 0.0;",
          *[f"var o{a}_{j} = 0.0;" for j in range(td)])
    open_key_loop(e, bq, bk)
    _stage(e, p, s)
    _scores(e, p, s)
    _softmax(e, p, s)
    _pv(e, p, s)
    e.close()
    _reduce(e, [f"l{a}" for a in range(tq)], "add", p)
    for a in range(tq):
        e(f"if (q0 + r{a} < S) {{")
        e(f"    let inv{a} = 1.0 / l{a};")
        for j in range(td):
            e(f"    O[head + (q0 + r{a}) * D + lid.x + {j * wx}u] = o{a}_{j} * inv{a};")
        e("}")
    e.close()
    return e.text()


AXES = {"wx": (4, 8, 16, 32), "wy": (4, 8, 16, 32), "tq": (1, 2, 4), "bk": (8, 16, 32, 64)}

TEMPLATES = [
    Template("attention", "flash", "A", "FA2 query block, K/V blocks in workgroup memory, scalar",
             {**AXES, "sg": (0, 1)}, render, check),
    Template("attention", "tiled", "B", "register-tiled Q·Kᵀ and P·V, Q in registers, per-lane softmax",
             attention_gen.AXES, attention_gen.render, attention_gen.check),
    Template("attention", "outer", "C", "SGEMM-style outer products of transposed vec4 columns",
             attention_outer.AXES, attention_outer.render, attention_outer.check, late=attention_outer.LATE),
]


def _tiled_priors(d: DeviceInfo | None) -> list[Params]:
    """B's shapes (wx, wy, tm, tn): on a discrete GPU 64-key blocks (34 KB of workgroup memory
    at D=64), the H200's best first (64 rows of 256 lanes, two per lane: 5.25 ms, #27), then
    16-32 rows per workgroup, so S=4096 x 16 heads gives 2048-4096 workgroups;
    then ones that fit the portable 16 KiB (16- and 8-key blocks; the last for D=128)."""
    big = [(8, 32, 2, 8), (8, 16, 1, 8), (16, 16, 1, 4), (8, 8, 2, 8), (8, 32, 1, 8)] if big_gpu(d) else []
    small = [(4, 16, 1, 4), (8, 8, 1, 2), (4, 8, 2, 4), (4, 16, 1, 2), (2, 16, 1, 4), (2, 8, 1, 2)]
    return [dict(zip(("wx", "wy", "tm", "tn"), t)) for t in big + small]


def _outer_priors(d: DeviceInfo | None) -> list[Params]:
    """C's shapes (wx, wy, tm, tn, kv): on a discrete GPU first the H200's fastest, with the next
    block prefetched, then the two it improved on (2.43 ms non-causal, 1.84 causal; NOTES): 256 rows
    x 32 keys per block on 256 lanes (8x4 scores, 8x8 outputs) with Q read from the storage buffer,
    and 64 rows on 128 lanes (4x4, 4x8) with Q and V read from it, loops unrolled whole; then the
    staged shapes (40 KB of workgroup memory at D=64, over the portable 16 KiB); then ones that fit
    16 KiB (32 rows x 16 keys; D=128 with V in K's memory). Shuffles where the adapter's subgroups
    hold a row's lanes (base.least_subgroup)."""
    big = [(8, 16, 4, 4, 2), (4, 16, 4, 8, 2), (8, 8, 8, 4, 2), (4, 16, 4, 4, 2)] if big_gpu(d) else []
    small = [(4, 8, 4, 4, 2), (8, 8, 4, 4, 1), (4, 4, 8, 4, 2), (8, 4, 4, 4, 1), (16, 8, 4, 4, 1)]
    least = least_subgroup(d)
    out = [{**dict(zip(("wx", "wy", "tm", "tn", "kv"), t)), "sg": int(t[0] <= least),
            "un": 16 if big_gpu(d) else 4} for t in big + small]
    # Q (gl=1), or Q and V (gl=2), read from the storage buffer: 16-24 KB less per workgroup, so
    # more resident; with the loops unrolled whole 1.6-1.9x faster on the H200, where 256 rows of
    # 8x4 with Q global led non-causal and 64 rows with Q and V global causal (NOTES, #27)
    # ... and the next key block's K and V prefetched into registers (pf=1): 2.21 ms against
    # 2.44 non-causal, 1.19 against 1.30 causal, on the H200 beside SDPA (NOTES, round 11)
    lead = {**out[0], "wy": 32, "tm": 8, "gl": 1, "un": 128}
    return [{**lead, "pf": 1}, lead, {**out[0], "gl": 2, "un": 128}, *out] if big else out


SPLIT_BELOW = 256  # query blocks under which C's first prior is split (two per H200 SM)
SPLIT_PAIRS = 512  # (query block, key split) workgroups the split aims at


def _split_priors(first: Params, s: Size) -> list[Params]:
    """``first`` split where its query blocks are too few for a big GPU: the fewest splits that
    reach SPLIT_PAIRS, within what Partial holds. On the H200 two heads of 8192 (64 blocks of
    256 rows) ran 1.22 ms split 8 ways against 2.44 unsplit (SDPA 1.16); 16 heads of 4096
    (256 blocks) gained nothing from 2 or 4 (benchmarks/NOTES.md, round 8)."""
    from vajra_tui.engine.workloads.attention import splits_max

    blocks = s["B"] * s["H"] * -(-s["S"] // (first["wy"] * first["tm"]))
    ks = 1
    while blocks < SPLIT_BELOW and blocks * ks < SPLIT_PAIRS and ks * 2 <= min(16, splits_max(s)):
        ks *= 2
    return [{**first, "ks": ks}] if ks > 1 else []


def priors(s: Size, d: DeviceInfo | None) -> dict[str, list[Params]]:
    """Large blocks first on a discrete GPU (under its own limits), then ones that fit
    WebGPU's portable 16 KiB of workgroup memory (small blocks, D=64 first)."""
    big = [(8, 16, 4, 32), (8, 16, 2, 32), (16, 16, 4, 32)] if big_gpu(d) else []
    small = [(8, 16, 1, 16), (4, 16, 1, 16), (8, 8, 1, 8), (4, 8, 1, 8), (4, 4, 1, 8)]
    shapes = [dict(zip(("wx", "wy", "tq", "bk"), t)) for t in big + small]
    return {"A": [{**q, "sg": 0} for q in shapes],
            "B": _tiled_priors(d),
            "C": _with_splits(_outer_priors(d), s) if big_gpu(d) else _outer_priors(d)}


def _with_splits(outer: list[Params], s: Size) -> list[Params]:
    """C's priors, the first one split ahead of them where it has too few blocks. That shape
    (40 KB of workgroup memory) runs under ``--limits adapter``; the portable shapes have
    32-row blocks, enough of them at every size worth splitting, and are left whole."""
    return [*_split_priors(outer[0], s), *outer]

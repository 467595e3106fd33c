"""Attention C, "outer": both products as SGEMM-style outer products of vec4 columns.

Why: B (attention_gen.py) keeps Q and O rows whole in each lane's registers, 2 x tm x D
floats (256 at its best shape, past what a lane holds without spilling). Here the workgroup
memory holds the operands transposed, as the 0.9x-of-cuBLAS SGEMM does, and a lane keeps only
its tiles: ``tm x tn`` scores and ``tm x td`` outputs (``td = D / wx``). The price is
occupancy (Q alone is 16 KB for 64 rows): on the H200 it wins only with 128 lanes and the row
maxima shuffled, 4.58 ms against B's 5.27 (benchmarks/NOTES.md, #27).

A workgroup of ``wx`` x ``wy`` lanes owns ``bq = wy * tm`` query rows of one head; keys pass
``bk = wx * tn`` at a time. Per block:

1. K is staged transposed (``Kt[d][key]``) and V as rows (``Vs[key][d]``); barrier. With
   ``kv=1`` V is staged later, into ``Kt`` once the scores are done: half the key memory
   (D=128 fits 32 KiB, or 64-key blocks on the H200) for one more barrier with ``sg=1``.
2. Scores: for each ``d`` a lane reads ``tm/4`` vec4 of Q (``Qt[d][row]``, staged once,
   pre-scaled by log2(e)/sqrt(D)) and ``tn/4`` vec4 of K, and adds their outer product:
   ``tm * tn`` FMA per ``(tm + tn) / 4`` loads.
3. Online softmax: each row's block max is reduced over its ``wx`` lanes (subgroup shuffles
   with ``sg=1``, else workgroup memory); the weights go to ``Pt[key][row]``; barrier.
4. P·V the same way: per key ``tm/4`` vec4 of P and ``td/4`` vec4 of V into the outputs,
   rescaled once per block by the row's factor (every lane of a row holds the same max).

The row's sum stays a per-lane partial, summed once at the end. A lane's rows are
``g*4*wy + 4*ty + i`` (groups of four, so one vec4 load serves four rows), its keys and
output columns ``h*4*wx + 4*tx + j``. Masking (keys past S, the causal diagonal) runs only
in the blocks that need it; a causal workgroup stops at its last row's key, heaviest first.

``gl`` leaves operands in the storage buffer (L1-cached) instead of workgroup memory, which
caps how many workgroups an SM holds (on the H200, Q alone: 40 -> 24 KB, 1.5x faster):
gl=1 Q (per four dimensions a lane reads each row's vec4 of Q and four vec4 of K^T; the
scores are scaled once per block), gl=2 Q and V (P·V reads V's rows directly: no V staging),
gl=3 Q, V and K (per four dimensions a vec4 of each of the lane's keys; dot products): only
P goes through workgroup memory, two barriers per block.

``qo=1`` (with gl=1 or 2) reads Q a row at a time after the four dimensions' K^T vectors,
where ``qo=0`` reads every row's vec4 first: one vec4 of Q live instead of ``tm``.

``pf=1`` prefetches: the next block's K and V (those staged) are loaded into registers right
after this block's first barrier and written to workgroup memory at the top of the next, so
their latency overlaps a block of FMAs instead of standing between two barriers. On the H200
one 256-lane workgroup fills an SM, so no other workgroup hides it (NOTES, 2026-12-05).

``ks`` > 1 splits each block's keys over that many workgroups and adds the workload's optional
``combine`` pass (split-K, attention_split.py).
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library import attention_prefetch as prefetch
from vajra_tui.engine.sources.library import attention_split as split
from vajra_tui.engine.sources.library.attention_parts import (NEG, QSCALE, heaviest_first, max_of, open_key_loop,
                                                              vec4_bindings, xor_steps)
from vajra_tui.engine.sources.library.base import (Emitter, Params, Size, open_main, shuffles_fit, storage_fits,
                                                    workgroup_fits)


def shape(p: Params, s: Size) -> tuple[int, int, int, int]:
    """(bq, bk, d4, td): rows and keys per block, vec4 per row of D, output columns per lane."""
    return p["wy"] * p["tm"], p["wx"] * p["tn"], s["D"] // 4, s["D"] // p["wx"]


def smem_bytes(p: Params, s: Size) -> int:
    bq, bk, _, _ = shape(p, s)
    d = s["D"]
    gl = p.get("gl", 0)
    q = 0 if gl else d * bq
    staged_kv = 0 if gl == 3 else (1 if gl == 2 else p["kv"])
    return 4 * (q + staged_kv * d * bk + bk * bq + (0 if p["sg"] else bq * p["wx"]))


def check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    """Why this point cannot run at this size on this adapter, or None."""
    wx, tm, tn = p["wx"], p["tm"], p["tn"]
    if s["D"] % (4 * wx):
        return f"D={s['D']} is not a multiple of {4 * wx} (vec4 output columns over {wx} lanes)"
    if tm * tn > 64 or tm * (s["D"] // wx) > 64:
        return "register tile too large"
    if p["sg"] and (why := shuffles_fit(d, wx)):
        return why
    if p.get("qo", 0) and p.get("gl", 0) not in (1, 2):
        return "qo orders the reads of Q from the storage buffer: it needs gl=1 or gl=2"
    if p.get("gl", 0) >= 2 and p["kv"] == 1:
        return "kv=1 stages V into K's memory; with gl >= 2 V is not staged (use kv=2)"
    if p.get("pf", 0) and p.get("gl", 0) == 3:
        return "pf prefetches the staged K and V: with gl=3 nothing is staged"
    if p.get("ks", 1) > 1 and (why := _split_problem(p, s, d)):
        return why
    return workgroup_fits(d, wx, p["wy"]) or storage_fits(d, smem_bytes(p, s))


def _split_problem(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    """Why ``ks`` splits cannot run here: the scratch's slots, or the combine's workgroup."""
    from vajra_tui.engine.workloads.attention import splits_max

    if p["ks"] > splits_max(s):
        return f"{p['ks']} key splits: Partial holds {splits_max(s)} at this size"
    return workgroup_fits(d, s["D"] // 4, split.COMBINE_ROWS)


def _header(e: Emitter, p: Params, s: Size) -> None:
    bq, bk, _, td = shape(p, s)
    wx, wy, tm, tn, d = p["wx"], p["wy"], p["tm"], p["tn"], s["D"]
    e(f"// Attention, outer products: {bq} query rows per workgroup of {wx}x{wy}, keys in blocks of {bk};",
      f"// per lane {tm}x{tn} scores and {tm}x{td} outputs from vec4 columns of {_held_in_memory(p['gl'])} held",
      "// transposed in workgroup memory; online softmax, block maxima reduced by "
      + ("subgroup shuffles." if p["sg"] else "workgroup memory."),
      f"// tile: {bq}*D x 1" if p.get("ks", 1) == 1 else f"// tile: {bq}*D/KS x 1 (a split of a block's keys)")
    vec4_bindings(e)
    if p.get("ks", 1) > 1:
        split.declarations(e, p["ks"])
    gl = p["gl"]
    e(*([] if gl else [f"var<workgroup> Qt: array<vec4<f32>, {d * bq // 4}>;"]),
      *([] if gl == 3 else [f"var<workgroup> Kt: array<vec4<f32>, {d * bk // 4}>;"]),
      *([f"var<workgroup> Vs: array<vec4<f32>, {bk * d // 4}>;"] if p["kv"] == 2 and gl < 2 else []),
      f"var<workgroup> Pt: array<vec4<f32>, {bk * bq // 4}>;")
    if not p["sg"]:
        e(f"var<workgroup> red: array<f32, {bq * wx}>;")
    open_main(e, wx, wy)


def _held_in_memory(gl: int) -> str:
    """The operands a ``gl`` level stages in workgroup memory (the rest are read from the
    storage buffer), as the kernel's opening comment names them."""
    return ("Q, K, P and V", "K, P and V (Q read from the storage buffer)",
            "K and P (Q and V read from the storage buffer)", "P (Q, K and V read from the storage buffer)")[gl]


def _row(p: Params, a: int) -> str:
    """The lane's a-th row within the block, as a WGSL expression."""
    return f"({(a // 4) * 4 * p['wy'] + a % 4}u + 4u * ty)"


def _setup(e: Emitter, p: Params, s: Size) -> None:
    """Tile coordinates (causal: heaviest query blocks first), Q transposed and scaled (or,
    with ``gl >= 1``, where each of the lane's rows starts in the storage buffer)."""
    bq, _, d4, td = shape(p, s)
    tm = p["tm"]
    if p.get("ks", 1) > 1:
        split.tile(e, bq, d4)
    else:
        heaviest_first(e, bq, d4)
    e("let tx = lid.x;", "let ty = lid.y;", QSCALE)
    if p["gl"]:  # Q stays in the storage buffer: each row's first vec4, clamped past S
        e(*[f"let qr{a} = head4 + min(q0 + {_row(p, a)}, S - 1u) * {d4}u;" for a in range(tm)])
    else:
        _stage_q(e, p, s)
    for a in range(tm):
        e(f"var m{a} = {NEG};", f"var l{a} = 0.0;", *[f"var o{a}_{h} = vec4<f32>(0.0);" for h in range(td // 4)])


def _stage_q(e: Emitter, p: Params, s: Size) -> None:
    """Q transposed (``Qt[d][row]``) and scaled into workgroup memory, once per workgroup."""
    bq, _, d4, _ = shape(p, s)
    nt = p["wx"] * p["wy"]
    e.open(f"for (var i = li; i < {bq * d4}u; i = i + {nt}u) {{")  # row fastest: conflict-free stores
    e(f"let r = i % {bq}u;", f"let c = i / {bq}u;",
      f"let q = Q[head4 + min(q0 + r, S - 1u) * {d4}u + c] * qscale;",
      f"let w = (4u * c) * {bq // 4}u + r / 4u;", "let lane = r % 4u;")
    for j in range(4):
        e(f"Qt[w + {j * bq // 4}u][lane] = q[{j}];")
    e.close()


def _stage(e: Emitter, p: Params, s: Size, k: bool, v: str | None) -> None:
    """The key block k0.. into workgroup memory (zeros past S): K transposed (``k``), V as
    rows into the array named ``v`` (``Kt`` itself once the scores are done, with kv=1)."""
    _, bk, d4, _ = shape(p, s)
    nt = p["wx"] * p["wy"]
    e.open(f"for (var i = li; i < {bk * d4}u; i = i + {nt}u) {{")
    if k:
        e(f"let kj = i % {bk}u;", f"let kc = i / {bk}u;", "let key = k0 + kj;",
          f"let kv = select(vec4<f32>(0.0), K[head4 + min(key, S - 1u) * {d4}u + kc], key < S);",
          f"let w = (4u * kc) * {bk // 4}u + kj / 4u;", "let lane = kj % 4u;")
        e(*[f"Kt[w + {j * bk // 4}u][lane] = kv[{j}];" for j in range(4)])
    if v:
        e(f"let vkey = k0 + i / {d4}u;",
          f"{v}[i] = select(vec4<f32>(0.0), V[head4 + min(vkey, S - 1u) * {d4}u + i % {d4}u], vkey < S);")
    e.close()


def _unrolled(e: Emitter, var: str, count: int, un: int, body) -> None:
    """``body(e, index_expression)`` for each of ``count`` steps, ``un`` copies per loop trip
    (all of them, with constant indices, when ``un >= count``): the loads of later copies can
    issue before the FMAs of earlier ones, which a one-step loop serialises on their latency."""
    un = min(un, count)
    if un == count:
        for j in range(count):
            body(e, f"{j}u")
        return
    e.open(f"for (var {var} = 0u; {var} < {count}u; {var} = {var} + {un}u) {{")
    for j in range(un):
        body(e, f"({var} + {j}u)" if j else var)
    e.close()


def _outer(e: Emitter, acc: str, rows: list[str], cols: list[str]) -> None:
    """One step of an outer product, the shape both products share: ``rows`` are vec4 loads
    of four rows each, ``cols`` vec4 loads of four columns; ``{acc}{a}_{h} += row a x cols h``."""
    e.open("{")
    e(*[f"let lv{g} = {x};" for g, x in enumerate(rows)], *[f"let rv{h} = {x};" for h, x in enumerate(cols)])
    for a in range(4 * len(rows)):
        e(*[f"{acc}{a}_{h} = fma(vec4<f32>(lv{a // 4}[{a % 4}]), rv{h}, {acc}{a}_{h});" for h in range(len(cols))])
    e.close()


def _scores(e: Emitter, p: Params, s: Size) -> None:
    """s{a}_{h}: row a's scores against the lane's key group h (four keys), in log2 units."""
    bq, bk, _, _ = shape(p, s)
    wx, wy, tm, tn, d = p["wx"], p["wy"], p["tm"], p["tn"], s["D"]
    for a in range(tm):
        e(*[f"var s{a}_{h} = vec4<f32>(0.0);" for h in range(tn // 4)])

    def step(e: Emitter, c: str) -> None:
        _outer(e, "s", [f"Qt[{c} * {bq // 4}u + {g * wy}u + ty]" for g in range(tm // 4)],
               [f"Kt[{c} * {bk // 4}u + {h * wx}u + tx]" for h in range(tn // 4)])

    def step_global(e: Emitter, c4: str) -> None:
        """Four dimensions: each row's vec4 of Q from the storage buffer (an L1 hit after the
        first block), against four vec4 of K^T per key group. ``qo=1`` loads the K^T vectors
        first and then one row of Q at a time, so one vec4 of Q is live instead of ``tm``."""
        e.open("{")
        ks = [f"let k{j}_{h} = Kt[(4u * {c4} + {j}u) * {bk // 4}u + {h * wx}u + tx];"
              for j in range(4) for h in range(tn // 4)]
        if p.get("qo", 0):
            e(*ks)
            for a in range(tm):
                e(f"let qv{a} = Q[qr{a} + {c4}];")
                for j in range(4):
                    e(*[f"s{a}_{h} = fma(vec4<f32>(qv{a}[{j}]), k{j}_{h}, s{a}_{h});" for h in range(tn // 4)])
            e.close()
            return
        e(*[f"let qv{a} = Q[qr{a} + {c4}];" for a in range(tm)])
        for j in range(4):
            e(*ks[j * (tn // 4):(j + 1) * (tn // 4)])
            for a in range(tm):
                e(*[f"s{a}_{h} = fma(vec4<f32>(qv{a}[{j}]), k{j}_{h}, s{a}_{h});" for h in range(tn // 4)])
        e.close()

    def step_all_global(e: Emitter, c4: str) -> None:
        """Four dimensions of Q and of each of the lane's keys, all from the storage buffer."""
        e.open("{")
        e(*[f"let qv{a} = Q[qr{a} + {c4}];" for a in range(tm)])
        for h in range(tn // 4):
            e(*[f"let kk{h}_{i} = K[kr{h}_{i} + {c4}];" for i in range(4)])
            for a in range(tm):
                dots = ", ".join(f"dot(qv{a}, kk{h}_{i})" for i in range(4))
                e(f"s{a}_{h} = s{a}_{h} + vec4<f32>({dots});")
        e.close()

    if p["gl"] == 3:
        for h in range(tn // 4):  # each of the lane's keys' first vec4, clamped past S
            e(*[f"let kr{h}_{i} = head4 + min(k0 + {h * 4 * wx + i}u + 4u * tx, S - 1u) * {d // 4}u;"
                for i in range(4)])
        _unrolled(e, "c4", d // 4, max(1, p["un"] // 4), step_all_global)
    elif p["gl"]:
        _unrolled(e, "c4", d // 4, max(1, p["un"] // 4), step_global)
    else:
        _unrolled(e, "c", d, p["un"], step)
    if p["gl"]:
        for a in range(tm):  # the scale Qt carries when staged: log2(e) / sqrt(D)
            e(*[f"s{a}_{h} = s{a}_{h} * qscale;" for h in range(tn // 4)])
    e.open(f"if (k0 + {bk}u > S || (MASK == 2u && k0 + {bk}u > q0 + 1u)) {{")
    for h in range(tn // 4):
        e(f"let key{h} = vec4<u32>(k0 + {h * 4 * wx}u + 4u * tx) + vec4<u32>(0u, 1u, 2u, 3u);")
        for a in range(tm):
            e(f"s{a}_{h} = select(vec4<f32>({NEG}), s{a}_{h}, (key{h} < vec4<u32>(S)) & "
              f"(vec4<bool>(MASK != 2u) | (key{h} <= vec4<u32>(q0 + {_row(p, a)}))));")
    e.close()


def _reduce_max(e: Emitter, p: Params, s: Size) -> None:
    """bm{a}: row a's block max over its wx lanes; barriers (sg=0) are in uniform flow."""
    wx, tm, tn = p["wx"], p["tm"], p["tn"]
    for a in range(tm):
        e(f"let v{a} = {max_of([f's{a}_{h}' for h in range(tn // 4)])};",
          f"var bm{a} = max(max(v{a}.x, v{a}.y), max(v{a}.z, v{a}.w));")
    if p["sg"]:
        for step in xor_steps(wx):
            e(*[f"bm{a} = max(bm{a}, subgroupShuffleXor(bm{a}, {step}u));" for a in range(tm)])
        return
    e(*[f"red[{_row(p, a)} * {wx}u + tx] = bm{a};" for a in range(tm)])
    e("workgroupBarrier();")
    for a in range(tm):
        e(f"for (var u = 0u; u < {wx}u; u = u + 1u) {{ bm{a} = max(bm{a}, red[{_row(p, a)} * {wx}u + u]); }}")


def _softmax(e: Emitter, p: Params, s: Size) -> None:
    """New running max per row, the weights into Pt, sums and outputs rescaled; barrier."""
    bq, _, _, td = shape(p, s)
    wx, wy, tm, tn = p["wx"], p["wy"], p["tm"], p["tn"]
    for a in range(tm):
        e(f"let mn{a} = max(m{a}, bm{a});", f"let al{a} = exp2(m{a} - mn{a});", f"m{a} = mn{a};")
        e(*[f"s{a}_{h} = exp2(s{a}_{h} - vec4<f32>(mn{a}));" for h in range(tn // 4)])
        e(f"l{a} = l{a} * al{a} + " + " + ".join(f"dot(s{a}_{h}, vec4<f32>(1.0))" for h in range(tn // 4)) + ";")
        e(*[f"o{a}_{h} = o{a}_{h} * al{a};" for h in range(td // 4)])
    for g in range(tm // 4):
        for h in range(tn // 4):
            for j in range(4):
                rows = ", ".join(f"s{4 * g + i}_{h}[{j}]" for i in range(4))
                e(f"Pt[({h * 4 * wx + j}u + 4u * tx) * {bq // 4}u + {g * wy}u + ty] = vec4<f32>({rows});")


def _pv(e: Emitter, p: Params, s: Size, vs: str) -> None:
    """outputs += P·V over the block's keys (V from ``vs``, or with gl >= 2 from the storage
    buffer, clamped past S where P is 0); barrier before the next block is staged."""
    bq, bk, d4, td = shape(p, s)
    wx, wy, tm = p["wx"], p["wy"], p["tm"]

    def v_at(k: str, h: int) -> str:
        if p["gl"] >= 2:
            return f"V[head4 + min(k0 + {k}, S - 1u) * {d4}u + {h * wx}u + tx]"
        return f"{vs}[{k} * {d4}u + {h * wx}u + tx]"

    def step(e: Emitter, k: str) -> None:
        _outer(e, "o", [f"Pt[{k} * {bq // 4}u + {g * wy}u + ty]" for g in range(tm // 4)],
               [v_at(k, h) for h in range(td // 4)])

    _unrolled(e, "k", bk, p["un"], step)
    e("workgroupBarrier();")


def _finish(e: Emitter, p: Params, s: Size) -> None:
    """Each row's partial sums over its wx lanes, then the normalised outputs as vec4."""
    _, _, d4, td = shape(p, s)
    wx, tm = p["wx"], p["tm"]
    if p["sg"]:
        for step in xor_steps(wx):
            e(*[f"l{a} = l{a} + subgroupShuffleXor(l{a}, {step}u);" for a in range(tm)])
    else:
        e(*[f"red[{_row(p, a)} * {wx}u + tx] = l{a};" for a in range(tm)])
        e("workgroupBarrier();")
        for a in range(tm):
            e(f"l{a} = 0.0;", f"for (var u = 0u; u < {wx}u; u = u + 1u) {{ l{a} = l{a} + red[{_row(p, a)} * {wx}u + u]; }}")
    for a in range(tm):
        e(f"let row{a} = q0 + {_row(p, a)};")
        if p.get("ks", 1) > 1:
            split.write_partial(e, a, f"row{a}", d4, [(f"{h * wx}u + tx", f"o{a}_{h}") for h in range(td // 4)])
            continue
        e.open(f"if (row{a} < S) {{")
        e(f"let inv{a} = 1.0 / l{a};")
        e(*[f"O[head4 + row{a} * {d4}u + {h * wx}u + tx] = o{a}_{h} * inv{a};" for h in range(td // 4)])
        e.close()


def render(p: Params, s: Size, d: DeviceInfo | None) -> str:
    bq, bk, _, _ = shape(p, s)
    e = Emitter()
    _header(e, p, s)
    _setup(e, p, s)
    gl = p["gl"]
    if p.get("pf", 0) and gl < 3:
        prefetch.declare(e, p, s, True, gl < 2 and not (p["kv"] == 1 and gl < 2))
    if p.get("ks", 1) > 1:
        split.open_key_loop(e, bq, bk)
    else:
        open_key_loop(e, bq, bk)
    one = p["kv"] == 1 and gl < 2  # V reuses Kt once every lane's scores are done
    pf, staged_v = p.get("pf", 0) and gl < 3, gl < 2 and not one  # (kv=1: V staged as before)
    if pf:  # the first block fetched on the first trip; each trip then fetches the next
        e.open(f"if (k0 == {'klo' if p.get('ks', 1) > 1 else '0u'}) {{")
        prefetch.fetch(e, p, s, "k0", True, staged_v)
        e.close()
        prefetch.store(e, p, s, True, "Vs" if staged_v else None)
        e("workgroupBarrier();")
        prefetch.fetch(e, p, s, f"k0 + {bk}u", True, staged_v)
    elif gl < 3:  # (gl=3 stages nothing: Q, K and V are read from the storage buffer)
        _stage(e, p, s, True, None if one or gl == 2 else "Vs")
        e("workgroupBarrier();")
    _scores(e, p, s)
    _reduce_max(e, p, s)
    if one:
        if p["sg"]:
            e("workgroupBarrier();")  # (with sg=0 the reduction's barrier already follows the scores)
        _stage(e, p, s, False, "Kt")
    _softmax(e, p, s)
    e("workgroupBarrier();")
    _pv(e, p, s, "Kt" if one else "Vs")
    e.close()
    _finish(e, p, s)
    e.close()
    if p.get("ks", 1) > 1:
        split.combine(e, bq, s["D"] // 4)
    return e.text()


AXES = {"wx": (2, 4, 8, 16), "wy": (2, 4, 8, 16, 32, 64), "tm": (4, 8), "tn": (4, 8), "kv": (1, 2), "sg": (0, 1),
        "un": (1, 4, 8, 16, 128), "gl": (0, 1, 2, 3), "ks": (1, *split.KS_VALUES), "qo": (0, 1),
        "pf": (0, 1)}
# configurations recorded before the unrolling, before operands could stay global, before
# split-K, before Q's row-at-a-time order, before the prefetch
LATE = {"un": 1, "gl": 0, "ks": 1, "qo": 0, "pf": 0}

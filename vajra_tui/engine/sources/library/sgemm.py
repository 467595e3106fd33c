"""SGEMM templates: direct register blocking (A), shared tiles (B), vec4 tiles (C).

C is the fast one (its generators live in sgemm_vec4.py, ``lay=0``, and
sgemm_hoist.py, ``lay=1``, their common parts in sgemm_tile.py): a (bm x bn) tile
per workgroup, (tm x tn) outputs per invocation in vec4 registers, A staged
transposed in workgroup memory, the next K-slice prefetched, optionally
double-buffered; ``spec=1`` is size-specialised.
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library import sgemm_vec4
from vajra_tui.engine.sources.library.base import (TILE_GUARD, Emitter, Params, Size, Template, big_gpu, open_main,
                                                    storage_fits, workgroup_fits)


# ---- A: direct, register-blocked, no shared memory ----------------------------------
def _direct_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    return workgroup_fits(d, p["wx"], p["wy"])


def _direct(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, wy, tm, tn = p["wx"], p["wy"], p["tm"], p["tn"]
    e = Emitter()
    e(f"// SGEMM direct: {wx}x{wy} workgroup, {tm}x{tn} outputs per invocation (strided,",
      "// so loads stay coalesced), operands straight from global memory.",
      f"// tile: {wx * tn}x{wy * tm}")
    open_main(e, wx, wy)
    e(*TILE_GUARD)
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
    open_main(e, wx, wy)
    e(*TILE_GUARD, f"let row0 = t.y * {bm}u;", f"let col0 = t.x * {bn}u;")
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
              "tm": (4, 8, 16), "tn": (4, 8, 16), "db": (0, 1), "spec": (0, 1), "lay": (0, 1)},
             sgemm_vec4.render, sgemm_vec4.check, general=lambda p: not p["spec"], late={"lay": 0}),
]


def priors(s: Size, d: DeviceInfo | None) -> dict[str, list[Params]]:
    """Best guesses per strategy, best first: big tiles for big problems, and for small
    ones tiles small enough that a discrete GPU still gets >= ~128 workgroups."""
    want = 120 if big_gpu(d) else 1

    def tiles(bm: int, bn: int) -> int:
        return -(-s["M"] // bm) * -(-s["N"] // bn)

    # the H200's evolved winner (16x8 per invocation) first where a big GPU gets enough tiles
    shapes = [(128, 256, 16, 8, 8)] if big_gpu(d) else []
    shapes += [(128, 128, 8, 8, 8), (128, 64, 8, 8, 8), (64, 64, 8, 8, 8),
               (64, 64, 4, 4, 8), (64, 32, 4, 4, 8), (32, 32, 4, 4, 8)]
    c = []
    for bm, bn, tm, tn, bk in shapes:
        for db in (1, 0):
            # hoisted clamps first on a GPU (sgemm_hoist.py); a CPU rasterizer runs the flat
            # layout faster (lavapipe 512^3: 30.6 vs 43.4 ms), its code being half as long
            for lay in ((1, 0) if big_gpu(d) else (0, 1)):
                p = {"bm": bm, "bn": bn, "bk": bk, "tm": tm, "tn": tn, "db": db, "spec": 1, "lay": lay}
                c.append((tiles(bm, bn) >= want, p))
                c.append((tiles(bm, bn) >= want, {**p, "spec": 0}))
    c.sort(key=lambda x: not x[0])  # stable: keeps size order within each group
    b = [{"bm": bm, "bn": bn, "bk": 16, "tm": tm, "tn": tn} for bm, bn, tm, tn in
         sorted([(64, 64, 4, 4), (32, 32, 2, 2), (16, 16, 1, 1)],
                key=lambda t: tiles(t[0], t[1]) < want)]
    a = [{"wx": 16, "wy": 16, "tm": 2, "tn": 2}, {"wx": 16, "wy": 16, "tm": 1, "tn": 1}]
    return {"A": a, "B": b, "C": [p for _, p in c]}

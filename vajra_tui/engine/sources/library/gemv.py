"""GEMV templates: one invocation per row with unrolled accumulators (A), lanes splitting
each row's K and a tree sum (B), and the same with vec4 loads of A and x (C).

A streams each row from one invocation: good where an invocation is a CPU thread
(lavapipe), poor on a GPU, whose neighbouring lanes then read far-apart rows. B and C
make neighbouring lanes read neighbouring elements of one row (coalesced) and sum
their partials in workgroup memory (or with subgroups, one row per workgroup).
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.base import (TILE_GUARD, Emitter, Params, Size, Template, big_gpu, open_main,
                                                    subgroups, workgroup_fits)
from vajra_tui.engine.sources.library.reductions import entry, reduce

WG = (32, 64, 128, 256, 512, 1024)
LANES = (4, 8, 16, 32, 64, 128, 256)


# ---- A: one row per invocation, unrolled ---------------------------------------------
def _rows_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    return workgroup_fits(d, p["wg"])


def _rows(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wg, u = p["wg"], p["unroll"]
    e = Emitter()
    e(f"// GEMV rows: one row of A per invocation, workgroups of {wg}, {u} independent",
      "// accumulators over K (the tail of K summed after them).")
    open_main(e, wg)
    e("let t = vajra_tile(wid);", f"let row = t.x * {wg}u + lid.x;",
      "if (t.y >= TILES_Y || row >= M) {", "    return;", "}", "let base = row * K;")
    e(*[f"var acc{j} = 0.0;" for j in range(u)])
    e(f"let body = K - K % {u}u;")
    e.open(f"for (var k = 0u; k < body; k = k + {u}u) {{")
    e(*[f"acc{j} = fma(A[base + k + {j}u], X[k + {j}u], acc{j});" for j in range(u)])
    e.close()
    e("for (var k = body; k < K; k = k + 1u) { acc0 = fma(A[base + k], X[k], acc0); }")
    total = " + ".join(f"acc{j}" for j in range(u))
    e(f"Y[row] = {total};")
    e.close()
    return e.text()


# ---- B and C: lanes split the row, then sum ---------------------------------------------
def _split_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    if p["sg"] and not subgroups(d):
        return "the adapter has no subgroups"
    if p["sg"] and p["rows"] != 1:
        return "subgroup sums keep one row per workgroup"
    return workgroup_fits(d, p["lanes"], p["rows"])


def _vec_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    if s["K"] % 4:
        return "vec4 loads need K to be a multiple of 4"
    return _split_check(p, s, d)


def _split(p: Params, s: Size, d: DeviceInfo | None, vec4: bool = False) -> str:
    lanes, rows, sg = p["lanes"], p["rows"], p["sg"]
    e = Emitter()
    what = "vec4 loads of A and x" if vec4 else "scalar loads"
    e(f"// GEMV split: {rows} row(s) per workgroup, {lanes} lanes per row stride along K with",
      f"// {what}, then " + ("subgroup sums." if sg else "a shared-memory tree sum."),
      f"// tile: {rows}")
    if vec4:
        e("@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;",
          "@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;")
    e(f"var<workgroup> red_s: array<f32, {lanes * rows}>;")
    entry(e, lanes, rows, sg)
    e(*TILE_GUARD, f"let row = min(t.x * {rows}u + lid.y, M - 1u);", "var sum = 0.0;")
    if vec4:
        _vec4_body(e, lanes, p.get("unroll", 1))
    else:
        e("let base = row * K;",
          f"for (var k = lid.x; k < K; k = k + {lanes}u) {{ sum = fma(A[base + k], X[k], sum); }}")
    reduce(e, "sum", "add", "red_s", lanes, rows, sg)
    e(f"if (lid.x == 0u && t.x * {rows}u + lid.y < M) {{", "    Y[row] = sum;", "}")
    e.close()
    return e.text()


def _vec4_body(e: Emitter, lanes: int, u: int) -> None:
    """Each lane's share of the row: ``u`` independent vec4 loads of A in flight per step
    (a loop the compiler need not unroll still keeps u loads outstanding), then the tail."""
    e("let k4 = K / 4u;", "let base = row * k4;")
    e(*[f"var acc{j} = vec4<f32>(0.0);" for j in range(u)])
    if u > 1:
        e("var k = lid.x;")
        e.open(f"for (; k + {(u - 1) * lanes}u < k4; k = k + {u * lanes}u) {{")
        e(*[f"acc{j} = fma(A[base + k + {j * lanes}u], X[k + {j * lanes}u], acc{j});" for j in range(u)])
        e.close()
        e(f"for (; k < k4; k = k + {lanes}u) {{ acc0 = fma(A[base + k], X[k], acc0); }}")
    else:
        e(f"for (var k = lid.x; k < k4; k = k + {lanes}u) {{ acc0 = fma(A[base + k], X[k], acc0); }}")
    e("let acc = " + " + ".join(f"acc{j}" for j in range(u)) + ";",
      "sum = (acc.x + acc.y) + (acc.z + acc.w);")


TEMPLATES = [
    Template("gemv", "rows", "A", "one row per invocation, unrolled accumulators",
             {"wg": WG, "unroll": (1, 2, 4, 8)}, _rows, _rows_check),
    Template("gemv", "split", "B", "lanes split each row along K, tree sum",
             {"lanes": LANES, "rows": (1, 2, 4, 8), "sg": (0, 1)}, _split, _split_check),
    Template("gemv", "vec4", "C", "lanes split each row, vec4 loads, tree sum",
             {"lanes": LANES, "rows": (1, 2, 4, 8), "sg": (0, 1), "unroll": (1, 2, 4)},
             lambda p, s, d: _split(p, s, d, vec4=True), _vec_check,
             general=lambda p: False, late={"unroll": 1}),  # needs K % 4 == 0
]


def priors(s: Size, d: DeviceInfo | None) -> dict[str, list[Params]]:
    sg = 1 if subgroups(d) else 0
    if not big_gpu(d):  # a CPU rasterizer: long rows per invocation, few lanes per row
        return {"A": [{"wg": 64, "unroll": 4}, {"wg": 32, "unroll": 8}, {"wg": 128, "unroll": 4}],
                "B": [{"lanes": 8, "rows": 8, "sg": 0}, {"lanes": 16, "rows": 4, "sg": 0}],
                "C": [{"lanes": 8, "rows": 8, "sg": 0}, {"lanes": 4, "rows": 8, "sg": 0}]}
    return {"A": [{"wg": 128, "unroll": 4}, {"wg": 256, "unroll": 2}],
            "B": [{"lanes": 256, "rows": 1, "sg": sg}, {"lanes": 64, "rows": 4, "sg": 0}],
            "C": [{"lanes": 128, "rows": 1, "sg": sg, "unroll": 2}, {"lanes": 128, "rows": 1, "sg": sg},
                  {"lanes": 32, "rows": 8, "sg": 0, "unroll": 2}, {"lanes": 64, "rows": 4, "sg": 0}]}

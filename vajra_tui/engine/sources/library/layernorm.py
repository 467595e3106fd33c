"""LayerNorm templates: three passes over the row from global memory (A), the row cached in
workgroup memory (B), and one read of the row into vec4 registers (C).

Each is two-pass in its arithmetic (the mean first, then the squared deviations from
it), so rows far from zero keep their digits. The reductions are softmax's (reductions.py):
a shared tree, or (``sg=1``, one row per workgroup) subgroup sums and one partial per subgroup.
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.base import Emitter, Params, Size, big_gpu, subgroups
from vajra_tui.engine.sources.library.reductions import begin_rows, reduce, regs_lanes, row_templates, vec_count

EPS = "1e-5"


def _pow2(n: int, lo: int, hi: int) -> int:
    """The power of two at or below ``n``, within [lo, hi]."""
    return max(lo, min(hi, 1 << max(0, n.bit_length() - 1)))


# ---- A: three passes over the row from global memory --------------------------------
def _rows(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, wy, sg = p["wx"], p["rows"], p["sg"]
    e = Emitter()
    e(f"// LayerNorm rows: {wx} invocations per row, {wy} rows per workgroup; three passes over",
      "// X (mean, squared deviations, write), " + ("subgroup" if sg else "shared-memory tree") + " sums.",
      f"// tile: COLS x {wy}")
    begin_rows(e, wx, wy, sg)
    e(f"let row = min(t.y * {wy}u + lid.y, ROWS - 1u);", "let base = row * COLS;", "var sum = 0.0;",
      f"for (var c = lid.x; c < COLS; c = c + {wx}u) {{ sum = sum + X[base + c]; }}")
    reduce(e, "sum", "add", "red_m", wx, wy, sg)
    e("let mean = sum / f32(COLS);", "var sq = 0.0;",
      f"for (var c = lid.x; c < COLS; c = c + {wx}u) {{",
      "    let dv = X[base + c] - mean;", "    sq = fma(dv, dv, sq);", "}")
    reduce(e, "sq", "add", "red_s", wx, wy, sg)
    e(f"let rstd = inverseSqrt(sq / f32(COLS) + {EPS});",
      f"if (t.y * {wy}u + lid.y < ROWS) {{",
      f"    for (var c = lid.x; c < COLS; c = c + {wx}u) {{",
      "        Y[base + c] = fma((X[base + c] - mean) * rstd, GAMMA[c], BETA[c]);", "    }", "}")
    e.close()
    return e.text()


# ---- B: the row cached in workgroup memory ------------------------------------------
def _smem(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, sg = p["wx"], p["sg"]
    e = Emitter()
    e(f"// LayerNorm smem: one row per workgroup of {wx}, read once from global memory into",
      "// workgroup memory; both sums and the write work from there.",
      "// tile: COLS x 1", "var<workgroup> row_s: array<f32, COLS>;")
    begin_rows(e, wx, 1, sg)
    e("let base = t.y * COLS;", "var sum = 0.0;",
      f"for (var c = lid.x; c < COLS; c = c + {wx}u) {{",
      "    let v = X[base + c];", "    row_s[c] = v;", "    sum = sum + v;", "}")
    reduce(e, "sum", "add", "red_m", wx, 1, sg)
    e("let mean = sum / f32(COLS);", "var sq = 0.0;",
      f"for (var c = lid.x; c < COLS; c = c + {wx}u) {{",
      "    let dv = row_s[c] - mean;", "    sq = fma(dv, dv, sq);", "}")
    reduce(e, "sq", "add", "red_s", wx, 1, sg)
    e(f"let rstd = inverseSqrt(sq / f32(COLS) + {EPS});",
      f"for (var c = lid.x; c < COLS; c = c + {wx}u) {{",
      "    Y[base + c] = fma((row_s[c] - mean) * rstd, GAMMA[c], BETA[c]);", "}")
    e.close()
    return e.text()


# ---- C: one read of the row into vec4 registers ---------------------------------------
def _regs(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, sg = p["wx"], p["sg"]
    v = vec_count(p, s)
    exact = s["COLS"] % (4 * wx) == 0
    e = Emitter()
    e(f"// LayerNorm regs: one row per workgroup of {wx}, each invocation holds {v} vec4 of it",
      "// in registers: X read once, Y written once, GAMMA and BETA read as vec4.",
      "// tile: COLS x 1",
      "@group(0) @binding(0) var<storage, read> X: array<vec4<f32>>;",
      "@group(0) @binding(1) var<storage, read> GAMMA: array<vec4<f32>>;",
      "@group(0) @binding(2) var<storage, read> BETA: array<vec4<f32>>;",
      "@group(0) @binding(3) var<storage, read_write> Y: array<vec4<f32>>;")
    begin_rows(e, wx, 1, sg)
    e("let n4 = COLS / 4u;", "let base = t.y * n4;", "var acc = vec4<f32>(0.0);")
    for i in range(v):
        e(f"let c{i} = lid.x + {i * wx}u;")
        e(f"let x{i} = X[base + c{i}];" if exact else
          f"let x{i} = select(vec4<f32>(0.0), X[base + min(c{i}, n4 - 1u)], c{i} < n4);")
        e(f"acc = acc + x{i};")
    e("var sum = (acc.x + acc.y) + (acc.z + acc.w);")
    reduce(e, "sum", "add", "red_m", wx, 1, sg)
    e("let mean = vec4<f32>(sum / f32(COLS));", "var sq4 = vec4<f32>(0.0);")
    for i in range(v):
        e(f"let d{i} = x{i} - mean;" if exact else
          f"let d{i} = select(vec4<f32>(0.0), x{i} - mean, c{i} < n4);")
        e(f"sq4 = fma(d{i}, d{i}, sq4);")
    e("var sq = (sq4.x + sq4.y) + (sq4.z + sq4.w);")
    reduce(e, "sq", "add", "red_s", wx, 1, sg)
    e(f"let rstd = vec4<f32>(inverseSqrt(sq / f32(COLS) + {EPS}));")
    for i in range(v):
        store = f"Y[base + c{i}] = fma(d{i} * rstd, GAMMA[c{i}], BETA[c{i}]);"
        e(store if exact else f"if (c{i} < n4) {{ {store} }}")
    e.close()
    return e.text()


TEMPLATES = row_templates("layernorm", _rows, _smem, _regs, "one read, vec4 row in registers")


def priors(s: Size, d: DeviceInfo | None) -> dict[str, list[Params]]:
    sg = 1 if subgroups(d) else 0
    cols = s["COLS"]
    if not big_gpu(d):  # a CPU rasterizer: few, long-lived invocations stream best
        return {"A": [{"wx": 32, "rows": 8, "sg": 0}, {"wx": 64, "rows": 4, "sg": 0}],
                "B": [{"wx": 64, "sg": 0}, {"wx": 128, "sg": 0}],
                "C": [{"wx": _pow2(cols // 32, 32, 256), "sg": 0}, {"wx": 64, "sg": 0}]}
    wc = regs_lanes(cols)
    return {"A": [{"wx": 256, "rows": 1, "sg": sg}, {"wx": 128, "rows": 1, "sg": 0}],
            "B": [{"wx": 256, "sg": sg}, {"wx": 256, "sg": 0}],
            "C": [{"wx": wc, "sg": sg}, {"wx": max(32, wc // 2), "sg": sg}, {"wx": 256, "sg": 0}]}

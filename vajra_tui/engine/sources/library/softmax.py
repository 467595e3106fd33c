"""Softmax templates: three-pass row walk (A), row cached in shared memory (B), and a
single pass with the row held in vec4 registers (C).

The max and the exp-sum are row reductions: a shared-memory tree or (``sg=1``)
subgroup builtins, emitted by reductions.py, which layernorm and gemv share.
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.base import Emitter, Params, Size, subgroups
from vajra_tui.engine.sources.library.reductions import begin_rows, reduce, regs_lanes, row_templates, vec_count

NEG = "-3.0e38"


# ---- A: three passes over the row from global memory --------------------------------
def _rows(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, wy, sg = p["wx"], p["rows"], p["sg"]
    e = Emitter()
    e(f"// Softmax rows: {wx} invocations per row, {wy} rows per workgroup, three passes",
      "// over X (max, sum, write), " + ("subgroup" if sg else "shared-memory tree") + " reductions.",
      f"// tile: COLS x {wy}")
    begin_rows(e, wx, wy, sg)
    e(f"let row = min(t.y * {wy}u + lid.y, ROWS - 1u);", "let base = row * COLS;",
      f"var m = {NEG};")
    e(f"for (var c = lid.x; c < COLS; c = c + {wx}u) {{ m = max(m, X[base + c]); }}")
    reduce(e, "m", "max", "red_m", wx, wy, sg)
    e("var sum = 0.0;",
      f"for (var c = lid.x; c < COLS; c = c + {wx}u) {{ sum = sum + exp(X[base + c] - m); }}")
    reduce(e, "sum", "add", "red_s", wx, wy, sg)
    e("let inv = 1.0 / sum;")
    e(f"if (t.y * {wy}u + lid.y < ROWS) {{")
    e(f"    for (var c = lid.x; c < COLS; c = c + {wx}u) {{ Y[base + c] = exp(X[base + c] - m) * inv; }}",
      "}")
    e.close()
    return e.text()


# ---- B: the row cached in workgroup memory ------------------------------------------
def _smem(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, sg = p["wx"], p["sg"]
    e = Emitter()
    e(f"// Softmax smem: one row per workgroup of {wx}, read once from global memory into",
      "// workgroup memory; max, exp-sum and the write work from there.",
      "// tile: COLS x 1", "var<workgroup> row_s: array<f32, COLS>;")
    begin_rows(e, wx, 1, sg)
    e("let base = t.y * COLS;", f"var m = {NEG};")
    e(f"for (var c = lid.x; c < COLS; c = c + {wx}u) {{",
      "    let v = X[base + c];", "    row_s[c] = v;", "    m = max(m, v);", "}")
    reduce(e, "m", "max", "red_m", wx, 1, sg)
    e("var sum = 0.0;",
      f"for (var c = lid.x; c < COLS; c = c + {wx}u) {{",
      "    let v = exp(row_s[c] - m);", "    row_s[c] = v;", "    sum = sum + v;", "}")
    reduce(e, "sum", "add", "red_s", wx, 1, sg)
    e("let inv = 1.0 / sum;",
      f"for (var c = lid.x; c < COLS; c = c + {wx}u) {{ Y[base + c] = row_s[c] * inv; }}")
    e.close()
    return e.text()


# ---- C: single pass, row in vec4 registers ------------------------------------------
def _regs(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, sg = p["wx"], p["sg"]
    v = vec_count(p, s)
    exact = s["COLS"] % (4 * wx) == 0
    e = Emitter()
    e(f"// Softmax regs: one row per workgroup of {wx}, each invocation holds {v} vec4 of it",
      "// in registers: X read once, Y written once; max and sum reduced with "
      + ("subgroups." if sg else "a shared tree."),
      "// tile: COLS x 1",
      "@group(0) @binding(0) var<storage, read> X: array<vec4<f32>>;",
      "@group(0) @binding(1) var<storage, read_write> Y: array<vec4<f32>>;")
    begin_rows(e, wx, 1, sg)
    e("let base = t.y * (COLS / 4u);", f"var m = {NEG};")
    for i in range(v):
        e(f"let c{i} = lid.x + {i * wx}u;")
        if exact:
            e(f"let x{i} = X[base + c{i}];")
        else:
            e(f"let x{i} = select(vec4<f32>({NEG}), X[base + min(c{i}, COLS / 4u - 1u)], "
              f"c{i} < COLS / 4u);")
        e(f"m = max(m, max(max(x{i}.x, x{i}.y), max(x{i}.z, x{i}.w)));")
    reduce(e, "m", "max", "red_m", wx, 1, sg)
    e("var acc = vec4<f32>(0.0);")
    for i in range(v):
        e(f"let e{i} = exp(x{i} - vec4<f32>(m));", f"acc = acc + e{i};")
    e("var sum = (acc.x + acc.y) + (acc.z + acc.w);")
    reduce(e, "sum", "add", "red_s", wx, 1, sg)
    e("let inv = vec4<f32>(1.0 / sum);")
    for i in range(v):
        store = f"Y[base + c{i}] = e{i} * inv;"
        e(store if exact else f"if (c{i} < COLS / 4u) {{ {store} }}")
    e.close()
    return e.text()


TEMPLATES = row_templates("softmax", _rows, _smem, _regs, "single pass, vec4 row in registers")


def priors(s: Size, d: DeviceInfo | None) -> dict[str, list[Params]]:
    sg = 1 if subgroups(d) else 0
    cols = s["COLS"]
    # ~4-8 vec4 per invocation for long rows, one workgroup per row
    wc = regs_lanes(cols)
    c = [{"wx": wc, "sg": sg}, {"wx": max(32, wc // 2), "sg": sg}, {"wx": 256, "sg": 0},
         {"wx": 1024, "sg": 0}, {"wx": 256, "sg": sg}]
    b = [{"wx": 256, "sg": sg}, {"wx": 256, "sg": 0}, {"wx": 128, "sg": 0}]
    a = [{"wx": 256, "rows": 1, "sg": sg}, {"wx": 128, "rows": 1, "sg": 0},
         {"wx": 64, "rows": 4, "sg": 0}, {"wx": 32, "rows": 8, "sg": 0}]
    return {"A": a, "B": b, "C": c}

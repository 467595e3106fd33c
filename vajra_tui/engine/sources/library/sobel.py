"""Sobel templates: direct with a column of outputs per invocation (A), shared tile
with halo (B), and vec4 rows with a sliding 3-row register window (C).

Sobel is separable: per input row, ``hs = l + 2c + r`` and ``hd = r - l``; then
``gx = hd(top) + 2 hd(mid) + hd(bot)`` and ``gy = hs(bot) - hs(top)``. A and C
slide that window down a column, so each input row is loaded once per invocation.
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library.base import (TILE_GUARD, Emitter, Params, Size, Template, open_main, storage_fits,
                                                    workgroup_fits)


def _geom_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    return workgroup_fits(d, p["wx"], p["wy"])


def _slide(e: Emitter, py: int, load, out, guard) -> None:
    """Emit the separable 3-row window sliding over py output rows (unrolled)."""
    for j in range(py + 2):
        e(*load(j))
        e(f"let hs{j} = l{j} + 2.0 * c{j} + r{j};", f"let hd{j} = r{j} - l{j};")
        if j >= 2:
            o = j - 2
            e(f"let gx{o} = hd{o} + 2.0 * hd{o + 1} + hd{o + 2};", f"let gy{o} = hs{o + 2} - hs{o};")
            e(f"if ({guard(o)}) {{ {out(o)} }}")


# ---- A: direct, a column of py outputs per invocation --------------------------------
def _direct(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, wy, py = p["wx"], p["wy"], p["py"]
    e = Emitter()
    e(f"// Sobel direct: {wx}x{wy} workgroup, {py} output rows per invocation; clamped",
      "// loads from global memory, the 3-row window slides down the column in registers.",
      f"// tile: {wx}x{wy * py}")
    open_main(e, wx, wy)
    e(*TILE_GUARD)
    e(f"let x = t.x * {wx}u + lid.x;", f"let y0 = t.y * {wy * py}u + lid.y * {py}u;",
      "let xc = min(x, W - 1u);", "let xl = select(xc - 1u, 0u, xc == 0u);",
      "let xr = min(xc + 1u, W - 1u);")

    def load(j: int) -> list[str]:
        return [f"let ro{j} = u32(clamp(i32(y0) + {j - 1}, 0, i32(H) - 1)) * W;",
                f"let l{j} = IMG[ro{j} + xl];", f"let c{j} = IMG[ro{j} + xc];",
                f"let r{j} = IMG[ro{j} + xr];"]

    _slide(e, py, load, lambda o: f"OUT[(y0 + {o}u) * W + x] = sqrt(gx{o} * gx{o} + gy{o} * gy{o});",
           lambda o: f"x < W && y0 + {o}u < H")
    e.close()
    return e.text()


# ---- B: shared tile with a one-pixel halo -------------------------------------------
def _smem_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    return _geom_check(p, s, d) or storage_fits(d, 4 * (p["wx"] + 2) * (p["wy"] * p["py"] + 2))


def _smem(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, wy, py = p["wx"], p["wy"], p["py"]
    th = wy * py
    sw, sh = wx + 2, th + 2
    e = Emitter()
    e(f"// Sobel smem: {wx}x{th} outputs per workgroup; the ({sw})x({sh}) input tile with",
      "// its halo is loaded once (clamped) into workgroup memory.",
      f"// tile: {wx}x{th}", f"var<workgroup> tile_s: array<f32, {sw * sh}>;")
    open_main(e, wx, wy)
    e(*TILE_GUARD)
    e(f"let x0 = i32(t.x * {wx}u) - 1;", f"let y0 = i32(t.y * {th}u) - 1;")
    e(f"for (var i = li; i < {sw * sh}u; i = i + {wx * wy}u) {{",
      f"    let gx = u32(clamp(x0 + i32(i % {sw}u), 0, i32(W) - 1));",
      f"    let gy = u32(clamp(y0 + i32(i / {sw}u), 0, i32(H) - 1));",
      "    tile_s[i] = IMG[gy * W + gx];", "}", "workgroupBarrier();")
    e(f"let x = t.x * {wx}u + lid.x;", f"let yb = lid.y * {py}u;")

    def load(j: int) -> list[str]:
        return [f"let so{j} = (yb + {j}u) * {sw}u + lid.x;", f"let l{j} = tile_s[so{j}];",
                f"let c{j} = tile_s[so{j} + 1u];", f"let r{j} = tile_s[so{j} + 2u];"]

    _slide(e, py, load,
           lambda o: f"OUT[(t.y * {th}u + yb + {o}u) * W + x] = sqrt(gx{o} * gx{o} + gy{o} * gy{o});",
           lambda o: f"x < W && t.y * {th}u + yb + {o}u < H")
    e.close()
    return e.text()


# ---- C: vec4 rows, sliding register window ------------------------------------------
def _vec4_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    if p["spec"] and s["W"] % 4:
        return "vec4 rows need W to be a multiple of 4"
    return _geom_check(p, s, d)


def _vec4(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wx, wy, py, spec = p["wx"], p["wy"], p["py"], p["spec"]
    e = Emitter()
    e(f"// Sobel vec4: {wx}x{wy} workgroup, each invocation 4 pixels wide and {py} rows tall;",
      "// vec4 loads of each input row (plus the neighbours' edge lanes), separable",
      "// gradients on vec4, 3-row window sliding in registers.",
      "// size-specialised: W multiple of 4" if spec else "// general: scalar clamped loads",
      f"// tile: {4 * wx}x{wy * py}")
    if spec:
        e("@group(0) @binding(0) var<storage, read> IMG: array<vec4<f32>>;",
          "@group(0) @binding(1) var<storage, read_write> OUT: array<vec4<f32>>;")
    open_main(e, wx, wy)
    e(*TILE_GUARD)
    e(f"let q = t.x * {wx}u + lid.x;", "let x = q * 4u;", f"let y0 = t.y * {wy * py}u + lid.y * {py}u;")
    if spec:
        e("let W4 = W / 4u;", "let qc = min(q, W4 - 1u);",
          "let ql = select(qc - 1u, 0u, qc == 0u);", "let qr = min(qc + 1u, W4 - 1u);")
    else:
        e(*[f"let x{c} = min(x + {c}u, W - 1u);" for c in range(4)],
          "let xl = select(x - 1u, 0u, x == 0u);", "let xl2 = min(xl, W - 1u);",
          "let xr = min(x + 4u, W - 1u);")

    def load(j: int) -> list[str]:
        row = f"u32(clamp(i32(y0) + {j - 1}, 0, i32(H) - 1))"
        if spec:
            return [f"let ro{j} = {row} * W4;", f"let c{j} = IMG[ro{j} + qc];",
                    f"let lw{j} = select(IMG[ro{j} + ql].w, c{j}.x, qc == 0u);",
                    f"let rx{j} = select(IMG[ro{j} + qr].x, c{j}.w, qc == W4 - 1u);",
                    f"let l{j} = vec4<f32>(lw{j}, c{j}.xyz);", f"let r{j} = vec4<f32>(c{j}.yzw, rx{j});"]
        return [f"let ro{j} = {row} * W;",
                f"let c{j} = vec4<f32>(IMG[ro{j} + x0], IMG[ro{j} + x1], IMG[ro{j} + x2], IMG[ro{j} + x3]);",
                f"let l{j} = vec4<f32>(IMG[ro{j} + xl2], c{j}.xyz);",
                f"let r{j} = vec4<f32>(c{j}.yzw, IMG[ro{j} + xr]);"]

    if spec:
        out = lambda o: f"OUT[(y0 + {o}u) * W4 + q] = sqrt(gx{o} * gx{o} + gy{o} * gy{o});"  # noqa: E731
        guard = lambda o: f"q < W4 && y0 + {o}u < H"  # noqa: E731
    else:
        def out(o: int) -> str:
            return (f"let m{o} = sqrt(gx{o} * gx{o} + gy{o} * gy{o}); "
                    + " ".join(f"if (x + {c}u < W) {{ OUT[(y0 + {o}u) * W + x + {c}u] = m{o}[{c}]; }}"
                               for c in range(4)))
        guard = lambda o: f"x < W && y0 + {o}u < H"  # noqa: E731
    _slide(e, py, load, out, guard)
    e.close()
    return e.text()


GEOM = {"wx": (8, 16, 32, 64, 128, 256), "wy": (1, 2, 4, 8, 16), "py": (1, 2, 4, 8, 16)}
TEMPLATES = [
    Template("sobel", "direct", "A", "workgroup geometry + column of outputs per invocation",
             dict(GEOM), _direct, _geom_check),
    Template("sobel", "smem", "B", "shared tile with halo",
             dict(GEOM), _smem, _smem_check),
    Template("sobel", "vec4", "C", "vec4 rows, sliding register window",
             {**GEOM, "spec": (0, 1)}, _vec4, _vec4_check, general=lambda p: not p["spec"]),
]


def priors(s: Size, d: DeviceInfo | None) -> dict[str, list[Params]]:
    spec = 1 if s["W"] % 4 == 0 else 0
    c = [{"wx": 64, "wy": 4, "py": 4, "spec": spec}, {"wx": 32, "wy": 8, "py": 4, "spec": spec},
         {"wx": 64, "wy": 2, "py": 8, "spec": spec}, {"wx": 64, "wy": 4, "py": 4, "spec": 0}]
    b = [{"wx": 32, "wy": 8, "py": 4}, {"wx": 64, "wy": 4, "py": 2}, {"wx": 16, "wy": 16, "py": 1}]
    a = [{"wx": 64, "wy": 4, "py": 4}, {"wx": 32, "wy": 8, "py": 2}, {"wx": 16, "wy": 16, "py": 1}]
    return {"A": a, "B": b, "C": c}

"""Conv1d templates: direct (A), X and W staged in workgroup memory (B), and vec4
sliding windows in registers (C).

C: every invocation owns ``groups`` runs of 4 consecutive outputs (runs strided by
the workgroup, so shared reads stay conflict-free); per 4 taps it reads one vec4 of
X and one vec4 of W from workgroup memory and issues 4 vec4 FMAs on swizzles of the
two-vec4 window it carries in registers, so the inner loop is FMA-bound. Runs of
several vec4 (``run``) are conv1d_run.py; scalar sliding windows (``slide``, ``wsrc``,
``xsrc``) are conv1d_slide.py; ``seq`` tiles streamed through one workgroup, the next
one's window loaded while the current one computes, are conv1d_stream.py.
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.sources.library import conv1d_run, conv1d_slide, conv1d_stream
from vajra_tui.engine.sources.library.base import (TILE_GUARD, Emitter, Params, Size, Template, big_gpu, open_main,
                                                    storage_fits, workgroup_fits)


# ---- A: direct ----------------------------------------------------------------------
def _direct_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    return workgroup_fits(d, p["wg"])


def _direct(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wg, r = p["wg"], p["opt"]
    e = Emitter()
    e(f"// Conv1d direct: workgroup of {wg}, {r} outputs per invocation strided by {wg},",
      "// taps and weights straight from global memory (weights are uniform: cached).",
      f"// tile: {wg * r}")
    open_main(e, wg)
    e(*TILE_GUARD)
    e(*[f"let i{j} = t.x * {wg * r}u + lid.x + {j * wg}u;" for j in range(r)])
    e(*[f"let x{j} = min(i{j}, N - 1u);" for j in range(r)])
    e(*[f"var acc{j} = 0.0;" for j in range(r)])
    e.open("for (var k = 0u; k < K; k = k + 1u) {")
    e("let w = W[k];")
    e(*[f"acc{j} = fma(X[x{j} + k], w, acc{j});" for j in range(r)])
    e.close()
    e(*[f"if (i{j} < N) {{ Y[i{j}] = acc{j}; }}" for j in range(r)])
    e.close()
    return e.text()


# ---- B: shared X window and W -------------------------------------------------------
def _smem_bytes(p: Params, s: Size) -> int:
    return 4 * (p["wg"] * p["opt"] + 2 * s["K"])


def _smem_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    return workgroup_fits(d, p["wg"]) or storage_fits(d, _smem_bytes(p, s))


def _smem(p: Params, s: Size, d: DeviceInfo | None) -> str:
    wg, r = p["wg"], p["opt"]
    tile = wg * r
    e = Emitter()
    e(f"// Conv1d smem: {tile} outputs per workgroup; the {tile}+K-1 inputs and the K weights",
      f"// are staged in workgroup memory, each invocation computes {r} outputs strided by {wg}.",
      f"// tile: {tile}",
      f"var<workgroup> xs: array<f32, {tile + s['K']}>;",
      f"var<workgroup> ws: array<f32, {s['K']}>;")
    open_main(e, wg)
    e(*TILE_GUARD, f"let base = t.x * {tile}u;", "let xlen = N + K - 1u;")
    e(f"for (var i = lid.x; i < {tile}u + K - 1u; i = i + {wg}u) {{",
      "    xs[i] = select(0.0, X[min(base + i, xlen - 1u)], base + i < xlen);", "}",
      f"for (var i = lid.x; i < K; i = i + {wg}u) {{ ws[i] = W[i]; }}",
      "workgroupBarrier();")
    e(*[f"var acc{j} = 0.0;" for j in range(r)])
    e.open("for (var k = 0u; k < K; k = k + 1u) {")
    e("let w = ws[k];")
    e(*[f"acc{j} = fma(xs[lid.x + {j * wg}u + k], w, acc{j});" for j in range(r)])
    e.close()
    e(*[f"if (base + lid.x + {j * wg}u < N) {{ Y[base + lid.x + {j * wg}u] = acc{j}; }}"
        for j in range(r)])
    e.close()
    return e.text()


# ---- C: vec4 sliding windows in registers -------------------------------------------
def _regs_bytes(p: Params, s: Size) -> int:
    if p["slide"]:
        return conv1d_slide.smem_bytes(p, s)
    ph = conv1d_run.phases(p)  # the X window (in its phase arrays) and W, any run
    return 16 * (ph * -(-conv1d_run.nx(p, s) // ph) + conv1d_run.w_slots(s))


def _regs_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    if p["v4out"] and s["N"] % 4:
        return "vec4 stores need N to be a multiple of 4"
    if p["lay"] and (p["slide"] or p["run"] == 1):
        return "lay=1 splits the vec4 window by run phase: runs of several vec4 (slide=0) only"
    if p.get("pd", 1) > 1 and p["seq"] == 1:
        return "pd carries windows ahead in the streamed kernel: it needs seq > 1"
    if p["seq"] > 1:
        why = conv1d_stream.check(p, s)
    elif p["slide"]:
        why = conv1d_slide.check(p, s)
    elif p["wsrc"] or p["xsrc"]:
        why = "wsrc and xsrc choose the sliding-window kernel's sources (slide > 0)"
    else:
        why = None
    if why:
        return why
    if p["run"] > 1 and not p["slide"] and conv1d_run.check(p, s):
        return conv1d_run.check(p, s)
    return workgroup_fits(d, p["wg"]) or storage_fits(d, _regs_bytes(p, s))


def _regs(p: Params, s: Size, d: DeviceInfo | None) -> str:
    if p["seq"] > 1:
        return conv1d_stream.render(p, s, d)
    if p["slide"]:
        return conv1d_slide.render(p, s, d)
    if p["run"] > 1:
        return conv1d_run.render(p, s, d)
    wg, g, v4 = p["wg"], p["groups"], p["v4out"]
    k4 = conv1d_run.w_slots(s)
    tile = 4 * wg * g
    nx = conv1d_run.nx(p, s)  # vec4 slots of the staged X window
    e = Emitter()
    e(f"// Conv1d regs: {tile} outputs per workgroup of {wg}; each invocation owns {g} run(s)",
      "// of 4 consecutive outputs; per 4 taps: one vec4 of X and of W from workgroup",
      "// memory and 4 vec4 FMAs on the register window.",
      f"// tile: {tile}")
    conv1d_run.declare_window(e, v4, nx, k4)
    open_main(e, wg)
    e(*TILE_GUARD, f"let base = t.x * {tile}u;", "let xlen = N + K - 1u;")
    conv1d_run.stage_window(e, wg, nx, k4)
    for j in range(g):
        e(f"var acc{j} = vec4<f32>(0.0);", f"var p{j} = xs[lid.x + {j * wg}u];")
    e.open(f"for (var kc = 0u; kc < {k4}u; kc = kc + 1u) {{")
    e("let w = ws[kc];")
    for j in range(g):
        e(f"let n{j} = xs[lid.x + {j * wg + 1}u + kc];")
        conv1d_run.taps(e, f"acc{j}", "w", f"p{j}", f"n{j}")
        e(f"p{j} = n{j};")
    e.close()
    for j in range(g):
        e(f"let o{j} = base + (lid.x + {j * wg}u) * 4u;")
        conv1d_run.store(e, f"o{j}", f"acc{j}", v4)
    e.close()
    return e.text()


WG = (32, 64, 128, 256, 512, 1024)
# run: vec4 outputs per run sharing one window (conv1d_run.py), or with slide > 0 tiles per
# workgroup in turn (conv1d_slide.py: slide, wsrc, xsrc)
RUNS = (1, 2, 3, 4, 5, 6, 7, 8)
TEMPLATES = [
    Template("conv1d", "direct", "A", "workgroup geometry + outputs per invocation",
             {"wg": WG, "opt": (1, 2, 4, 8)}, _direct, _direct_check),
    Template("conv1d", "smem", "B", "X window and W in workgroup memory",
             {"wg": WG, "opt": (1, 2, 4, 8, 16)}, _smem, _smem_check),
    Template("conv1d", "regs", "C", "vec4 register windows, vec4 FMAs",
             {"wg": WG, "groups": (1, 2, 3, 4, 6, 8), "v4out": (0, 1), "run": RUNS,
              "slide": conv1d_slide.SLIDES, "wsrc": (0, 1, 2, 3), "xsrc": (0, 1), "seq": conv1d_stream.SEQS,
              "lay": (0, 1), "pd": (1, 2)},
             _regs, _regs_check, general=lambda p: not p["v4out"],
             late={"run": 1, "slide": 0, "wsrc": 0, "xsrc": 0, "seq": 1, "lay": 0, "pd": 1}),
]


def priors(s: Size, d: DeviceInfo | None) -> dict[str, list[Params]]:
    v4 = 1 if s["N"] % 4 == 0 else 0
    # runs of 5 vec4 share one window (odd: conflict-free); short inputs keep more workgroups
    run = [{"wg": 256, "groups": 1, "run": 5}, {"wg": 128, "groups": 1, "run": 3}]
    if s["N"] < 1 << 22:
        run.reverse()
    elif big_gpu(d):
        # H200 at 2^25: run=2 measured best (26.5-26.7 TF/s in two sweeps); longer runs and every
        # scalar sliding window (conv1d_slide.py, 13-19 TF/s) were slower: kept for evolution.
        # seq=4 streams four tiles through a workgroup (conv1d_stream.py; on lavapipe slower), W in
        # registers (wsrc=2): 128 lanes 0.133 ms in rounds 5-6 (h200-sweep-27-conv-{5,6}.json), W
        # staged 0.141, 256 lanes 0.151; the window split by phase (lay=1) gained nothing
        # W as a uniform (wsrc=3): 0.1315 ms against 0.1373 for wsrc=2 at seq=4 on an H100 (round
        # 13, benchmarks/experiments/conv1d_taps.py, the same kernel with the taps from the constant bank)
        run = [{"wg": 128, "groups": 1, "run": 2, "seq": 4, "wsrc": 3}, {"wg": 128, "groups": 1, "run": 2, "seq": 4, "wsrc": 2},
               {"wg": 128, "groups": 1, "run": 2, "seq": 4}, {"wg": 64, "groups": 1, "run": 2, "seq": 4, "wsrc": 2},
               {"wg": 256, "groups": 1, "run": 2}, {"wg": 256, "groups": 1, "run": 1, "slide": 7}] + run
    c = [{**r, "v4out": v4} for r in run] + [
        {"wg": 256, "groups": 4, "v4out": v4, "run": 1}, {"wg": 128, "groups": 4, "v4out": v4, "run": 1},
        {"wg": 256, "groups": 2, "v4out": v4, "run": 1}, {"wg": 64, "groups": 2, "v4out": 0, "run": 1}]
    b = [{"wg": 256, "opt": 4}, {"wg": 128, "opt": 4}, {"wg": 64, "opt": 2}]
    a = [{"wg": 256, "opt": 2}, {"wg": 128, "opt": 1}, {"wg": 64, "opt": 1}]
    return {"A": a, "B": b, "C": c}

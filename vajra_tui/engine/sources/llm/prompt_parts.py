"""The pieces every request to the kernel-writing model is built from.

The strategy briefs (the system prompt is in system.py, re-exported here), the contract's
sections (workload, grid and tile or the workload's own grid and passes, verification,
prelude, baseline, ceilings, adapter, browsers) and the small
formatters of measured numbers. Generation 1's request (prompts.py) and the feedback of
later ones (feedback.py) both use them; they live below both, so that prompts.py can
hand later generations to feedback.py without the two importing each other.
"""

from __future__ import annotations

from vajra_tui.engine.gpu import loop_limit
from vajra_tui.engine.candidate import GenerationContext
from vajra_tui.engine.events import CandidateResult, DeviceInfo
from vajra_tui.engine.sources.llm.prompt_workload import (binding_lines, dispatch_text, entry_points, explicit_grid,
                                                          optional_pass_text)
# the system prompt lives in system.py; callers import it from here or from prompts.py
from vajra_tui.engine.sources.llm.system import SYSTEM_PROMPT, not_all_nan, system_prompt  # noqa: F401
from vajra_tui.engine.workloads.base import Workload

STRATEGY_BRIEFS: dict[str, str] = {
    "A": "Strategy A - workgroup geometry: tune @workgroup_size and how many outputs each "
    "invocation computes (register blocking) for occupancy and coalesced access. "
    "No shared memory.",
    "B": "Strategy B - shared workgroup memory tiling: stage tiles of the inputs in "
    "`var<workgroup>` arrays, synchronise with workgroupBarrier() in uniform control "
    "flow, and reuse each loaded element many times.",
    "C": "Strategy C - vectorized math: load and store vec4<f32> (redeclare bindings as "
    "array<vec4<f32>> where the layout allows, keep inputs `read`), accumulate with "
    "fma(), and keep the inner loop free of scalar index math.",
}

_LIMIT_KEYS = (
    "max-compute-workgroup-storage-size",
    "max-compute-invocations-per-workgroup",
    "max-compute-workgroups-per-dimension",
    "max-compute-workgroup-size-x",
    "max-compute-workgroup-size-y",
    "max-compute-workgroup-size-z",
)

# Enabled device features a kernel can use, and the directive that turns each on.
FEATURE_DIRECTIVES = {"shader-f16": "enable f16;", "subgroups": "enable subgroups;"}

REPLY_FORMAT = ("Reply with exactly one ```wgsl fenced block holding the complete kernel, "
                "with at most a few sentences before it and nothing after it.")


def fence(code: str, lang: str = "wgsl") -> str:
    return f"```{lang}\n{code.strip(chr(10))}\n```"


def numbered(code: str) -> str:
    """Source with line numbers (``  7 | ...``), for text the model has not seen."""
    lines = code.rstrip("\n").split("\n")
    width = len(str(len(lines)))
    return "\n".join(f"{i:>{width}} | {line}" for i, line in enumerate(lines, 1))


def num(v: float | None, fmt: str = ".3g") -> str:
    return "n/a" if v is None else format(v, fmt)


def duration(ms: float | None) -> str:
    """Below a millisecond in µs with three significant digits, as the screens show it."""
    if ms is None:
        return "n/a"
    return f"{ms * 1e3:.3g} µs" if ms < 1.0 else f"{ms:.4g} ms"


def numbers(r: CandidateResult) -> str:
    """A result's measured numbers: median, throughput, roofline, regime, speedup."""
    parts = [f"median {duration(r.median_ms)}"]
    if r.iqr_ms is not None:
        parts[0] += f" (IQR {duration(r.iqr_ms)})"
    parts += [f"{num(r.gflops)} GFLOP/s", f"{num(r.gbps)} GB/s"]
    if r.pct_of_roofline is not None:
        parts.append(f"{r.pct_of_roofline:.1f}% of the roofline")
    if r.regime:
        parts.append(f"{r.regime}-bound")
    if r.speedup is not None and r.id != "baseline":
        parts.append(f"{r.speedup:.2f}x the baseline's speed")
    if r.suspicious:
        parts.append("SUSPICIOUS: over 100% of the roofline")
    return ", ".join(parts)


def grid_text(ctx: GenerationContext) -> str:
    w = ctx.workload
    gx, gy = (list(w.output_grid) + [1, 1])[:2]
    out = ctx.output or "the output buffer"
    return (f"Output grid: {ctx.axes_text()} ({gx * gy} output elements). Element (x, y) is "
            f"{out}[y * {gx} + x].")


def tile_text(ctx: GenerationContext) -> str:
    dims = ", ".join(ctx.workload.size) or "the size constants"
    return "\n".join([
        "Dispatch: the grid is ceil(output / tile) workgroups along each axis. Declare the tile, "
        "how many output elements along x and y ONE workgroup produces, in a header line:",
        "- `// tile: 64x64`: one workgroup computes a 64x64 block of outputs;",
        "- `// tile: 256`: 256 outputs along x, 1 along y;",
        f"- `// tile: COLS x 1`: size constants work too (here: one workgroup per row of COLS "
        f"outputs; this workload's constants: {dims}).",
        "Without a header one invocation produces one output (tile = @workgroup_size). A tile "
        "smaller than what a workgroup really computes dispatches the kernel many times over; a "
        "larger one leaves outputs unwritten.",
        "The prelude defines TILES_X and TILES_Y (tiles along x and y: ceil(output / tile)), "
        "DISPATCH_X (workgroups dispatched along x) and `fn vajra_tile(wid: vec3<u32>) -> "
        "vec2<u32>`. A grid past the adapter's per-dimension limit is folded into two dimensions, "
        "so workgroup_id is not the tile: call `let tile = vajra_tile(workgroup_id);` and use "
        "tile.x and tile.y. Folding may dispatch a few workgroups more than there are tiles: "
        "a workgroup with `tile.y >= TILES_Y` has no work and must write nothing "
        "(`if (tile.y >= TILES_Y) { return; }` is uniform across the workgroup, so it is safe "
        "before a barrier).",
    ])


def verification_text(ctx: GenerationContext, own_start: bool = False) -> str:
    """The NaN fill and the tolerance; ``own_start``: some buffer starts otherwise."""
    w = ctx.workload
    return (f"Verification: before every dispatch the output is filled with NaN, so every output "
            f"element must be written (an unwritten one fails as \"never written\"); NaN or Inf "
            f"never pass. Each element must satisfy |out - ref| <= atol + rtol*|ref| with "
            f"atol={w.atol:g}, rtol={w.rtol:g}, on two input sets of signed values."
            + (" An f16 output's atol is 2^-24 more (one subnormal step)."
               if any(b.get("dtype") == "f16" and b.get("access") == "read_write" for b in w.bindings)
               else "")
            + (" A buffer the bindings above say starts at a value or holds an input starts so "
               "instead." if own_start else ""))


def baseline_text(ctx: GenerationContext) -> str:
    head = "Baseline kernel (correct, slow)"
    b = ctx.baseline
    if b is not None and b.median_ms is not None:
        head += f", measured: {numbers(b)}"
    return head + ":\n" + fence(ctx.baseline_source)


def bound_text(ctx: GenerationContext) -> str:
    """The calibrated ceilings and what bounds this size: intensity against the ridge point."""
    cal, w = ctx.calibration, ctx.workload
    if cal is None:
        return "No calibration of this adapter's ceilings is available."
    intensity = w.flops / w.min_bytes if w.min_bytes else 0.0
    ridge = cal.fma_gflops / cal.copy_gbps if cal.copy_gbps else float("inf")
    t_mem = w.min_bytes / (cal.copy_gbps * 1e9) * 1e3 if cal.copy_gbps else 0.0
    t_fma = w.flops / (cal.fma_gflops * 1e9) * 1e3 if cal.fma_gflops else 0.0
    regime = "memory" if intensity < ridge else "compute"
    best = max(t_mem, t_fma, cal.launch_floor_ms)
    lines = [
        f"Calibrated ceilings of this adapter: copy {cal.copy_gbps:.4g} GB/s, f32 FMA "
        f"{cal.fma_gflops:.4g} GFLOP/s, empty-dispatch launch floor {duration(cal.launch_floor_ms)}.",
        f"Arithmetic intensity at this size: {intensity:.3g} FLOP/byte (FLOP over the minimum "
        f"bytes moved); the ridge point is {ridge:.3g} FLOP/byte (FMA rate / copy rate), so this "
        f"size is {regime}-bound. Moving the bytes takes at least {duration(t_mem)}, the FMAs "
        f"at least {duration(t_fma)}: no kernel beats {duration(best)}.",
    ]
    if best == cal.launch_floor_ms:
        lines.append("The launch floor dominates at this size: fewer, larger workgroups help "
                     "more than faster arithmetic.")
    return "\n".join(lines)


def adapter_text(ctx: GenerationContext) -> str:
    d = ctx.device
    kind = d.adapter_type or "unknown type"
    lines = [f"Adapter: {d.name} ({d.backend or 'unknown backend'}, {kind})."]
    if d.software:
        lines.append("This is a SOFTWARE adapter (a CPU rasterizer such as Mesa's lavapipe): "
                     "workgroups run on CPU threads and SIMD lanes, so the timings are CPU timings; "
                     "cache-friendly access and little synchronisation matter most.")
    if loop_limit.applies_to(d):
        lines.append(loop_limit.MODEL_RULE)
    for key in _LIMIT_KEYS:
        if key in d.limits:
            lines.append(f"- {key}: {d.limits[key]}")
    lines.append(features_text(ctx))
    return "\n".join(lines)


def features_text(ctx: GenerationContext) -> str:
    """Only the features requested on the device; nothing else is advertised."""
    d = ctx.device
    usable = [f for f in d.enabled_features if f in FEATURE_DIRECTIVES]
    if not usable:
        return ("Optional shader features enabled on the device: none. Write no `enable` "
                "directive: no f16 types, no subgroup builtins.")
    parts = []
    for f in usable:
        text = f"{f} (write `{FEATURE_DIRECTIVES[f]}` first in your kernel)"
        if f == "subgroups":
            text += subgroup_size_text(d)
        parts.append(text)
    return ("Optional shader features enabled on the device (the only ones you may use): "
            + "; ".join(parts) + ".")


def subgroup_size_text(d: DeviceInfo) -> str:
    """What the model may assume of the subgroup size: the range the adapter reports, raised
    to the floor Vajra knows (an NVIDIA GPU's 32-lane warps, where wgpu says 4)."""
    least = d.least_subgroup()
    if d.subgroup_min_size and d.subgroup_max_size:
        if least > d.subgroup_min_size:
            return (f"; a subgroup here has at least {least} lanes (NVIDIA's warps; wgpu reports "
                    f"{d.subgroup_min_size} to {d.subgroup_max_size}): rely on {least} at most, "
                    "and read @builtin(subgroup_size) for the actual size")
        return (f"; the subgroup size is between {d.subgroup_min_size} and "
                f"{d.subgroup_max_size}: read @builtin(subgroup_size), never assume one")
    return "; read @builtin(subgroup_size), never assume one size"


def browser_text(ctx: GenerationContext) -> str:
    lines = [
        "Browser rules (the kernel must also pass Tint, the WGSL compiler of Chrome's WebGPU):",
        "- workgroupBarrier(), storageBarrier() and workgroupUniformLoad() only in uniform "
        "control flow: not after an early `return` that depends on local_invocation_id or "
        "global_invocation_id, not inside an `if` or loop whose condition does. Vajra rewrites "
        "simple early returns into guards and shows you the diff; it refuses what it cannot "
        "repair.",
        "- `enable` directives come first in your kernel; Vajra hoists them before its prelude.",
    ]
    if "subgroups" in ctx.device.enabled_features:
        lines.append("- Tint requires `enable subgroups;` before subgroup builtins while wgpu's "
                     "Naga refuses it: Vajra handles that, so write `enable subgroups;` first "
                     "whenever you use subgroup builtins.")
    return "\n".join(lines)


def workload_text(ctx: GenerationContext, workload: Workload | None = None) -> str:
    """What the workload declares: summary, sizes, work, and every binding with its group,
    binding, WGSL access and what the kernel does with it (a uniform as its struct)."""
    w = ctx.workload
    sizes = ", ".join(f"{k}={v}" for k, v in w.size.items())
    summary = ctx.summary or w.summary
    what = f" ({summary})" if summary else ""
    lines = [f"Workload: {w.name}{what} at {sizes}: {w.flops:.3g} FLOP, at least "
             f"{w.min_bytes:.3g} bytes moved (inputs read once, outputs written once)."]
    if w.bindings:
        groups = sorted({int(b.get("group", 0)) for b in w.bindings})
        kinds = "Storage buffers" if all(b.get("access") != "uniform" for b in w.bindings) else "Bindings"
        where = f"group {groups[0]}" if len(groups) == 1 else "groups " + ", ".join(map(str, groups))
        lines.append(f"{kinds} ({where}), declared by the prelude:")
        lines += binding_lines(ctx, workload)
        if any(b["dtype"] == "f16" and b.get("access") != "uniform" for b in w.bindings):
            lines.append("f16 buffers: Vajra writes `enable f16;` in front of the prelude.")
    entries = entry_points(ctx, workload)
    if entries != ("main",) and len(entries) == 1:
        lines.append(f"Entry point: `@compute fn {entries[0]}` (not `main`): name your kernel's entry "
                     "point so.")
    optional = optional_pass_text(workload, dict(w.size))
    return "\n".join([*lines, optional] if optional else lines)


def grounding_text(snippets: list[dict] | None, title: str) -> str:
    if not snippets:
        return ""
    parts = [title]
    for s in snippets:
        parts.append(f"- {s.get('title', '')} <{s.get('url', '')}>\n  {s.get('content', '')}")
    return "\n".join(parts)


def contract_text(ctx: GenerationContext, workload: Workload | None = None) -> str:
    """Everything a first request states: task, contract, baseline, ceilings, adapter, browsers.

    With the workload itself, its uniforms' values, its fill values and its own grid and
    passes are stated too; a grid it gives replaces the output-grid and tile planning text."""
    if explicit_grid(workload):
        assert workload is not None
        dispatch = dispatch_text(ctx, workload)
        tiles = ("TILES_X, TILES_Y and DISPATCH_X are shown as 1 here; TILES_X and TILES_Y are "
                 "really the grid's x and y workgroup counts")
    else:
        dispatch = grid_text(ctx) + "\n" + tile_text(ctx)
        tiles = "TILES_X, TILES_Y and DISPATCH_X are shown as 1 here, their real values follow from your tile"
    sections = [
        workload_text(ctx, workload),
        dispatch,
        verification_text(ctx, not_all_nan(ctx, workload)),
        f"Prelude Vajra stitches in front of your code (do not repeat it; {tiles}):\n"
        + fence(ctx.prelude),
        baseline_text(ctx),
        bound_text(ctx),
        adapter_text(ctx),
        browser_text(ctx),
    ]
    return "\n\n".join(s for s in sections if s)

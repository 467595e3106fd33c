"""The system prompt: the contract's rules, said the way the workload needs them.

A built-in gets SYSTEM_PROMPT exactly; a workload with other entry points, a grid of
its own or buffers that do not start as NaN gets those rules reworded, so the model is
never told to write ``fn main`` or a ``// tile:`` header that would be ignored.
"""

from __future__ import annotations

from vajra_tui.engine.candidate import GenerationContext
from vajra_tui.engine.sources.llm.prompt_workload import entry_points, entry_rule, explicit_grid
from vajra_tui.engine.workloads.base import Workload

SYSTEM_PROMPT = """\
You are a GPU performance engineer writing WGSL compute kernels for WebGPU. Vajra, an
auto-tuner, compiles your kernel on a real adapter, verifies every output element against
a float64 reference and times it beside a baseline kernel.
You write ONLY the kernel body under Vajra's contract:
- Exactly one entry point: `@compute @workgroup_size(X, Y, Z) fn main(...)`, named `main`.
  Helper functions, `const` values and `var<workgroup>` arrays are allowed.
- Vajra stitches a prelude in front of your code: the size constants (all u32), TILES_X,
  TILES_Y, DISPATCH_X, `fn vajra_tile(wid: vec3<u32>) -> vec2<u32>` and the storage
  bindings. Never redeclare or shadow those names. You may redeclare a binding with another
  element type (for example `array<vec4<f32>>`) at the same @group/@binding, but input
  buffers stay `var<storage, read>`, or, for an input of at most 64 KiB, `var<uniform>` with
  a fixed-size type of 16-byte stride (`array<vec4<f32>, K / 4u>`).
- An optional first line `// tile: AxB` says how many output elements along x and y ONE
  workgroup produces; Vajra sizes the dispatch grid from it.
- Find your tile with `let tile = vajra_tile(workgroup_id);` (never use workgroup_id
  directly); a workgroup with `tile.y >= TILES_Y` has no work.
- The output starts as NaN: every output element must be written. Bounds-check every
  global access: sizes need not be multiples of your tile.
- workgroupBarrier(), storageBarrier() and workgroupUniformLoad() only in uniform control
  flow: never after an early return or inside a branch or loop that depends on the
  invocation id. Guard loads and stores instead of returning early.
- `enable` directives only for features the request lists as enabled, first in the kernel.
Answer with exactly one ```wgsl fenced code block holding the complete kernel. Keep any
explanation short and before the block; write nothing after it."""

_ENTRY_LINE = "- Exactly one entry point: `@compute @workgroup_size(X, Y, Z) fn main(...)`, named `main`."
_TILE_LINES = """\
- An optional first line `// tile: AxB` says how many output elements along x and y ONE
  workgroup produces; Vajra sizes the dispatch grid from it.
- Find your tile with `let tile = vajra_tile(workgroup_id);` (never use workgroup_id
  directly); a workgroup with `tile.y >= TILES_Y` has no work."""
_GRID_LINES = """\
- The workload fixes the dispatch grid in workgroups (the request states it per pass):
  `// tile:` headers are ignored for it."""
_STORAGE = "and the storage\n  bindings."
_STORAGE_AND_UNIFORM = "and the storage\n  and uniform bindings (with each uniform's struct)."
_NAN_LINE = "- The output starts as NaN: every output element must be written."
_NAN_OWN = ("- Outputs start as NaN unless the request says a buffer starts at a value or holds "
            "an input: every output element must be written.")


def system_prompt(ctx: GenerationContext, workload: Workload | None = None) -> str:
    """SYSTEM_PROMPT as it is for a built-in; a workload with other entry points, its own
    grid or buffers that do not start as NaN gets those rules said its way."""
    text = SYSTEM_PROMPT
    entries = entry_points(ctx, workload)
    if entries != ("main",):
        text = text.replace(_ENTRY_LINE, entry_rule(entries))
    if explicit_grid(workload):
        text = text.replace(_TILE_LINES, _GRID_LINES)
    if any(b.get("access") == "uniform" for b in ctx.workload.bindings):
        text = text.replace(_STORAGE, _STORAGE_AND_UNIFORM)
    if not_all_nan(ctx, workload):
        text = text.replace(_NAN_LINE, _NAN_OWN)
    return text


def not_all_nan(ctx: GenerationContext, workload: Workload | None = None) -> bool:
    """Some written buffer does not start as NaN: one in place, a scratch, or a fill."""
    if workload is not None and any(b.fill is not None for b in workload.bindings):
        return True
    return any(b.get("access") in ("inout", "scratch") for b in ctx.workload.bindings)



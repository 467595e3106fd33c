"""What a request says about the workload's resources and dispatches.

A workload may bind buffers at any group and binding, hold a uniform params struct,
update a buffer in place, accumulate into a zeroed output, keep intermediates between
passes, name its entry points and give its grid in workgroups. A model that is not
told so writes a ``fn main`` against group 0 that cannot fit. This module turns the
declaration into those facts: from the :class:`Workload` when the source has it, else
from the :class:`WorkloadInfo` and the baseline's text in the context (bindings with
their groups and accesses, the entry points), which is all a replayed context holds.
It sits below prompt_parts.py and imports nothing of the other prompt modules.
"""

from __future__ import annotations

import re
from typing import Any

from vajra_tui.engine.candidate import GenerationContext
from vajra_tui.engine.sources.llm.reply_shapes import blank_comments
from vajra_tui.engine.workloads.base import Workload
from vajra_tui.engine.workloads.bindings import Binding
from vajra_tui.engine.workloads.uniforms import struct_wgsl

_COMPUTE_FN = re.compile(r"@compute\b[^{;]*?\bfn\s+([A-Za-z_]\w*)\s*\(")
MAX_VALUES_SHOWN = 24  # members of a uniform listed with their value; an array shows its first few


def entry_points(ctx: GenerationContext, workload: Workload | None = None) -> tuple[str, ...]:
    """The entry points a reply may define: the workload's, else the baseline's ``@compute``
    functions, else ``main`` (a context with no baseline text)."""
    if workload is not None:
        return workload.entries
    found = tuple(dict.fromkeys(_COMPUTE_FN.findall(blank_comments(ctx.baseline_source or ""))))
    return found or ("main",)


def explicit_grid(workload: Workload | None) -> bool:
    """Whether the workload dispatches a grid of its own (grid= or passes=), not one
    planned from the output grid and a ``// tile:`` header (as attention's first pass is)."""
    return workload is not None and (workload.grid is not None
                                     or bool(workload.passes) and workload.passes[0].grid is not None)


def optional_pass_text(workload: Workload | None, size: dict[str, int]) -> str:
    """The passes a kernel may bring (split-K's combine), or '' when the workload has none."""
    if workload is None or not any(p.optional for p in workload.passes):
        return ""
    lines = ["Optional passes: each runs after the passes above only when your module defines its entry "
             "point (a kernel without it runs alone):"]
    lines += [f"- {p.label}: `@compute fn {p.entry}`, grid {grid_of(workload, size, i)}"
              for i, p in enumerate(workload.passes) if p.optional]
    return "\n".join(lines)


def _role(access: str, fill: Any) -> tuple[str, str]:
    """(WGSL access mode, what the kernel must do with the buffer)."""
    if access == "read":
        return "read", "input, read-only"
    if access == "inout":
        return "read_write", "holds an input; your kernel reads it and overwrites it in place"
    if access == "scratch":
        start = (f"set to {fill:g} before each run" if fill is not None else "poisoned before each run")
        return "read_write", f"scratch: an intermediate between passes, {start}"
    if fill is not None:
        return "read_write", f"output, starts at {fill:g}: accumulate into it"
    return "read_write", "output, read_write: write every element"


def _storage_line(b: dict[str, Any], fill: Any) -> str:
    mode, role = _role(str(b.get("access", "read")), fill)
    where = f"@group({int(b.get('group', 0))}) @binding({b['index']})"
    return (f"- {where} {b['name']}: array<{b['dtype']}>, {b['elements']} elements ({role}); "
            f"`var<storage, {mode}>`")


def struct_name(b: Binding) -> str:
    """The uniform's WGSL type name: its ``struct``, else the name the prelude gives it."""
    return b.struct or f"{b.name[0].upper()}{b.name[1:]}Uniform"


def _values_text(b: Binding, size: dict[str, int]) -> str:
    """``M=64, N=32, alpha=1`` at this size (the tuning parameters left empty), or why not."""
    try:
        values = b.values(dict(size), {}) if b.values is not None else {}  # type: ignore[misc]
        items = list(dict(values).items())
    except Exception as exc:  # noqa: BLE001 - the user's function: the prompt says it could not
        return f"(its values could not be computed here: {type(exc).__name__})"
    shown = [f"{k}={_value(v)}" for k, v in items[:MAX_VALUES_SHOWN]]
    more = ", ..." if len(items) > MAX_VALUES_SHOWN else ""
    return ", ".join(shown) + more if shown else "(no values)"


def _value(v: Any) -> str:
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, float):
        return format(v, "g")
    if isinstance(v, (list, tuple)):
        inner = ", ".join(_value(x) for x in list(v)[:8])
        return f"[{inner}{', ...' if len(v) > 8 else ''}]"
    return str(v)


def _uniform_lines(b: Binding, size: dict[str, int]) -> list[str]:
    """The struct declaration, the ``var<uniform>`` line and the values it holds."""
    name = struct_name(b)
    try:
        decl = struct_wgsl(name, b.fields)
    except ValueError:  # a struct Vajra cannot lay out is refused elsewhere, in one line
        decl = f"struct {name} {{ ... }}"
    return [f"- {b.where} {b.name}: uniform, one `{name}` holding at this size: {_values_text(b, size)}. "
            "Declared by the prelude as:",
            "```wgsl", decl, f"{b.where} var<uniform> {b.name}: {name};", "```"]


def binding_lines(ctx: GenerationContext, workload: Workload | None = None) -> list[str]:
    """One line per binding (its group, binding, WGSL access and what it holds); a uniform
    as its struct. The element counts come from the context's WorkloadInfo."""
    info = ctx.workload
    declared = {b.name: b for b in workload.bindings} if workload is not None else {}
    lines: list[str] = []
    for b in info.bindings:
        own = declared.get(b["name"])
        if b.get("access") == "uniform":
            if own is not None:
                lines += _uniform_lines(own, dict(info.size))
            else:
                where = f"@group({int(b.get('group', 0))}) @binding({b['index']})"
                lines.append(f"- {where} {b['name']}: uniform params struct (`var<uniform>`), "
                             "declared by the prelude")
            continue
        lines.append(_storage_line(b, own.fill if own is not None else None))
    return lines


def grid_of(workload: Workload, size: dict[str, int], index: int) -> str:
    """``(x, y, z) = (4, 1, 1) workgroups`` for pass ``index``, or why it is not known."""
    try:
        groups = workload.workgroups(size, {}, index)
    except Exception as exc:  # noqa: BLE001 - a grid that needs tuning parameters, say
        return f"a grid the workload computes from the tuning parameters ({type(exc).__name__} without them)"
    return "n/a" if groups is None else f"({groups[0]}, {groups[1]}, {groups[2]}) workgroups (x, y, z)"


def dispatch_text(ctx: GenerationContext, workload: Workload) -> str:
    """The workload's own grid (and passes), instead of the tile planning text."""
    size = dict(ctx.workload.size)
    if not workload.passes:
        return "\n".join([
            f"Dispatch: the workload gives its grid explicitly: {grid_of(workload, size, 0)} at this "
            f"size, one dispatch of `@compute fn {workload.entry}`, whatever your @workgroup_size.",
            "`// tile:` headers are ignored for it: size your @workgroup_size and the work per "
            "invocation to that grid, and bounds-check against the size constants.",
            _fold_note(),
        ])
    required = [(i, p) for i, p in enumerate(workload.passes) if not p.optional]  # optional: workload_text
    count = f"{len(required)} dispatch" + ("es" if len(required) != 1 else "")
    lines = [f"Passes: this workload runs {count} in this order, verified and timed as one result "
             "(each pass timed too):"]
    for n, (i, p) in enumerate(required, 1):
        lines.append(f"{n}. {p.label}: `@compute fn {p.entry}`, grid {grid_of(workload, size, i)}")
    names = ", ".join(f"`{p.entry}`" for _, p in required)
    lines += [
        "A reply may replace one pass (define only that entry point) or all of them (define every "
        f"entry point: {names}); the passes it does not define run from the workload's own module. "
        "Bindings are shared by every pass.",
        "Each pass's grid is fixed by the workload: `// tile:` headers are ignored.",
        _fold_note(),
    ]
    return "\n".join(lines)


def _fold_note() -> str:
    return ("workgroup_id and global_invocation_id index that grid directly; only a grid past the "
            "adapter's per-dimension limit is folded, and then `vajra_tile(workgroup_id)` gives "
            "the (x, y) workgroup back.")


def entry_rule(entries: tuple[str, ...]) -> str:
    """The system prompt's entry-point rule for these entry points."""
    if len(entries) == 1:
        e = entries[0]
        return f"- Exactly one entry point: `@compute @workgroup_size(X, Y, Z) fn {e}(...)`, named `{e}`."
    names = ", ".join(f"`{e}`" for e in entries)
    return ("- Entry points: one `@compute @workgroup_size(X, Y, Z) fn <name>(...)` per pass you "
            f"write, named as the workload's passes: {names}.")

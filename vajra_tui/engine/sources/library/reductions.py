"""Row reductions shared by the softmax, layernorm and gemv templates.

All three reduce one row across the x lanes of a workgroup: a shared-memory tree,
or (``sg=1``, only where the adapter has subgroups) ``subgroupMax``/``subgroupAdd``
followed by a short pass over one partial per subgroup. Subgroup kernels keep one
row per workgroup, so a subgroup never straddles two rows. Naga accepts subgroup
builtins without an ``enable`` directive (and rejects ``enable subgroups;``), so
none is emitted; a browser (Tint) needs one hoisted in front of the prelude.

The pieces live here, not in one of the workloads' modules, so that the three
share one emitter (the same WGSL for the same reduction) without reaching into
each other's private names. Softmax and layernorm also share their three designs'
axes and checks (``row_templates``): only the kernels differ.
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo
from typing import Callable

from vajra_tui.engine.sources.library.base import (TILE_GUARD, Emitter, Params, Size, Template, open_main,
                                                    storage_fits, subgroups, workgroup_fits)

# Lanes per row the row-reducing templates offer (powers of two, so the tree halves evenly).
WX = (32, 64, 128, 256, 512, 1024)
Render = Callable[[Params, Size, DeviceInfo | None], str]  # a template's kernel generator


def entry(e: Emitter, wx: int, wy: int, sg: int) -> None:
    """Open ``main`` with the builtins a reduction needs (the subgroup ones only with ``sg``),
    leaving the emitter one level in."""
    extra = (",\n        @builtin(subgroup_invocation_id) sl: u32, @builtin(subgroup_size) ss: u32"
             if sg else "")
    open_main(e, wx, wy, extra)


def begin_rows(e: Emitter, wx: int, wy: int, sg: int) -> None:
    """How every softmax and layernorm kernel starts after its own declarations: the two
    scratch arrays, ``main`` with the reduction's builtins, and the tile guard (``t``)."""
    declare_scratch(e, wx * wy)
    entry(e, wx, wy, sg)
    e(*TILE_GUARD)


def reduce(e: Emitter, var: str, op: str, scratch: str, wx: int, wy: int, sg: int) -> None:
    """Reduce ``var`` over the lid.x lanes of each row; every lane gets the result."""
    if sg:
        fn = "subgroupMax" if op == "max" else "subgroupAdd"
        e(f"let {var}_s = {fn}({var});", f"if (sl == 0u) {{ {scratch}[li / ss] = {var}_s; }}",
          "workgroupBarrier();", f"{var} = {scratch}[0];")
        e(f"for (var i = 1u; i < {wx}u / ss; i = i + 1u) {{ {var} = {op}({var}, {scratch}[i]); }}"
          if op == "max" else
          f"for (var i = 1u; i < {wx}u / ss; i = i + 1u) {{ {var} = {var} + {scratch}[i]; }}")
        return
    comb = (f"max({scratch}[li], {scratch}[li + s])" if op == "max"
            else f"{scratch}[li] + {scratch}[li + s]")
    e(f"{scratch}[li] = {var};")
    e(f"for (var s = {wx // 2}u; s > 0u; s = s >> 1u) {{",
      "    workgroupBarrier();",
      f"    if (lid.x < s) {{ {scratch}[li] = {comb}; }}",
      "}", "workgroupBarrier();", f"{var} = {scratch}[lid.y * {wx}u];")


def declare_scratch(e: Emitter, n: int) -> None:
    """Declare the two workgroup arrays the row kernels reduce through (``red_m``, ``red_s``)."""
    e(f"var<workgroup> red_m: array<f32, {n}>;", f"var<workgroup> red_s: array<f32, {n}>;")


def row_check(p: Params, s: Size, d: DeviceInfo | None, wy: int) -> str | None:
    """Why a (``wx`` x ``wy``) row-reducing workgroup cannot run on the adapter, or None."""
    if p.get("sg") and not subgroups(d):
        return "the adapter has no subgroups"
    if p.get("sg") and wy != 1:
        return "subgroup reductions keep one row per workgroup"
    return workgroup_fits(d, p["wx"], wy)


def _rows_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    """Why a row-walking design (A: ``rows`` rows per workgroup) cannot run, or None."""
    return row_check(p, s, d, p["rows"])


def _smem_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    """Why the row-in-workgroup-memory design (B: the row and both scratch arrays) cannot run, or None."""
    return row_check(p, s, d, 1) or storage_fits(d, 4 * (s["COLS"] + 2 * p["wx"]))


def regs_lanes(cols: int) -> int:
    """Lanes per row that leave each invocation about 4-8 vec4 of a long row (64 to 1024): the
    register design's first prior."""
    return max(64, min(1024, 1 << max(0, (cols // 32 - 1).bit_length())))


def vec_count(p: Params, s: Size) -> int:
    """vec4 registers each invocation holds when a workgroup of ``wx`` keeps a whole row."""
    return -(-s["COLS"] // (4 * p["wx"]))


def regs_check(p: Params, s: Size, d: DeviceInfo | None) -> str | None:
    """Why the row-in-vec4-registers design does not fit this size or adapter, or None."""
    if s["COLS"] % 4:
        return "vec4 rows need COLS to be a multiple of 4"
    if vec_count(p, s) > 32:
        return "too many vec4 registers per invocation for this row length"
    return row_check(p, s, d, 1)


def row_templates(workload: str, rows: Render, smem: Render, regs: Render, regs_summary: str) -> list[Template]:
    """A workload's three row-reducing designs (softmax's, layernorm's), given the kernel
    generator of each: A walks each row in global memory (``rows`` rows per workgroup), B caches
    the row in workgroup memory, C holds it in vec4 registers."""
    return [
        Template(workload, "rows", "A", "workgroup geometry: lanes per row x rows per workgroup",
                 {"wx": WX, "rows": (1, 2, 4, 8), "sg": (0, 1)}, rows, _rows_check),
        Template(workload, "smem", "B", "row cached in workgroup memory",
                 {"wx": WX, "sg": (0, 1)}, smem, _smem_check),
        Template(workload, "regs", "C", regs_summary,
                 {"wx": WX, "sg": (0, 1)}, regs, regs_check,
                 general=lambda p: False),  # needs COLS % 4 == 0
    ]

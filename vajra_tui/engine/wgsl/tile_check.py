"""Heuristic check that a kernel's ``// tile:`` header covers its output grid.

The engine dispatches ``ceil(grid / tile)`` workgroups, taking the tile from the
header or, without one, from ``@workgroup_size``. A wrong header silently leaves
outputs uncomputed (or launches 4x too many invocations), so we warn early.
Rules, all warnings (message prefixed ``warning:``):

1. header components must be positive;
2. (none: "a multiple of the workgroup size" warned about correct kernels, such as one
   workgroup per row of ``COLS`` elements; over-dispatch is now measured instead);
3. a kernel that stores whole ``vec4`` values into an ``array<vec4<...>>`` output
   covers 4 elements per invocation, so a missing header (or one equal to the
   workgroup size) is probably wrong: suggest ``4 * wg.x``;
4. more than 65535 workgroups in a dimension cannot be dispatched.
"""

from __future__ import annotations

from vajra_tui.engine.events import Diagnostic
from vajra_tui.engine.wgsl.tokens import (
    IDENT, find_entry_point, match_bracket, significant_tokens, storage_bindings, tile_header, tile_header_line,
)

MAX_WORKGROUPS_PER_DIM = 65535


def _vec4_output_store(src: str, prelude: str) -> tuple[str, int] | None:
    """(binding name, line) of a store into a writable ``array<vec4<..>>`` binding."""
    outs = {b.name for b in storage_bindings(src + "\n" + prelude)
            if b.access != "read" and b.type_text.replace(" ", "").startswith("array<vec4")}
    toks = significant_tokens(src)
    for i, t in enumerate(toks):
        if t.kind == IDENT and t.text in outs and i + 1 < len(toks) and toks[i + 1].text == "[":
            close = match_bracket(toks, i + 1)
            if close > 0 and close + 1 < len(toks) and toks[close + 1].text == "=":
                return t.text, t.line
    return None


def check_tile_header(src: str, output_grid: tuple[int, int], workgroup_size: tuple[int, int, int],
                      prelude: str = "", tile: tuple[int, int] | None = None,
                      folds_large_grids: bool = False) -> list[Diagnostic]:
    """Warnings when the tile header looks inconsistent with the workgroup size / grid.

    ``prelude`` (optional) supplies the engine's binding declarations so rule 3
    can see output types the candidate itself does not declare. ``tile`` is the
    engine's resolved tile (headers may name size constants, which this module
    cannot evaluate); ``folds_large_grids`` drops rule 4 where the dispatcher folds.
    """
    tile = tile if tile is not None else tile_header(src)
    line = tile_header_line(src) or 1
    if tile is None:
        entry = find_entry_point(src)
        line = entry.line if entry else 1
    out: list[Diagnostic] = []

    def warn(msg: str, at: int = line) -> None:
        out.append(Diagnostic(line=at, column=1, message=f"warning: {msg}"))

    wx, wy = max(1, workgroup_size[0]), max(1, workgroup_size[1])
    if tile is not None and (tile[0] <= 0 or tile[1] <= 0):
        warn(f"tile header {tile[0]}x{tile[1]} must have positive components")
        return out
    store = _vec4_output_store(src, prelude)
    if store is not None and (tile is None or (tile[0] == wx and tile[1] == wy)):
        have = "no tile header" if tile is None else f"tile {tile[0]}x{tile[1]}"
        warn(f"each invocation stores a vec4 into '{store[0]}' but {have} assumes one output per "
             f"invocation; expected `// tile: {4 * wx}" + (f"x{wy}`" if wy > 1 else "`"), store[1])
    tx, ty = tile if tile is not None else (wx, wy)
    if folds_large_grids:
        return out
    for dim, (g, t) in enumerate(zip(output_grid, (tx, ty))):
        groups = -(-max(0, g) // t)
        if groups > MAX_WORKGROUPS_PER_DIM:
            warn(f"dispatch needs {groups} workgroups in {'xy'[dim]} (> {MAX_WORKGROUPS_PER_DIM})")
    return out

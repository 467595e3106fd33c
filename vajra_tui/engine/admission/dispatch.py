"""How a kernel is dispatched: its tile header read with arithmetic, or an explicit grid.

A workload either plans the grid from its output and the kernel's ``// tile:`` header
(``// tile: 4*WX x 4*WY``: each side an expression over numbers, size constants and the
kernel's constants), or gives the workgroups along each axis itself (``grid``). A grid
past the adapter's per-dimension limit is folded into two dimensions, which only a
kernel that finds its tile with ``vajra_tile(workgroup_id)`` survives: one that indexes
by ``global_invocation_id`` or ``workgroup_id`` is told so instead of computing the
wrong elements.
"""

from __future__ import annotations

import re
from typing import Callable

from vajra_tui.engine.wgsl.consteval import ConstEvalError, evaluate
from vajra_tui.engine.wgsl.tokens import find_entry_point, significant_tokens
from vajra_tui.engine.workloads.base import ceil_div

MAX_TILE_SIDE = 1 << 24
"""The largest tile side a header may declare: far past any output grid, and small enough
that every number derived from it prints (Python refuses ints over 4300 digits)."""
Fail = Callable[[str, int], Exception]

_HEADER = re.compile(r"^\s*//\s*tile\s*:(.*)$", re.I)
_SPLIT = re.compile(r"\s+[xX×]\s+|\s*[×,]\s*|(?<=\d)[xX](?=\d)|(?<=[\w)])\s*[xX]\s*(?=[\d(])")
_WORD = re.compile(r"[A-Za-z_]\w*")
# A note after the sizes: "  (each workgroup ...)", " (64x64 block)", " - one per row", "; ...",
# " with padding".
_NOTE = re.compile(r"(\s{2,}\S.*|\s+\([^()]*[A-Za-z]{2}[^()]*\)|\s+-\s+[A-Za-z].*|\s*;.*|\s+[a-z]{2,}(\s.*)?)$")
_EXPRESSION = re.compile(r"^[\w\s()+\-*/%<>&|^~]+$")  # what a side may hold: numbers, names, operators


def header_sides(text: str, known: dict[str, int]) -> list[str] | None:
    """The sides of a tile header's text (one, two, or three with the last 1), None when it
    reads as prose ("// Tile: load A and B"), or [] when it is meant as sizes but cannot be
    read: whatever follows ``// tile:`` is then refused, never guessed at."""
    body = text.split("//")[0].strip()
    if _prose(body, known):
        return None
    for reading in dict.fromkeys((body, _NOTE.sub("", body).strip())):
        sides = [side.strip() for side in _SPLIT.split(reading)]
        if 1 <= len(sides) <= 3 and all(_EXPRESSION.match(side) and not re.search(r"[\w)]\s+[\w(]", side)
                                         for side in sides):
            return sides
    return []


def _prose(body: str, known: dict[str, int]) -> bool:
    """A header whose first word is a lower-case word that names nothing is a sentence."""
    words = _WORD.findall(body)
    first = words[0] if words and body.startswith(words[0]) else ""
    return bool(first) and first.islower() and first not in known and first.upper() not in known


def tile_of(body: str, known: dict[str, int], wg: tuple[int, int, int], fail: Fail) -> tuple[int, int]:
    """The first ``// tile:`` header's (x, y), or the workgroup shape without one."""
    for number, text in enumerate(body.splitlines(), 1):
        match = _HEADER.match(text)
        if not match:
            continue
        sides = header_sides(match.group(1), known)
        if sides is None:
            continue
        header = match.group(1).strip()
        shown = header if len(header) <= 60 else header[:57] + "..."
        if not sides:
            raise fail(f"tile header `// tile: {shown}` cannot be read: write the output elements one "
                       "workgroup covers as X x Y (e.g. `// tile: 64x64`, `// tile: 4*WX x 4*WY`, "
                       "`// tile: 256`)", number)
        values = [_side(side, known, number, header, fail) for side in sides] + [1, 1]
        if len(sides) == 3 and values[2] != 1:
            raise fail(f"tile header `// tile: {shown}`: a third side must be 1 (the output is a "
                       "grid of X x Y)", number)
        if min(values[:2]) < 1:
            raise fail(f"tile header `// tile: {shown}`: sizes must be positive (reads as "
                       f"{values[0]} x {values[1]})", number)
        return values[0], values[1]
    return wg[0], wg[1]


def _side(side: str, known: dict[str, int], line: int, header: str, fail: Fail) -> int:
    """One side's value: an integer expression over numbers and known names."""
    shown = header if len(header) <= 60 else header[:57] + "..."
    for number in re.findall(r"\d+", side):
        if len(number.lstrip("0")) > len(str(MAX_TILE_SIDE)) or int(number) > MAX_TILE_SIDE:
            raise fail(f"tile header: {number[:20]}{'...' if len(number) > 20 else ''} is over the largest "
                       f"tile side, {MAX_TILE_SIDE}", line)
    for name in _WORD.findall(side):
        if name not in known and name.upper() in known and name.lower() == name:
            side = re.sub(rf"\b{name}\b", name.upper(), side)  # "// tile: cols x 1" names COLS
    unknown = [w for w in _WORD.findall(side) if w not in known]
    if unknown:
        raise fail(f"tile header `// tile: {shown}`: unknown value {unknown[0]!r} (use numbers, size "
                   "constants or the kernel's own constants)", line)
    try:
        value = evaluate(significant_tokens(side), {k: int(v) for k, v in known.items()}).value
    except (ConstEvalError, ValueError, ArithmeticError) as exc:
        raise fail(f"tile header `// tile: {shown}` cannot be read: {exc}", line) from None
    if not -MAX_TILE_SIDE <= value <= MAX_TILE_SIDE:
        raise fail(f"tile header: {side[:20]} is {value}, over the largest tile side, {MAX_TILE_SIDE}", line)
    return int(value)


def plan_dispatch(grid: tuple[int, int], tile: tuple[int, int], max_dim: int,
                  fail: Fail | None = None) -> tuple[tuple[int, int], tuple[int, int, int]]:
    """Tiles needed to cover the output, and a dispatch within the per-dimension limit."""
    tiles = (ceil_div(grid[0], tile[0]), ceil_div(grid[1], tile[1]))
    return tiles, fold((tiles[0], tiles[1], 1), max_dim, fail)


def fold(groups: tuple[int, int, int], max_dim: int, fail: Fail | None = None) -> tuple[int, int, int]:
    """Workgroups within the per-dimension limit: as they are, or folded into x and y."""
    if all(g <= max_dim for g in groups):
        return groups
    total = groups[0] * groups[1]
    problem = None
    if groups[2] != 1:
        problem = f"a grid of {groups[0]}x{groups[1]}x{groups[2]} workgroups exceeds the adapter's limit"
    dx = min(total, max_dim)
    dy = ceil_div(total, dx)
    if dy > max_dim:
        problem = f"grid of {total} workgroups exceeds the adapter's limit"
    if problem is not None:
        if fail is None:
            raise ValueError(problem)
        raise fail(problem, 1)
    return dx, dy, 1


def folding_problem(body: str, dispatch: tuple[int, int, int], tiles: tuple[int, int]) -> str | None:
    """Why a kernel would compute the wrong elements on a folded grid, or None."""
    if (dispatch[0], dispatch[1]) == tiles or "vajra_tile" in body:
        return None
    for builtin in ("global_invocation_id", "workgroup_id"):
        if re.search(rf"@builtin\(\s*{builtin}\s*\)", body):
            return (f"its grid of {tiles[0]}x{tiles[1]} workgroups is over the adapter's limit per "
                    f"dimension, so Vajra folds it to {dispatch[0]}x{dispatch[1]}, and this kernel "
                    f"indexes by {builtin}, which folding changes: find the tile with "
                    "vajra_tile(workgroup_id) (README: the kernel contract), or use a smaller size")
    return None


def later_pass_problem(body: str, entry: str, label: str, tiles: tuple[int, int],
                       dispatch: tuple[int, int, int], first_tiles: tuple[int, int]) -> str | None:
    """Why a pass after the first, on a grid of its own, would compute the wrong elements, or
    None. The prelude's TILES_X, TILES_Y and DISPATCH_X are module constants planned for the
    first pass, so such a pass can neither be folded nor find its tile with ``vajra_tile``
    (only the entry's own body is read for that call, not the helpers it calls)."""
    if (dispatch[0], dispatch[1]) != tiles:
        return (f"pass {label!r}: its grid of {tiles[0]}x{tiles[1]} workgroups is over the adapter's limit per "
                "dimension, and Vajra can fold only a grid like the first pass's (vajra_tile's constants are "
                "the first pass's): give this pass fewer, larger workgroups")
    toks = significant_tokens(body)
    span = find_entry_point(toks, entry)
    if span is None or not any(t.text == "vajra_tile" for t in toks[span.body_open:span.body_close]):
        return None
    return (f"pass {label!r} calls vajra_tile on a grid of {tiles[0]}x{tiles[1]} tiles, but its TILES_X, "
            f"TILES_Y and DISPATCH_X are the first pass's ({first_tiles[0]}x{first_tiles[1]}): index that pass "
            "by workgroup_id, or give it the first pass's grid")

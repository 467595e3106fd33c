"""The kernel contract: stitch a prelude in front of a candidate and plan its dispatch.

A candidate is a WGSL body with ``@compute fn main``. The prelude supplies the
size constants, the group-0 bindings the candidate did not declare itself, and
``vajra_tile(workgroup_id)``, which turns the (possibly folded) dispatch back
into the logical tile coordinates, so kernels keep working when a grid exceeds
the adapter's per-dimension limit.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from vajra_tui.engine.events import Diagnostic
from vajra_tui.engine.wgsl.expr import ConstEvalError
from vajra_tui.engine.wgsl.memory import workgroup_memory_problem
from vajra_tui.engine.wgsl.tokens import (
    TILE_HEADER, has_compute_entry, module_consts, override_names, read_workgroup_size, storage_bindings,
)
from vajra_tui.engine.workloads.base import Size, Workload, ceil_div

PRELUDE_END = "// ---- candidate source starts on the next line ----"


class ContractError(Exception):
    """The candidate breaks the contract: rejected before it ever runs."""

    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.diagnostic = Diagnostic(line=line, column=column, message=message)


@dataclass
class Stitched:
    source: str
    prelude_lines: int
    workgroup_size: tuple[int, int, int]
    tile: tuple[int, int]
    tiles: tuple[int, int]  # logical grid: tiles along x and y
    dispatch: tuple[int, int, int]  # what is actually dispatched
    declared: set[int] = field(default_factory=set)
    enables: list[str] = field(default_factory=list)  # hoisted `enable` directives
    constants: dict[str, int | float | bool] = field(default_factory=dict)  # pipeline overrides

    @property
    def sha256(self) -> str:
        return kernel_identity(self.source, self.constants)

    def to_candidate_line(self, line: int) -> int:
        """Map a line of the stitched source to the candidate's own numbering (0: prelude)."""
        return max(0, line - self.prelude_lines)


def kernel_identity(source: str, constants: dict[str, int | float | bool] | None = None) -> str:
    """A kernel's sha256: of its source, or of source and override values when it has them.

    One source compiled with different pipeline constants is a different kernel: it is
    measured, cached, de-duplicated and exported as such.
    """
    text = source if not constants else (
        source + "\n// vajra pipeline constants: " + json.dumps(constants, sort_keys=True))
    return hashlib.sha256(text.encode()).hexdigest()


def tile_of(body: str, size: Size, wg: tuple[int, int, int],
            consts: dict[str, int] | None = None) -> tuple[int, int]:
    """The ``// tile: AxB`` header (numbers, size constants or the kernel's own
    ``const``s, such as ``// tile: TILE x TILE``) or the workgroup shape.

    A comment such as ``// Tile: load A and B`` is prose, not a header: a lower-case
    word that names no size constant is skipped, while an unknown upper-case name
    (``// tile: TM x TN``) is a mistake worth reporting.
    """
    for number, text in enumerate(body.splitlines(), 1):
        comment = text.strip()
        match = TILE_HEADER.match(comment[2:]) if comment.startswith("//") else None
        if not match:
            continue
        known = {**(consts or {}), **size}
        values = [_tile_value(part, known, number) for part in (match.group(1), match.group(2) or "1")]
        if None in values:
            continue
        if min(values) < 1:  # type: ignore[type-var]
            raise ContractError("tile header: sizes must be positive", number, 1)
        return values[0], values[1]  # type: ignore[return-value]
    return wg[0], wg[1]


MAX_TILE_SIDE = 1 << 24
"""The largest tile side a header may declare: far past any output grid, and small enough
that every number derived from it prints (Python refuses ints over 4300 digits)."""


def _tile_value(part: str, known: dict[str, int], line: int) -> int | None:
    if part.lstrip("-").isdigit():
        if len(part.lstrip("-").lstrip("0")) > len(str(MAX_TILE_SIDE)) or int(part) > MAX_TILE_SIDE:
            raise ContractError(f"tile header: {part[:20]}{'...' if len(part) > 20 else ''} is over "
                                f"the largest tile side, {MAX_TILE_SIDE}", line, 1)
        return int(part)
    for name in (part, part.upper()):
        if name in known:
            if not -MAX_TILE_SIDE <= known[name] <= MAX_TILE_SIDE:
                raise ContractError(f"tile header: {name} is {known[name]}, over the largest tile side, "
                                    f"{MAX_TILE_SIDE}", line, 1)
            return known[name]
    if part.islower():
        return None
    raise ContractError(f"tile header: unknown value {part!r}", line, 1)


def plan_dispatch(
    grid: tuple[int, int], tile: tuple[int, int], max_dim: int
) -> tuple[tuple[int, int], tuple[int, int, int]]:
    """Tiles needed to cover the output, and a dispatch within the per-dimension limit."""
    tiles = (ceil_div(grid[0], tile[0]), ceil_div(grid[1], tile[1]))
    if tiles[0] <= max_dim and tiles[1] <= max_dim:
        return tiles, (tiles[0], tiles[1], 1)
    total = tiles[0] * tiles[1]
    dx = min(total, max_dim)
    dy = ceil_div(total, dx)
    if dy > max_dim:
        raise ContractError(f"grid of {total} workgroups exceeds the adapter's limit")
    return tiles, (dx, dy, 1)


def prelude(workload: Workload, size: Size, tiles: tuple[int, int], dispatch_x: int,
            skip: set[int]) -> str:
    lines = [f"// ---- vajra prelude: {workload.name} {workload.label(size)} (generated) ----"]
    lines += [f"const {dim}: u32 = {size[dim]}u;" for dim in workload.dims]
    lines += [
        f"const TILES_X: u32 = {tiles[0]}u;",
        f"const TILES_Y: u32 = {tiles[1]}u;",
        f"const DISPATCH_X: u32 = {dispatch_x}u;",
        "fn vajra_tile(wid: vec3<u32>) -> vec2<u32> {",
        "    let i = wid.x + wid.y * DISPATCH_X;",
        "    return vec2<u32>(i % TILES_X, i / TILES_X);",
        "}",
    ]
    for b in workload.bindings:
        if b.index not in skip:
            lines.append(
                f"@group(0) @binding({b.index}) var<storage, {b.access}> {b.name}: array<{b.dtype}>;"
            )
    lines.append(PRELUDE_END)
    return "\n".join(lines) + "\n"


def check_bindings(workload: Workload, body: str) -> set[int]:
    """Indices the candidate declares itself; an input declared writable is refused."""
    by_index = {b.index: b for b in workload.bindings}
    declared: set[int] = set()
    for decl in storage_bindings(body):
        if decl.group != 0 or decl.binding not in by_index:
            raise ContractError(
                f"binding @group({decl.group}) @binding({decl.binding}) `{decl.name}` is not part "
                f"of {workload.name}'s contract (group 0: "
                + ", ".join(f"{b.index} {b.name}" for b in workload.bindings) + ")",
                decl.line,
            )
        expected = by_index[decl.binding]
        if not expected.is_output and decl.access != "read":
            raise ContractError(
                f"input binding {decl.binding} `{expected.name}` is declared {decl.access}; "
                "inputs must be read-only",
                decl.line,
            )
        declared.add(decl.binding)
    return declared


def check_workgroup_memory(body: str, consts: dict[str, int], limit: int | None) -> None:
    """wgpu lets an oversized ``var<workgroup>`` through; the WebGPU spec (and Tint) do not.

    Sizes are WGSL's own (``wgsl/consteval.py``); a declaration that cannot be sized with
    certainty is refused here, naming it, since a guessed size could hide memory past the
    limit and memory the zero-init leaves as the last dispatch wrote it.
    """
    problem = workgroup_memory_problem(body, limit, consts)
    if problem is not None:
        message, line, column = problem
        raise ContractError(message, line, column)


_ENABLE = re.compile(r"^[ \t]*enable\s+([A-Za-z_][\w\s,]*?)\s*;[ \t]*(//.*)?$", re.M)
# Extensions Naga (wgpu-native) refuses although browsers' Tint requires them; the
# feature itself is requested on the device, so the directive is simply left out here.
NATIVE_IMPLICIT = {"subgroups"}


def hoist_enables(body: str) -> tuple[list[str], str]:
    """Move ``enable`` directives out of the body, keeping its line numbers.

    WGSL requires directives before any declaration, so they cannot follow the
    prelude. Each is blanked to an empty line in place, so every later line keeps
    the number the model gave it.
    """
    names: list[str] = []

    def take(match: re.Match[str]) -> str:
        for name in match.group(1).split(","):
            if name.strip() and name.strip() not in names:
                names.append(name.strip())
        return ""

    return names, _ENABLE.sub(take, body)


def directives_for(workload: Workload, enables: list[str]) -> str:
    """The `enable` lines in front of the prelude: the kernel's own, plus f16 for f16 bindings."""
    names = [n for n in enables if n not in NATIVE_IMPLICIT]
    if "shader-f16" in workload.features and "f16" not in names:
        names.insert(0, "f16")
    return "".join(f"enable {name};\n" for name in names)


def check_constants(body: str, constants: dict[str, int | float | bool]) -> None:
    """Pipeline constants may only set the kernel's own ``override`` declarations."""
    declared = override_names(body)
    for name in constants:
        if name not in declared:
            raise ContractError(f"pipeline constant {name!r} sets no `override` declaration of this "
                                f"kernel (it declares: {', '.join(declared) or 'none'})")


def stitch(workload: Workload, size: Size, body: str, max_dim: int = 65535,
           max_workgroup_bytes: int | None = None,
           tile: tuple[int, int] | None = None,
           constants: dict[str, int | float | bool] | None = None) -> Stitched:
    """Prelude plus body, with the dispatch planned; ``tile`` overrides the header.

    ``constants`` are the values of the kernel's ``override`` declarations the pipeline
    will be built with (never substituted into the text): the workgroup size, workgroup
    memory and tile header are read with them.
    """
    if not body.strip() or not has_compute_entry(body, "main"):
        raise ContractError("no @compute entry point named `main`")
    constants = dict(constants or {})
    enables, rest = hoist_enables(body)
    declared = check_bindings(workload, rest)
    check_constants(rest, constants)
    consts = {dim: size[dim] for dim in workload.dims}
    consts.update({k: int(v) for k, v in constants.items() if isinstance(v, int) and not isinstance(v, bool)})
    check_workgroup_memory(rest, consts, max_workgroup_bytes)
    try:
        wg = read_workgroup_size(rest, consts)
    except ConstEvalError as exc:
        raise ContractError(f"cannot read @workgroup_size of `main`: {exc}") from None
    tile = tile or tile_of(rest, size, wg, _own_consts(rest, consts))
    tiles, dispatch = plan_dispatch(workload.output_grid(size), tile, max_dim)
    head = directives_for(workload, enables) + prelude(workload, size, tiles, dispatch[0], declared)
    return Stitched(
        source=head + rest,
        prelude_lines=head.count("\n"),
        workgroup_size=wg,
        tile=tile,
        tiles=tiles,
        dispatch=dispatch,
        declared=declared,
        enables=enables,
        constants=constants,
    )


def _own_consts(body: str, sizes: dict[str, int]) -> dict[str, int]:
    """The kernel's module-scope integer constants, evaluated with the size constants (and
    the pipeline's override values) known."""
    try:
        return module_consts(prelude_consts(sizes) + body, sizes)
    except Exception:  # noqa: BLE001 - a body we cannot read: the compiler will say why
        return {}


def prelude_consts(sizes: dict[str, int]) -> str:
    return "".join(f"const {name}: u32 = {value}u;\n" for name, value in sizes.items())


def parse_only_source(workload: Workload, size: Size, body: str) -> Stitched:
    """The body behind a plain prelude, for asking the compiler why a body does not parse.

    Used when the contract's own reading fails: a kernel with a syntax error should
    hear the compiler's parse error at its line, not "no entry point" at 1:1.
    """
    enables, rest = hoist_enables(body)
    directives = directives_for(workload, enables)
    try:  # bindings the body declares itself must not be declared twice
        own = {decl.binding for decl in storage_bindings(rest) if decl.group == 0}
    except Exception:  # noqa: BLE001 - the body may not even tokenize; the compiler will say why
        own = set()
    head = directives + prelude(workload, size, (1, 1), 1, own)
    return Stitched(source=head + rest, prelude_lines=head.count("\n"), workgroup_size=(1, 1, 1),
                    tile=(1, 1), tiles=(1, 1), dispatch=(1, 1, 1), enables=enables)

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

from vajra_tui.engine.admission import dispatch as dispatch_plan
from vajra_tui.engine.admission.passes import (  # noqa: F401 - prelude_consts is imported from here
    override_defaults, overrides, overrides_from_size, own_passes, pass_binds, plan_pass, prelude_consts,
)
from vajra_tui.engine.admission.refusal import ContractError
from vajra_tui.engine.admission.resources import check_bindings as resource_check
from vajra_tui.engine.admission.resources import check_uniform_sizes, declarations, module_names, uniform_bytes
from vajra_tui.engine.admission.templates import fill as fill_template
from vajra_tui.engine.gpu.protocol import Compile, PassSpec
from vajra_tui.engine.wgsl.memory import workgroup_memory_problem
from vajra_tui.engine.wgsl.template import TemplateError
from vajra_tui.engine.wgsl.tokens import override_names, storage_bindings
from vajra_tui.engine.workloads.base import Size, Workload, WorkloadError

PRELUDE_END = "// ---- candidate source starts on the next line ----"


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
    entry: str = "main"  # this module's (first) entry point
    passes: list["PassPlan"] = field(default_factory=list)  # every pass, in order
    uniforms: dict[str, bytes] = field(default_factory=dict)  # uniform contents by binding name
    given: dict[str, int | float | bool] = field(default_factory=dict)  # constants as given (templates too)

    @property
    def sha256(self) -> str:
        others = "".join(f"\n// pass {p.entry}\n{p.source}" for p in self.passes if not p.own)
        return kernel_identity(self.source + others, self.constants)

    def to_candidate_line(self, line: int) -> int:
        """Map a line of the stitched source to the candidate's own numbering (0: prelude)."""
        return max(0, line - self.prelude_lines)

    def compile_request(self, cid: str) -> "Compile":
        """What the worker builds for this kernel: its own passes, then the workload's."""
        own = [p for p in self.passes if p.own] or [PassPlan("", self.entry, self.source, self.dispatch,
                                                             dict(self.constants), 0, True)]
        first = own[0]
        more = [PassSpec(source=p.source, entry=p.entry, dispatch=list(p.dispatch),
                         constants=p.constants or None, index=p.index, bind=dict(p.bind))
                for p in self.passes if p is not first]
        return Compile(cid=cid, source=self.source, dispatch=list(first.dispatch), constants=first.constants,
                       entry=first.entry, more=more, uniforms=dict(self.uniforms), first=first.index,
                       bind=dict(first.bind))


@dataclass
class PassPlan:
    """One pass of a stitched result: the module it is built from and its grid."""

    label: str
    entry: str
    source: str
    dispatch: tuple[int, int, int]
    constants: dict[str, int | float | bool]
    index: int
    own: bool  # the candidate's module (False: the workload's, for a pass it leaves alone)
    bind: dict[str, str] = field(default_factory=dict)  # binding -> buffer, for this pass


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
    """The ``// tile:`` header (numbers, size constants, the kernel's own constants and
    arithmetic over them: ``// tile: 4*WX x 4*WY``) or the workgroup shape.

    A comment such as ``// Tile: load A and B`` is prose, not a header; a header that
    names an unknown value or cannot be evaluated is refused, naming it.
    """
    return dispatch_plan.tile_of(body, {**(consts or {}), **size}, wg, ContractError)


def plan_dispatch(grid: tuple[int, int], tile: tuple[int, int],
                  max_dim: int) -> tuple[tuple[int, int], tuple[int, int, int]]:
    """Tiles needed to cover the output, and a dispatch within the per-dimension limit."""
    return dispatch_plan.plan_dispatch(grid, tile, max_dim, ContractError)


def prelude(workload: Workload, size: Size, tiles: tuple[int, int], dispatch_x: int,
            skip: set, taken: set[str] | None = None, prelude_body: str = "") -> str:
    """The generated lines in front of a kernel: size constants, tile helpers, and the
    bindings (``skip``: the slots it declares itself; ``taken``: names it declares)."""
    taken = taken or set()
    lines = [f"// ---- vajra prelude: {workload.name} {workload.label(size)} (generated) ----"]
    by_host = set(overrides(prelude_body)) if prelude_body else set()  # sized by the host: constants
    lines += [f"const {dim}: u32 = {size[dim]}u;" for dim in workload.dims if dim not in by_host]
    lines += [
        f"const TILES_X: u32 = {tiles[0]}u;",
        f"const TILES_Y: u32 = {tiles[1]}u;",
        f"const DISPATCH_X: u32 = {dispatch_x}u;",
        "fn vajra_tile(wid: vec3<u32>) -> vec2<u32> {",
        "    let i = wid.x + wid.y * DISPATCH_X;",
        "    return vec2<u32>(i % TILES_X, i / TILES_X);",
        "}",
    ]
    slots = {s if isinstance(s, tuple) else (0, s) for s in skip}
    lines += declarations(workload, slots, taken)
    lines.append(PRELUDE_END)
    return "\n".join(lines) + "\n"


def check_bindings(workload: Workload, body: str) -> set[tuple[int, int]]:
    """Slots (group, binding) the candidate declares itself, each checked against the
    workload's (admission/resources.py)."""
    return resource_check(workload, body, lambda message, line: ContractError(message, line))


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


_DIRECTIVE = re.compile(r"^[ \t]*(enable|requires|diagnostic)\b([^;{}]*);[ \t]*(//.*)?$", re.M)
# Extensions Naga (wgpu-native) refuses although browsers' Tint requires them; the
# feature itself is requested on the device, so the directive is simply left out here.
NATIVE_IMPLICIT = {"subgroups"}


@dataclass(frozen=True)
class Directives:
    """A kernel's global directives: the extensions it enables, and its ``requires`` and
    ``diagnostic(...)`` lines as written."""

    enables: list[str]
    others: list[str]


def hoist_directives(body: str) -> tuple[Directives, str]:
    """Move the global directives (``enable``, ``requires``, ``diagnostic``) out of the body,
    keeping its line numbers.

    WGSL requires directives before any declaration, so they cannot follow the
    prelude. Each is blanked to an empty line in place, so every later line keeps
    the number the model gave it.
    """
    names: list[str] = []
    others: list[str] = []

    def take(match: re.Match[str]) -> str:
        if match.group(1) != "enable":
            others.append(f"{match.group(1)}{match.group(2)};")
            return ""
        for name in match.group(2).split(","):
            if name.strip() and name.strip() not in names:
                names.append(name.strip())
        return ""

    rest = _DIRECTIVE.sub(take, body)
    return Directives(names, list(dict.fromkeys(others))), rest


def directives_for(workload: Workload, found: Directives) -> str:
    """The directive lines in front of the prelude: the kernel's own enables, plus f16 for
    f16 bindings, then its other directives."""
    names = [n for n in found.enables if n not in NATIVE_IMPLICIT]
    if "shader-f16" in workload.features and "f16" not in names:
        names.insert(0, "f16")
    return "".join(f"enable {name};\n" for name in names) + "".join(f"{line}\n" for line in found.others)


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
    """Prelude plus body, with the dispatch of every pass planned; ``tile`` overrides the header.

    A template body is expanded first (its values from the size, the workload's
    ``defines`` and ``constants``). ``constants`` that set the kernel's ``override``
    declarations are pipeline constants (never substituted into the text): the
    workgroup size, workgroup memory and tile header are read with them.
    """
    given = dict(constants or {})
    try:
        body, constants, filled = fill_template(workload, size, body, given)
    except TemplateError as exc:
        raise ContractError(str(exc), exc.line, exc.column) from None
    if not body.strip():
        raise ContractError(f"no @compute entry point named `{workload.entries[0]}`")
    found, rest = hoist_directives(body)
    enables = found.enables
    own = own_passes(workload, rest)
    declared = check_bindings(workload, rest)
    check_constants(rest, constants)
    constants = {**overrides_from_size(workload, size, rest), **constants}
    consts = {dim: size[dim] for dim in workload.dims}
    consts.update({k: int(v) for k, v in constants.items() if isinstance(v, int) and not isinstance(v, bool)})
    check_workgroup_memory(rest, consts, max_workgroup_bytes)
    check_uniform_sizes(workload, size, rest, consts, lambda message, line: ContractError(message, line))
    params = {**override_defaults(rest, consts), **filled, **constants}
    plans: list = []
    for index, entry in own:  # later passes are checked against the first's tile constants
        plans.append(plan_pass(workload, size, rest, index, entry, consts, params, constants, max_dim, tile,
                               plans[0] if plans else None))
    first = plans[0]
    head = directives_for(workload, found) + prelude(workload, size, first.tiles, first.dispatch[0],
                                                      declared, module_names(rest), rest)
    source = head + rest
    try:
        uniforms = uniform_bytes(workload, size, params)
    except WorkloadError as exc:
        raise ContractError(f"workload {exc}") from None
    passes = [PassPlan(p.label, p.entry, source, p.dispatch, p.constants, p.index, True, pass_binds(workload, p.index))
              for p in plans]
    passes += _default_passes(workload, size, {i for i, _ in own}, max_dim, max_workgroup_bytes)
    return Stitched(
        source=source,
        prelude_lines=head.count("\n"),
        workgroup_size=first.workgroup_size,
        tile=first.tile,
        tiles=first.tiles,
        dispatch=first.dispatch,
        declared=declared,
        enables=enables,
        constants=constants,
        entry=first.entry,
        passes=sorted(passes, key=lambda p: p.index),
        uniforms=uniforms,
        given=given,
    )


def _default_passes(workload: Workload, size: Size, own: set[int], max_dim: int,
                    max_workgroup_bytes: int | None) -> list["PassPlan"]:
    """The passes a candidate leaves to the workload: each from its own module (the
    pass's ``source``, else the baseline), stitched the same way."""
    out = []
    for index, p in enumerate(workload.passes):
        if index in own or p.optional:  # an optional pass runs only from a kernel that defines it
            continue
        module = stitch(_SinglePass.of(workload, index), size, p.source or workload.baseline, max_dim,
                        max_workgroup_bytes)
        out.append(PassPlan(p.label, p.entry, module.source, module.dispatch, dict(module.constants), index,
                            False, dict(p.bind or {})))
    return out


class _SinglePass:
    """A multi-pass workload seen as pass ``index`` alone, to stitch that pass's module."""

    @staticmethod
    def of(workload: Workload, index: int) -> Workload:
        from dataclasses import replace

        p = workload.passes[index]
        alone = replace(p, bind=None)
        return replace(workload, passes=(alone,), entry=p.entry)


def parse_only_source(workload: Workload, size: Size, body: str) -> Stitched:
    """The body behind a plain prelude, for asking the compiler why a body does not parse.

    Used when the contract's own reading fails: a kernel with a syntax error should
    hear the compiler's parse error at its line, not "no entry point" at 1:1.
    """
    try:
        body = fill_template(workload, size, body, {})[0]
    except (TemplateError, WorkloadError):
        pass  # the compiler then reads the template as it is
    found, rest = hoist_directives(body)
    directives = directives_for(workload, found)
    try:  # bindings the body declares itself must not be declared twice
        own = {(decl.group, decl.binding) for decl in storage_bindings(rest, include_all=True)
               if decl.address_space in ("storage", "uniform")}
        taken = module_names(rest)
    except Exception:  # noqa: BLE001 - the body may not even tokenize; the compiler will say why
        own, taken = set(), set()
    head = directives + prelude(workload, size, (1, 1), 1, own, taken)
    return Stitched(source=head + rest, prelude_lines=head.count("\n"), workgroup_size=(1, 1, 1),
                    tile=(1, 1), tiles=(1, 1), dispatch=(1, 1, 1), enables=found.enables)

"""The passes a kernel's own module runs: which entry points it defines, and each one's
workgroup size, override values and grid.

A single-pass workload runs its ``entry`` (or the module's only compute entry point,
whatever its name); a multi-pass one, every pass whose entry point the module defines, the
others coming from the workload's own module. An ``override`` named like a size constant
(a kernel sized by its host) is set from the size.
"""

from __future__ import annotations

from dataclasses import dataclass

from vajra_tui.engine.admission import dispatch as dispatch_plan
from vajra_tui.engine.admission.refusal import ContractError
from vajra_tui.engine.wgsl.expr import ConstEvalError
from vajra_tui.engine.wgsl.tokens import compute_entries, module_consts, override_names, read_workgroup_size
from vajra_tui.engine.workloads.base import Size, Workload, WorkloadError


@dataclass
class _Planned:
    index: int
    entry: str
    label: str
    workgroup_size: tuple[int, int, int]
    tile: tuple[int, int]
    tiles: tuple[int, int]
    dispatch: tuple[int, int, int]
    constants: dict[str, int | float | bool]  # this pass's pipeline constants


def plan_pass(workload: Workload, size: Size, rest: str, index: int, entry: str, consts: dict[str, int],
          params: dict, constants: dict, max_dim: int, tile: tuple[int, int] | None,
          first: _Planned | None = None) -> _Planned:
    """One of the kernel's own passes: its workgroup size, and the grid it is dispatched on.
    The prelude's tile constants are the ``first`` pass's: a later pass on another grid may
    neither be folded nor find its tile with vajra_tile."""
    try:
        own = workload.pass_constants(size, params, index)
    except WorkloadError as exc:
        raise ContractError(f"workload {exc}") from None
    constants = {**constants, **{k: v for k, v in own.items() if k in overrides(rest)}}
    consts = {**consts, **{k: int(v) for k, v in own.items() if isinstance(v, int) and not isinstance(v, bool)}}
    try:
        wg = read_workgroup_size(rest, consts, entry)
    except ConstEvalError as exc:
        raise ContractError(f"cannot read @workgroup_size of `{entry}`: {exc}") from None
    label = workload.passes[index].label if workload.passes else entry
    try:
        groups = workload.workgroups(size, params, index)
    except WorkloadError as exc:
        raise ContractError(f"workload {exc}") from None
    if groups is None:
        tile = tile or dispatch_plan.tile_of(rest, {**_own_consts(rest, consts), **size}, wg, ContractError)
        tiles, dispatch = dispatch_plan.plan_dispatch(workload.grid_of_output(size), tile, max_dim, ContractError)
    else:
        tile, tiles = (wg[0], wg[1]), (groups[0], groups[1])
        dispatch = dispatch_plan.fold(groups, max_dim, ContractError)
    if first is not None and (tiles, dispatch[0]) != (first.tiles, first.dispatch[0]):
        problem = dispatch_plan.later_pass_problem(rest, entry, label, tiles, dispatch, first.tiles)
    else:
        problem = dispatch_plan.folding_problem(rest, dispatch, tiles)
    if problem is not None:
        raise ContractError(problem)
    return _Planned(index, entry, label, wg, tile, tiles, dispatch, constants)


def pass_binds(workload: Workload, index: int) -> dict[str, str]:
    return dict(workload.passes[index].bind or {}) if workload.passes else {}


def overrides(rest: str) -> list[str]:
    try:
        return override_names(rest)
    except Exception:  # noqa: BLE001 - the compiler will say what is wrong with the text
        return []


def overrides_from_size(workload: Workload, size: Size, rest: str) -> dict[str, int | float | bool]:
    """An ``override`` named like a size constant or a define takes that value: a published
    kernel sized by its host (``override ELEMENT_COUNT: u32;``) gets it as a pipeline constant."""
    try:
        names = override_names(rest)
    except Exception:  # noqa: BLE001 - the compiler will say what is wrong with the text
        return {}
    if not any(n in size or workload.defines is not None for n in names):
        return {}
    known = workload.template_values(size)
    return {n: known[n] for n in names if isinstance(known.get(n), (int, float, bool))}


def override_defaults(rest: str, given: dict[str, int]) -> dict[str, int]:
    """The integer values the kernel's ``override``s take where nothing sets them: their declared
    defaults. The workload's ``grid``, uniform ``values`` and pass ``constants`` read them in
    ``params``, so a kernel benched as written (``override PER: u32 = 4;``) is dispatched for
    the PER it runs with, not for the grid function's own fallback."""
    try:
        names = set(override_names(rest))
        return {n: v for n, v in module_consts(rest, given).items() if n in names and n not in given}
    except Exception:  # noqa: BLE001 - the compiler will say what is wrong with the text
        return {}


def own_passes(workload: Workload, rest: str) -> list[tuple[int, str]]:
    """(pass index, entry point) of the passes this module defines, in order.

    A single-pass workload takes its ``entry``, or the module's only compute entry
    point whatever its name; a multi-pass one, every pass whose entry it defines. A
    workload whose one required pass is followed by optional ones (attention's split-K
    combine) reads like a single-pass one: the module's only other entry point, whatever
    its name, is that pass.
    """
    try:
        found = compute_entries(rest)
    except Exception:  # noqa: BLE001 - a body we cannot read: the compiler will say why
        found = []
    wanted = workload.entries
    if not workload.passes or sum(not p.optional for p in workload.passes) == 1:
        optional = [(i, p.entry) for i, p in enumerate(workload.passes) if p.optional and p.entry in found]
        first = [name for name in found if name not in {n for _, n in optional}]
        if wanted[0] in found:
            return [(0, wanted[0]), *optional]
        if len(first) == 1:
            return [(0, first[0]), *optional]
        raise ContractError(f"no @compute entry point named `{wanted[0]}`"
                            + (f" (it has {', '.join(found)})" if found else ""))
    own = [(i, name) for i, name in enumerate(wanted) if name in found]
    if not own:
        raise ContractError(f"defines none of {workload.name}'s passes: want @compute fn "
                            + " or ".join(f"`{n}`" for n in wanted) + (f" (it has {', '.join(found)})" if found else ""))
    return own


def _own_consts(body: str, sizes: dict[str, int]) -> dict[str, int]:
    """The kernel's module-scope integer constants, evaluated with the size constants (and
    the pipeline's override values) known."""
    try:
        return module_consts(prelude_consts(sizes) + body, sizes)
    except Exception:  # noqa: BLE001 - a body we cannot read: the compiler will say why
        return {}


def prelude_consts(sizes: dict[str, int]) -> str:
    return "".join(f"const {name}: u32 = {value}u;\n" for name, value in sizes.items())

"""What an exported result runs, computed once from the result: modules, passes, buffers.

A result of a workload "as written" binds at any group and binding number, fills uniform
params structs, and may run several passes, some from modules other than its own. The
TypeScript module, the ``.wgsl`` files and the lockfile all describe the same program,
so it is worked out here, from what the result carries (every name checked by
:mod:`.names` first):

- module 0 is the result's own stitched source; each pass that is not the result's own
  (``own: false``) brings its module's source, one module per distinct source;
- a single-pass result runs its own module's entry point: the one ``@compute`` function,
  or ``main`` when there are several (a result records no entry for a single pass);
- each pass's layout is the engine's (gpu/resources.py): every binding of the workload,
  typed as the module declares it (``read`` in one pass, ``read_write`` in the next), or
  as the workload declares it where the module does not;
- a pass of another module gets the override values the engine gave it from the size:
  each ``override`` named like a size dim (a ``defines`` value is not recorded);
- a read-only input a module declares ``var<uniform>`` is typed ``uniform`` in that pass's
  layout, and its BUFFERS row asks for UNIFORM usage besides STORAGE (``usage``);
- a scratch buffer that no module names beyond its declaration, and no pass binds, is left
  out: attention's ``Partial`` (up to 128 MiB, for a split-K kernel's combine) is allocated
  only by an export whose kernel uses it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from vajra_tui.engine.events import CandidateResult, WorkloadInfo
from vajra_tui.engine.export import names
from vajra_tui.engine.export.names import TYPED_ARRAYS
from vajra_tui.engine.wgsl.tokens import (compute_entries, override_names, read_workgroup_size, significant_tokens,
                                          storage_bindings)
from vajra_tui.engine.workloads.base import padded

STORAGE_USAGE = 0x80 | 0x8 | 0x4  # GPUBufferUsage STORAGE | COPY_DST | COPY_SRC
UNIFORM_USAGE = 0x40  # GPUBufferUsage.UNIFORM: a pass reads the buffer as var<uniform>


@dataclass
class PassPlan:
    """One dispatch: its entry point in module ``module``, its grid, constants and layout."""

    label: str
    entry: str
    module: int
    dispatch: list[int]
    constants: dict[str, Any]
    layout: list[list[Any]]  # [group, binding, "storage" | "read-only-storage" | "uniform"]
    workgroup: list[int]
    own: bool
    bind: dict[str, str] = field(default_factory=dict)  # binding -> the buffer it gets in this pass


@dataclass
class ExportProgram:
    """The storage buffers, the uniforms (with their bytes), the modules and the passes."""

    buffers: list[dict[str, Any]]
    uniforms: list[dict[str, Any]]
    modules: list[str]
    passes: list[PassPlan] = field(default_factory=list)

    @property
    def groups(self) -> int:
        """Bind group layouts a pipeline has: up to the highest group any binding uses."""
        return 1 + max([b["group"] for b in self.buffers] + [u["group"] for u in self.uniforms])

    @property
    def multipass(self) -> bool:
        return len(self.passes) > 1


def build(result: CandidateResult, workload: WorkloadInfo, rows: list[dict[str, Any]]) -> ExportProgram:
    """The program of ``result`` (``rows``: its workload's checked bindings)."""
    recorded = names.passes(list(result.passes))
    sources = [result.stitched_source, *(p["source"] for p in recorded if not p["own"])]
    bound = {str(v) for p in recorded for v in dict(p.get("bind") or {}).values()}
    rows = [r for r in rows if r["access"] != "scratch" or r["name"] in bound
            or any(_names(s, r["name"]) for s in sources)]
    data = names.uniform_bytes(dict(result.uniforms), rows)
    buffers = [{"binding": r["index"], "name": r["name"], "access": r["access"], "dtype": r["dtype"],
                "elements": int(r["elements"]),
                "bytes": padded(TYPED_ARRAYS[r["dtype"]][1] * int(r["elements"])), "group": r["group"]}
               for r in rows if r["access"] != "uniform"]
    uniforms = [{"group": r["group"], "binding": r["index"], "name": r["name"], "data": data[r["name"]]}
                for r in rows if r["access"] == "uniform"]
    program = ExportProgram(buffers, uniforms, [result.stitched_source])
    if not recorded:
        recorded = [{"label": "", "entry": single_entry(result.stitched_source), "grid": list(result.grid),
                     "own": True, "source": ""}]
    size = dict(workload.size)
    for p in recorded:
        source = result.stitched_source if p["own"] else p["source"]
        if source not in program.modules:
            program.modules.append(source)
        if "constants" in p:  # recorded per pass (one entry point may run at several levels)
            constants = dict(p["constants"])
        else:
            constants = dict(result.constants) if p["own"] else {n: size[n] for n in _overrides(source) if n in size}
        program.passes.append(PassPlan(
            label=p["label"] or p["entry"], entry=p["entry"], module=program.modules.index(source),
            dispatch=list(p["grid"]), constants={k: (int(v) if isinstance(v, bool) else v) for k, v in constants.items()},
            layout=_layout(source, rows, dict(p.get("bind") or {})), workgroup=_workgroup(source, p["entry"], size, constants, result),
            own=p["own"], bind={str(k): str(v) for k, v in dict(p.get("bind") or {}).items()}))
    _usages(program, rows)
    return program


def _usages(program: ExportProgram, rows: list[dict[str, Any]]) -> None:
    """Each buffer's GPUBufferUsage flags: storage, copies, and UNIFORM where a pass's layout
    binds it as a uniform (an input the kernel reads as var<uniform>)."""
    by_slot = {(r["group"], r["index"]): r["name"] for r in rows if r["access"] != "uniform"}
    as_uniform = {p.bind.get(by_slot[(g, b)], by_slot[(g, b)]) for p in program.passes
                  for g, b, kind in p.layout if kind == "uniform" and (g, b) in by_slot}
    for buffer in program.buffers:
        buffer["usage"] = STORAGE_USAGE | (UNIFORM_USAGE if buffer["name"] in as_uniform else 0)


def _names(source: str, name: str) -> bool:
    """Whether ``source`` uses ``name`` beyond declaring it (the prelude declares every binding
    the kernel does not): more than one token of it. When unreadable, assume it does."""
    try:
        return sum(t.text == name for t in significant_tokens(source)) > 1
    except Exception:  # noqa: BLE001 - keep the buffer; the layout then holds it as before
        return True


def single_entry(source: str) -> str:
    """A single-pass result's entry point: its module's only ``@compute`` fn, else ``main``."""
    try:
        found = compute_entries(source)
    except Exception:  # noqa: BLE001 - an unreadable module: the default the engine used
        found = []
    return found[0] if len(found) == 1 else "main"


def _overrides(source: str) -> list[str]:
    try:
        return override_names(source)
    except Exception:  # noqa: BLE001 - nothing to pass then; the device compiler says why
        return []


def _layout(source: str, rows: list[dict[str, Any]], bind: dict[str, str] | None = None) -> list[list[Any]]:
    """Every binding's layout type for ``source``: as declared there, else as the workload says;
    in a pass that rebinds, a taken buffer's own slot is left out (as gpu/resources.py does)."""
    taken = set((bind or {}).values())
    kinds = {(r["group"], r["index"]): ("uniform" if r["access"] == "uniform" else
                                        "read-only-storage" if r["access"] == "read" else "storage")
             for r in rows if not (r["name"] in taken and r["name"] not in (bind or {}))}
    try:
        declared = storage_bindings(source, include_all=True)
    except Exception:  # noqa: BLE001 - the workload's kinds, as the engine would fall back to
        declared = []
    for d in declared:
        slot = (d.group, d.binding)
        if slot in kinds and d.address_space == "storage":
            kinds[slot] = "storage" if d.access == "read_write" else "read-only-storage"
        elif slot in kinds and d.address_space == "uniform" and kinds[slot] == "read-only-storage":
            kinds[slot] = "uniform"  # an input read as var<uniform> (admission/resources.py)
    return [[g, b, k] for (g, b), k in sorted(kinds.items())]


def _workgroup(source: str, entry: str, size: dict[str, int], constants: dict[str, Any],
               result: CandidateResult) -> list[int]:
    """The pass's workgroup size (for the limits it needs); the result's when it cannot be read."""
    consts = {**size, **{k: int(v) for k, v in constants.items() if isinstance(v, int)}}
    try:
        return list(read_workgroup_size(source, consts, entry))
    except Exception:  # noqa: BLE001 - the recorded one is the first own pass's
        return (list(result.workgroup_size) + [1, 1, 1])[:3]


def lock_fields(result: CandidateResult) -> dict[str, Any]:
    """What a lockfile entry adds for such a result: a uniform's bytes (hex) by binding name,
    and a multi-pass result's passes in order, each with the sha256 of the module it ran
    (an own pass's: the exported ``.wgsl``'s source, as timed)."""
    out: dict[str, Any] = {}
    if result.uniforms:
        out["uniforms"] = dict(sorted(result.uniforms.items()))
    rows = names.passes(list(result.passes))
    if rows:
        out["passes"] = [{"label": p["label"], "entry": p["entry"], "grid": p["grid"], "own": p["own"],
                          "source_sha256": hashlib.sha256(
                              (result.stitched_source if p["own"] else p["source"]).encode()).hexdigest()}
                         for p in rows]
    return out

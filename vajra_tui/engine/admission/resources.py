"""A kernel's resources against its workload's: bindings as declared, uniforms filled.

A published kernel declares its own bindings, at any group and binding number, as
storage or uniform buffers. Each declaration must name a binding of the workload at
that slot, in the same address space; an input may be declared writable (many published
kernels declare every buffer ``read_write``) but never written (wgsl/writes.py); a texture
or sampler is refused in one line (storage and uniform buffers only, for now). A small
read-only input may also be declared ``var<uniform>`` (filter taps, a lookup table: on
NVIDIA a uniform is an operand read from the constant bank, no register or shared load),
and is then bound whole, so its buffer must hold the declared type and fit in a uniform
binding (64 KiB, WebGPU's default ``maxUniformBufferBindingSize``). The
prelude declares what the kernel leaves out, and a uniform's bytes are the workload's
``values(size, params)`` laid out by WGSL's uniform rules.
"""

from __future__ import annotations

from typing import Any, Callable

from vajra_tui.engine.wgsl.layout import type_size
from vajra_tui.engine.wgsl.tokens import BindingDecl, storage_bindings
from vajra_tui.engine.wgsl.writes import first_write
from vajra_tui.engine.workloads.base import Size, Workload, WorkloadError, padded
from vajra_tui.engine.workloads.bindings import Binding
from vajra_tui.engine.workloads.uniforms import MAX_UNIFORM_BYTES, UniformError, pack, struct_size, struct_wgsl

Slot = tuple[int, int]
ContractFail = Callable[[str, int], Exception]


def _space(b: Binding) -> str:
    return "uniform" if b.access == "uniform" else "storage"


def check_bindings(workload: Workload, body: str, fail: ContractFail) -> set[Slot]:
    """The slots the kernel declares itself, each checked against the workload's binding there."""
    by_slot = {b.slot: b for b in workload.bindings}
    declared: set[Slot] = set()
    for decl in storage_bindings(body, include_all=True):
        slot = (decl.group, decl.binding)
        where = f"@group({decl.group}) @binding({decl.binding}) `{decl.name}`"
        if decl.address_space not in ("storage", "uniform"):
            raise fail(f"{where} is a {decl.type_text.split('<')[0] or 'texture or sampler'}: Vajra binds "
                       "storage and uniform buffers only (textures and samplers are not supported yet)",
                       decl.line)
        if slot not in by_slot:
            raise fail(f"binding {where} is not part of {workload.name}'s contract ("
                       + ", ".join(f"{b.where} {b.name}" for b in workload.bindings) + ")", decl.line)
        want = by_slot[slot]
        if decl.address_space != _space(want) and not (decl.address_space == "uniform" and want.access == "read"):
            raise fail(f"binding {where} is declared var<{decl.address_space}>, but {workload.name} binds "
                       f"{want.name} there as a {_space(want)} buffer ({want.access!r}; only a "
                       "read-only input may also be read as var<uniform>)", decl.line)
        if want.access == "read" and decl.access not in ("read", ""):
            _check_input_unwritten(body, decl, want.name, fail)
        declared.add(slot)
    return declared


def _check_input_unwritten(body: str, decl: BindingDecl, name: str, fail: ContractFail) -> None:
    """An input declared ``read_write`` is bound as such, but only while the kernel never
    writes it: every candidate reads the same input buffers, so one that a kernel changed
    would feed the next kernels other inputs than their references were computed from."""
    wrote = first_write(body, decl.name)
    if wrote is not None:
        raise fail(f"input binding {decl.binding} `{name}` is declared {decl.access} and the kernel writes it "
                   f"(`{decl.name}` at line {wrote.line}); inputs must be read-only (a kernel that writes one "
                   "needs the workload to bind it 'inout')", wrote.line)


def check_uniform_sizes(workload: Workload, size: Size, source: str, consts: dict[str, int],
                        fail: ContractFail) -> None:
    """Each ``var<uniform>`` the kernel declares must fit the buffer bound there: a uniform's
    struct, or an input read as a uniform, which must also fit in a uniform binding. A binding
    smaller than its declared type is a validation error at dispatch on every WebGPU
    implementation; here it is a one-line refusal at the declaration's line."""
    by_slot = {b.slot: b for b in workload.bindings if b.access in ("read", "uniform")}
    decls = [d for d in storage_bindings(source, include_all=True)
             if d.address_space == "uniform" and (d.group, d.binding) in by_slot]
    lengths = _lengths(workload, size, fail) if any(by_slot[(d.group, d.binding)].access == "read"
                                                    for d in decls) else {}
    for d in decls:
        b = by_slot[(d.group, d.binding)]
        if b.access == "uniform":
            have, what, held = struct_size(b.fields), f"uniform `{b.name}`", " (the workload's fields)"
        else:
            what = f"input `{b.name}` read as var<uniform>"
            have, held = _input_bytes(workload, b, lengths, what, d.line, fail), \
                f" at this size ({lengths[b.name]} {b.dtype})"
        try:
            need = type_size(source, d.type_text, consts)
        except ValueError as exc:
            raise fail(f"{what}: its type {d.type_text[:60]} cannot be sized ({exc})", d.line) from None
        if need > have:
            raise fail(f"{what}: `{d.name}: {d.type_text[:60]}` is {need} bytes, but the buffer bound there "
                       f"holds {have}{held}", d.line)


def _input_bytes(workload: Workload, b: Binding, lengths: dict[str, int], what: str, line: int,
                 fail: ContractFail) -> int:
    """The bytes of input ``b`` at this size, once it is known a uniform can bind its buffer:
    small enough, and never handed another buffer (which has no UNIFORM usage) by a pass."""
    other = next((p for p in workload.passes if b.name in (p.bind or {})), None)
    if other is not None:
        raise fail(f"{what}: pass {other.label!r} binds the buffer {dict(other.bind or {})[b.name]!r} "
                   "there, which only storage can bind: read it as var<storage, read>", line)
    have = padded(b.width * int(lengths[b.name]))
    if have > MAX_UNIFORM_BYTES:
        raise fail(f"{what} holds {have} bytes at this size; a uniform binding holds at most "
                   f"{MAX_UNIFORM_BYTES} (maxUniformBufferBindingSize): read it as var<storage, read>", line)
    return have


def _lengths(workload: Workload, size: Size, fail: ContractFail) -> dict[str, int]:
    try:
        return workload.checked_lengths(size)
    except WorkloadError as exc:
        raise fail(f"workload {exc}", 0) from None


def declarations(workload: Workload, skip: set[Slot], taken: set[str]) -> list[str]:
    """Prelude lines for the bindings the kernel does not declare (and the struct of a
    uniform it does not declare either); a name the kernel uses for something else is
    left out, since declaring it twice would not compile."""
    lines: list[str] = []
    for b in workload.bindings:
        if b.slot in skip or b.name in taken:
            continue
        if b.is_storage:
            access = "read" if b.access == "read" else "read_write"
            lines.append(f"{b.where} var<storage, {access}> {b.name}: array<{b.dtype}>;")
            continue
        struct = b.struct or f"{b.name[0].upper()}{b.name[1:]}Uniform"
        if struct not in taken:
            lines.extend(struct_wgsl(struct, b.fields).splitlines())
        lines.append(f"{b.where} var<uniform> {b.name}: {struct};")
    return lines


def uniform_bytes(workload: Workload, size: Size, params: dict[str, Any]) -> dict[str, bytes]:
    """Each uniform's contents for this size and these tuning parameters."""
    out: dict[str, bytes] = {}
    for b in workload.uniforms:
        try:
            values = b.values(dict(size), dict(params))  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - the user's function: one line naming it
            text = (str(exc).strip().splitlines() or [""])[0]
            raise WorkloadError("bindings", f"{b.name}: values raised {type(exc).__name__}"
                                + (f": {text}" if text else "")) from None
        try:
            out[b.name] = pack(b.name, b.fields, values)
        except UniformError as exc:
            raise WorkloadError("bindings", str(exc)) from None
    return out


def module_names(body: str) -> set[str]:
    """Names the kernel declares at module scope (functions, structs, constants, variables,
    aliases): the prelude must not declare them again."""
    from vajra_tui.engine.wgsl.tokens import significant_tokens

    toks = significant_tokens(body)
    names: set[str] = set()
    depth = 0
    for i, t in enumerate(toks):
        if t.text in ("{", "(", "["):
            depth += 1
        elif t.text in ("}", ")", "]"):
            depth -= 1
        elif depth == 0 and t.text in ("fn", "struct", "const", "override", "alias", "var"):
            j = i + 1
            if t.text == "var" and j < len(toks) and toks[j].text == "<":
                while j < len(toks) and toks[j].text not in (">", ">>"):
                    j += 1
                j += 1
            if j < len(toks):
                names.add(toks[j].text)
    return names

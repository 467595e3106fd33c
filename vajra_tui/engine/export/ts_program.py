"""The sections of ``<workload>.ts`` that describe the program: uniforms, passes, modules.

They are computed from an :class:`~.program.ExportProgram`, whose names :mod:`.names`
checked: numbers are written as numbers, names as escaped string literals, WGSL as exact
template literals, and comment text through :func:`~.names.comment_text`.
"""

from __future__ import annotations

from vajra_tui.engine.export.names import comment_text, js_literal, template_literal
from vajra_tui.engine.export.program import ExportProgram, PassPlan
from vajra_tui.engine.export.wgsl import browser_enables
from vajra_tui.engine.wgsl.tokens import pipeline_constants

INPUT_ACCESS = ("read", "inout")  # what run() uploads (make_inputs gave the engine)
OUTPUT_ACCESS = ("read_write", "inout")  # what run() reads back (verified by the engine)


def program_notes(program: ExportProgram) -> str:
    """Header lines for what a reader must know before binding buffers (none for a plain kernel)."""
    lines = []
    inout = [b["name"] for b in program.buffers if b["access"] == "inout"]
    if inout:
        lines.append(f"// In place: {comment_text(', '.join(inout))} (access \"inout\") is read and "
                     "overwritten; dispatch() leaves the result in your buffer, nothing is restored.\n")
    if program.multipass:
        labels = comment_text(", ".join(p.label for p in program.passes))
        lines.append(f"// Runs {len(program.passes)} passes in order in one command encoder: {labels}.\n")
    if program.uniforms:
        lines.append("// Uniform buffers are filled with the bytes the kernel was verified with (this size).\n")
    return "".join(lines)


def _uniform_row(u: dict) -> str:
    data = u["data"] + bytes(-len(u["data"]) % 16)  # a uniform buffer: whole 16-byte rows
    chunks = [", ".join(str(b) for b in data[i:i + 16]) for i in range(0, len(data), 16)]
    body = ",\n      ".join(chunks)
    return (f"  {{ group: {int(u['group'])}, binding: {int(u['binding'])}, name: {js_literal(u['name'])}, "
            f"data: new Uint8Array([\n      {body},\n    ]) }}")


def uniform_exports(program: ExportProgram) -> str:
    """UNIFORMS: each uniform binding's slot and the bytes the module fills it with."""
    rows = "".join(_uniform_row(u) + ",\n" for u in program.uniforms)
    return f"""\
/** A uniform params struct, laid out by WGSL's uniform rules: bound by the kernel itself. */
export interface UniformSpec {{
  readonly group: number;
  readonly binding: number;
  readonly name: string;
  /** The struct's bytes at the exported size and parameters. */
  readonly data: Uint8Array;
}}
export const UNIFORMS: readonly UniformSpec[] = [
{rows}];
"""


def pass_exports(program: ExportProgram) -> str:
    """MODULES (WGSL of each module, [0] the result's own) and PASSES, in the order they run."""
    others = "".join(f",\n  {template_literal(m)}" for m in program.modules[1:])
    rows = "".join(f"  {js_literal(_pass_row(p, program.modules[p.module]))},\n" for p in program.passes)
    prefixes = ["".join(f"enable {n}; " for n in browser_enables(m)[1]) for m in program.modules[1:]]
    return f"""\
/** Every WGSL module the passes are built from: [0] is WGSL, the others are passes the
 *  result left to the workload, byte for byte as they ran. */
export const MODULES: readonly string[] = [WGSL{others}];
/** The directives each module after the first lacks for browsers (wgpu refuses them). */
const MODULE_ENABLES: readonly string[] = {js_literal(prefixes)};
/** What browsers compile, module by module: [0] is BROWSER_WGSL, each other one is its
 *  `<workload>.<pass>.wgsl` file's source with the same directives in front of line 1. */
export const BROWSER_MODULES: readonly string[] = [BROWSER_WGSL, ...MODULES.slice(1).map((code, i) =>
  (MODULE_ENABLES[i] ?? "") + code)];
/** Bind group layouts each pipeline has (an empty one for a group no binding uses). */
export const GROUPS: number = {program.groups};
export type LayoutType = "storage" | "read-only-storage" | "uniform";
export interface PassSpec {{
  readonly label: string;
  readonly entry: string;
  /** Index into MODULES. */
  readonly module: number;
  readonly dispatch: readonly [number, number, number];
  /** Pipeline constants as createComputePipeline takes them: an override's `@id` number where it has one. */
  readonly constants: Readonly<Record<string, number>>;
  /** [group, binding, type] of every binding, as this pass's module declares it. */
  readonly layout: readonly (readonly [number, number, LayoutType])[];
  readonly workgroup: readonly [number, number, number];
  /** Bindings that get another of the buffers in this pass (binding name -> buffer name). */
  readonly bind: Readonly<Record<string, string>>;
}}
/** The dispatches, run in this order in one command encoder. */
export const PASSES: readonly PassSpec[] = [
{rows}];
"""


def _pass_row(p: PassPlan, source: str) -> dict:
    """One PASSES row; its constants keyed as createComputePipeline wants them (an override's
    ``@id`` number where it has one, else its name)."""
    return {"label": p.label, "entry": p.entry, "module": p.module, "dispatch": list(p.dispatch),
            "constants": pipeline_constants(source, dict(p.constants)), "layout": p.layout,
            "workgroup": list(p.workgroup),
            "bind": dict(p.bind)}


def required_limits(program: ExportProgram) -> dict[str, int]:
    """The least a device must allow for this program and size; defaults can be lower."""
    sizes = [b["bytes"] for b in program.buffers]
    wgs = [p.workgroup for p in program.passes]
    limits = {
        "maxStorageBuffersPerShaderStage": len(program.buffers),
        "maxStorageBufferBindingSize": max(sizes),
        "maxBufferSize": max(sizes),
        "maxComputeInvocationsPerWorkgroup": max(w[0] * w[1] * w[2] for w in wgs),
        "maxComputeWorkgroupSizeX": max(w[0] for w in wgs),
        "maxComputeWorkgroupSizeY": max(w[1] for w in wgs),
        "maxComputeWorkgroupSizeZ": max(w[2] for w in wgs),
        "maxComputeWorkgroupsPerDimension": max(max(p.dispatch) for p in program.passes),
    }
    if program.groups > 1:
        limits["maxBindGroups"] = program.groups
    if program.uniforms:
        limits["maxUniformBuffersPerShaderStage"] = len(program.uniforms)
        limits["maxUniformBufferBindingSize"] = max(-(-len(u["data"]) // 16) * 16 for u in program.uniforms)
    return limits

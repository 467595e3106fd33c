"""The ``<workload>.ts`` dispatch module: the exact WGSL plus everything WebGPU needs to run it.

Every name in it comes from a recording, which may be anyone's: :mod:`.names` checks
the ones that stand where code is and escapes the rest (see its docstring).
"""

from __future__ import annotations

from typing import Any

from vajra_tui import __version__
from vajra_tui.engine.events import CandidateResult, DeviceInfo, WorkloadInfo
from vajra_tui.engine.wgsl.tokens import uses_subgroups
from vajra_tui.engine.export import names
from vajra_tui.engine.export.wgsl import browser_enables, browser_text
from vajra_tui.engine.export.lockfile import sha256_bytes, verified_sha
from vajra_tui.engine.export.names import IDENTIFIER, TYPED_ARRAYS, comment_text, js_literal, template_literal
from vajra_tui.engine.export.program import ExportProgram
from vajra_tui.engine.export.program import build as build_program
from vajra_tui.engine.export.ts_program import (
    INPUT_ACCESS, OUTPUT_ACCESS, pass_exports, program_notes, required_limits, uniform_exports,
)
from vajra_tui.engine.export.ts_guards import guards
from vajra_tui.engine.export.ts_runtime import (
    create_kernel, kernel_cache, kernel_interface, request_device, run_once, usage_flags,
)


def _bindings(workload: WorkloadInfo) -> list[dict[str, Any]]:
    """The bindings as the session recorded them (checked); a recording from before they were, by name."""
    if workload.bindings:
        return names.bindings(list(workload.bindings))
    from vajra_tui.engine.workloads import get_workload

    wl = get_workload(workload.name)
    lengths = wl.buffer_len(dict(workload.size))
    return names.bindings([{"index": b.index, "name": b.name, "access": b.access, "dtype": b.dtype,
                            "group": b.group, "elements": int(lengths.get(b.name, 0))} for b in wl.bindings])


# ---- the TypeScript module -----------------------------------------------------
def _key(name: str) -> str:
    """A key of a TS object type: the name itself when it is an identifier, else a string literal."""
    return name if IDENTIFIER.fullmatch(name) else js_literal(name)


def _checked(result: CandidateResult, workload: WorkloadInfo) -> list[dict[str, Any]]:
    """The bindings, once every name that reaches the module is checked (a UsageError if not)."""
    names.recorded_names(workload.name, dict(workload.size), dict(result.constants))
    verified_sha(result)  # refuses what cannot be exported faithfully
    return _bindings(workload)


def export_program(result: CandidateResult, workload: WorkloadInfo) -> ExportProgram:
    """What the result runs (modules, passes, buffers, uniform bytes), every name checked."""
    return build_program(result, workload, _checked(result, workload))


def typescript_module(result: CandidateResult, device: DeviceInfo, workload: WorkloadInfo) -> str:
    """The ``<workload>.ts`` dispatch module for one exported kernel."""
    program = export_program(result, workload)
    buffers = program.buffers
    sha = sha256_bytes(result.stitched_source.encode())  # of WGSL below, as timed
    own = next(p for p in program.passes if p.own)
    sections = [
        _header(result, device, workload, sha) + program_notes(program),
        _identity_exports(workload, sha, own.entry, own.workgroup, list(result.grid)),
        _buffer_spec_type(),
        _buffer_exports(buffers, _pipeline_constants(result)),
        uniform_exports(program),
        _io_types(buffers),
        _limits_export(required_limits(program)),
        _wgsl_exports(result.stitched_source, program, dict(result.constants)),
        pass_exports(program),
        usage_flags(),
        request_device(any(b["dtype"] == "f16" for b in buffers)),
        kernel_interface(),
        guards(),
        create_kernel(),
        kernel_cache(),
        run_once(),
    ]
    return "\n".join(sections)


# ---- what the module's text is computed from -----------------------------------
def _pipeline_constants(result: CandidateResult) -> dict[str, Any]:
    """The override values as numbers: WebGPU pipeline constants take no booleans."""
    return {k: (int(v) if isinstance(v, bool) else v) for k, v in result.constants.items()}


def _record_type(fields: list[tuple[str, str]]) -> str:
    """A one-line TypeScript object type, ``{ a: T; b: U }``, for the typed inputs and outputs."""
    return "{ " + "; ".join(f"{_key(name)}: {kind}" for name, kind in fields) + " }"


# ---- the module, section by section (joined by one blank line) ------------------
def _header(result: CandidateResult, device: DeviceInfo, workload: WorkloadInfo, sha: str) -> str:
    """The comment a reader sees first: which kernel, which size, measured where and how fast.

    Each name in it is :func:`comment_text`: a recorded name could otherwise end the line
    (CR, U+2028, U+2029) and be read as code."""
    what = comment_text(f"{workload.name} " + "x".join(str(v) for v in dict(workload.size).values()))
    kernel, device_name, backend = (comment_text(t) for t in (result.name, device.name, device.backend))
    med = f"{result.median_ms:.4g} ms" if result.median_ms is not None else "untimed"
    how = comment_text(result.timing or "untimed")
    return f"""\
// Generated by Vajra {__version__} (vajra-tui): {what}, kernel {kernel}.
// Kernel sha256 {sha}: WGSL below is byte-for-byte the source that was verified and timed.
// Measured {med} ({how}) on {device_name} [{backend}].
// Sizes are baked into the WGSL prelude: this module runs exactly this problem size.
// Types: under TypeScript 5 this module needs @webgpu/types (`npm i -D @webgpu/types`, and
// "types": ["@webgpu/types"] in tsconfig.json); TypeScript 7's DOM lib has them built in
// (adding @webgpu/types there too conflicts unless skipLibCheck), so no /// <reference>.
// Clean under `tsc --strict --noUncheckedIndexedAccess`.
/* eslint-disable */
"""


def _identity_exports(workload: WorkloadInfo, sha: str, entry: str, wg: list[int], grid: list[int]) -> str:
    """What identifies the kernel, its entry point and the dispatch grid it was timed with
    (folded or not); a multi-pass result's are its own first pass's (PASSES has them all)."""
    return f"""\
export const WORKLOAD = {js_literal(workload.name)};
export const SIZE = {js_literal(dict(workload.size))} as const;
export const SHA256 = {js_literal(sha)};
export const ENTRY_POINT = {js_literal(entry)};
export const WORKGROUP_SIZE = {js_literal(wg)} as const;
/** The dispatch the engine used (folded when a grid exceeds 65535 per dimension). */
export const DISPATCH: readonly [number, number, number] = {js_literal(grid)};
"""


def _buffer_spec_type() -> str:
    """The type of one BUFFERS row, so callers can size and bind their own buffers."""
    return """\
/** "inout": read_write storage holding an input, read and overwritten in place;
 *  "scratch": an intermediate between passes, neither input nor output. */
export type Access = "read" | "read_write" | "inout" | "scratch";
export interface BufferSpec {
  readonly binding: number;
  readonly name: string;
  readonly access: Access;
  /** WGSL element type: f16 data travels as its raw bits in a Uint16Array. */
  readonly dtype: "f32" | "f16" | "i32" | "u32";
  /** Elements at the exported size. */
  readonly elements: number;
  readonly bytes: number;
  /** The bind group (``@group``) it is bound at. */
  readonly group: number;
  /** GPUBufferUsage flags a buffer for it needs: STORAGE | COPY_DST | COPY_SRC, and UNIFORM
   *  where a pass reads this input as var<uniform>. */
  readonly usage: number;
}
"""


def _buffer_exports(buffers: list[dict[str, Any]], constants: dict[str, Any]) -> str:
    """The buffer size table, which names are inputs and outputs, and the pipeline constants."""
    rows = ",\n".join(f"  {js_literal(b)}" for b in buffers)
    outputs = [b["name"] for b in buffers if b["access"] in OUTPUT_ACCESS]
    inputs = [b["name"] for b in buffers if b["access"] in INPUT_ACCESS]
    return f"""\
/** Storage bindings, each at its group and binding: inputs are read-only storage, outputs
 *  read_write storage; an "inout" buffer is both (its input is read and overwritten). */
export const BUFFERS: readonly BufferSpec[] = [
{rows},
];
export const INPUTS = {js_literal(inputs)} as const;
export const OUTPUTS = {js_literal(outputs)} as const;
export const OUTPUT = {js_literal(outputs[0])};
/** Values of the kernel's `override` declarations it was tuned with: set as pipeline constants. */
export const CONSTANTS: Readonly<Record<string, number>> = {js_literal(constants)};
"""


def _io_types(buffers: list[dict[str, Any]]) -> str:
    """Typed arrays in and out of run(), and the GPUBuffers bindGroup() takes, by binding name."""
    arrays = {b["name"]: TYPED_ARRAYS[b["dtype"]][0] for b in buffers}
    inputs = [(b["name"], arrays[b["name"]]) for b in buffers if b["access"] in INPUT_ACCESS]
    outputs = [(b["name"], arrays[b["name"]]) for b in buffers if b["access"] in OUTPUT_ACCESS]
    output_type = outputs[0][1] if len(outputs) == 1 else _record_type(outputs)
    return f"""\
export type Inputs = {_record_type(inputs)};
export type Outputs = {output_type};
export type Buffers = {_record_type([(b["name"], "GPUBuffer") for b in buffers])};
"""


def _limits_export(limits: dict[str, int]) -> str:
    """REQUIRED_LIMITS: default device limits may be below what this kernel and size need."""
    return f"""\
/** Minimum device limits this kernel needs; requestKernelDevice() asks the adapter for them. */
export const REQUIRED_LIMITS: Readonly<Record<string, number>> = {js_literal(limits)};
"""


def _wgsl_exports(source: str, program: ExportProgram, constants: dict[str, Any]) -> str:
    """The exact WGSL that was timed, and what browsers compile: ``<workload>.wgsl``'s text."""
    enables, added = browser_enables(source)
    browser = browser_text(source, constants)
    prefix = "".join(f"enable {name}; " for name in added)
    # the file's text is the timed source behind its directives unless overrides got defaults
    expr = f"{js_literal(prefix)} + WGSL" if browser == prefix + source and prefix else (
        "WGSL" if browser == source else template_literal(browser))
    return f"""\
export const WGSL: string = {template_literal(source)};

/** Whether the kernel calls subgroup built-ins: browsers then need the 'subgroups' feature. */
export const USES_SUBGROUPS: boolean = {js_literal(any(uses_subgroups(m) for m in program.modules))};
/** The `enable` directives the browser's WGSL carries. */
export const ENABLES: readonly string[] = {js_literal(enables)};
/** What browsers compile, the same text as the exported `.wgsl` file (line for line as WGSL):
 *  Tint requires `enable subgroups;` for subgroup built-ins, which wgpu's compiler (where
 *  the kernel was timed) rejects, so it stands in front of the first line here. */
export const BROWSER_WGSL: string = {expr};
"""

"""The ``<workload>.ts`` dispatch module: the exact WGSL plus everything WebGPU needs to run it."""

from __future__ import annotations

import json
from typing import Any

from vajra_tui import __version__
from vajra_tui.engine.events import CandidateResult, DeviceInfo, WorkloadInfo
from vajra_tui.engine.wgsl.tokens import uses_subgroups
from vajra_tui.engine.export.lockfile import sha256_bytes, verified_sha
from vajra_tui.engine.workloads.base import padded

# WGSL element type -> (TypedArray the module uses for it, bytes per element); f16 travels
# as its raw bits (Float16Array is not in every engine yet).
_ARRAYS = {"f32": ("Float32Array", 4), "f16": ("Uint16Array", 2), "i32": ("Int32Array", 4),
           "u32": ("Uint32Array", 4)}


def _bindings(workload: WorkloadInfo) -> list[dict[str, Any]]:
    """The bindings as the session recorded them; a recording from before they were, by name."""
    if workload.bindings:
        return [dict(b) for b in workload.bindings]
    from vajra_tui.engine.workloads import get_workload

    wl = get_workload(workload.name)
    lengths = wl.buffer_len(dict(workload.size))
    return [{"index": b.index, "name": b.name, "access": b.access, "dtype": b.dtype,
             "elements": int(lengths[b.name])} for b in wl.bindings]


# ---- the TypeScript module -----------------------------------------------------
def _template_literal(text: str) -> str:
    """``text`` as a JS template literal whose value is exactly ``text``."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "`":
            out.append("\\`")
        elif ch == "$":
            out.append("\\$")
        elif ch == "\n" or ch == "\t":
            out.append(ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F or ch in "\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")  # a literal CR would be read back as LF
        else:
            out.append(ch)
    return "`" + "".join(out) + "`"


def _js(value: Any) -> str:
    """``value`` as a TS literal; JSON is one, and keeps non-ASCII names readable."""
    return json.dumps(value, ensure_ascii=False)


def _comment(text: str) -> str:
    """``text`` made safe inside a ``//`` or ``/* */`` comment: no newline, no early close."""
    return text.replace("*/", "* /").replace("\n", " ")


def typescript_module(result: CandidateResult, device: DeviceInfo, workload: WorkloadInfo) -> str:
    """The ``<workload>.ts`` dispatch module for one exported kernel."""
    verified_sha(result)  # refuses what cannot be exported faithfully
    sha = sha256_bytes(result.stitched_source.encode())  # of WGSL below, as timed
    buffers = _buffer_table(_bindings(workload))
    wg = _workgroup(result)
    sections = [
        _header(result, device, workload, sha),
        _identity_exports(workload, sha, wg, list(result.grid)),
        _buffer_spec_type(),
        _buffer_exports(buffers, _pipeline_constants(result)),
        _io_types(buffers),
        _limits_export(_required_limits(buffers, wg, list(result.grid))),
        _wgsl_exports(result.stitched_source),
        _usage_flags(),
        _request_device(any(b["dtype"] == "f16" for b in buffers)),
        _kernel_interface(),
        _create_kernel(),
        _kernel_cache(),
        _run_once(),
    ]
    return "\n".join(sections)


# ---- what the module's text is computed from -----------------------------------
def _buffer_table(declared: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per binding, as BUFFERS exports it; bytes round as the worker's buffers do."""
    return [{"binding": b["index"], "name": b["name"], "access": b["access"], "dtype": b["dtype"],
             "elements": int(b["elements"]),
             "bytes": padded(_ARRAYS[b["dtype"]][1] * int(b["elements"]))} for b in declared]


def _workgroup(result: CandidateResult) -> list[int]:
    """The workgroup size as three numbers: WGSL lets a kernel omit y and z, which are then 1."""
    return (list(result.workgroup_size) + [1, 1, 1])[:3]


def _pipeline_constants(result: CandidateResult) -> dict[str, Any]:
    """The override values as numbers: WebGPU pipeline constants take no booleans."""
    return {k: (int(v) if isinstance(v, bool) else v) for k, v in result.constants.items()}


def _required_limits(buffers: list[dict[str, Any]], wg: list[int], grid: list[int]) -> dict[str, int]:
    """The least a device must allow for this kernel and size; defaults can be lower."""
    return {
        "maxStorageBuffersPerShaderStage": len(buffers),
        "maxStorageBufferBindingSize": max(b["bytes"] for b in buffers),
        "maxBufferSize": max(b["bytes"] for b in buffers),
        "maxComputeInvocationsPerWorkgroup": wg[0] * wg[1] * wg[2],
        "maxComputeWorkgroupSizeX": wg[0],
        "maxComputeWorkgroupSizeY": wg[1],
        "maxComputeWorkgroupSizeZ": wg[2],
        "maxComputeWorkgroupsPerDimension": max(grid),
    }


def _record_type(fields: list[tuple[str, str]]) -> str:
    """A one-line TypeScript object type, ``{ a: T; b: U }``, for the typed inputs and outputs."""
    return "{ " + "; ".join(f"{name}: {kind}" for name, kind in fields) + " }"


# ---- the module, section by section (joined by one blank line) ------------------
def _header(result: CandidateResult, device: DeviceInfo, workload: WorkloadInfo, sha: str) -> str:
    """The comment a reader sees first: which kernel, which size, measured where and how fast."""
    label = "x".join(str(v) for v in dict(workload.size).values())
    med = f"{result.median_ms:.4g} ms" if result.median_ms is not None else "untimed"
    return f"""\
// Generated by Vajra {__version__} (vajra-tui): {workload.name} {label}, kernel {_comment(result.name)!s}.
// Kernel sha256 {sha}: WGSL below is byte-for-byte the source that was verified and timed.
// Measured {med} ({result.timing or 'untimed'}) on {_comment(device.name)} [{_comment(device.backend)}].
// Sizes are baked into the WGSL prelude: this module runs exactly this problem size.
/* eslint-disable */
"""


def _identity_exports(workload: WorkloadInfo, sha: str, wg: list[int], grid: list[int]) -> str:
    """What identifies the kernel and the dispatch grid it was timed with (folded or not)."""
    return f"""\
export const WORKLOAD = {_js(workload.name)};
export const SIZE = {_js(dict(workload.size))} as const;
export const SHA256 = {_js(sha)};
export const ENTRY_POINT = "main";
export const WORKGROUP_SIZE = {_js(wg)} as const;
/** The dispatch the engine used (folded when a grid exceeds 65535 per dimension). */
export const DISPATCH: readonly [number, number, number] = {_js(grid)};
"""


def _buffer_spec_type() -> str:
    """The type of one BUFFERS row, so callers can size and bind their own buffers."""
    return """\
export type Access = "read" | "read_write";
export interface BufferSpec {
  readonly binding: number;
  readonly name: string;
  readonly access: Access;
  /** WGSL element type: f16 data travels as its raw bits in a Uint16Array. */
  readonly dtype: "f32" | "f16" | "i32" | "u32";
  /** Elements at the exported size. */
  readonly elements: number;
  readonly bytes: number;
}
"""


def _buffer_exports(buffers: list[dict[str, Any]], constants: dict[str, Any]) -> str:
    """The buffer size table, which names are inputs and outputs, and the pipeline constants."""
    rows = ",\n".join(f"  {_js(b)}" for b in buffers)
    outputs = [b["name"] for b in buffers if b["access"] == "read_write"]
    inputs = [b["name"] for b in buffers if b["access"] == "read"]
    return f"""\
/** Group 0 bindings: inputs are read-only storage, outputs are read_write storage. */
export const BUFFERS: readonly BufferSpec[] = [
{rows},
];
export const INPUTS = {_js(inputs)} as const;
export const OUTPUTS = {_js(outputs)} as const;
export const OUTPUT = {_js(outputs[0])};
/** Values of the kernel's `override` declarations it was tuned with: set as pipeline constants. */
export const CONSTANTS: Readonly<Record<string, number>> = {_js(constants)};
"""


def _io_types(buffers: list[dict[str, Any]]) -> str:
    """Typed arrays in and out of run(), and the GPUBuffers bindGroup() takes, by binding name."""
    arrays = {b["name"]: _ARRAYS[b["dtype"]][0] for b in buffers}
    inputs = [(b["name"], arrays[b["name"]]) for b in buffers if b["access"] == "read"]
    outputs = [(b["name"], arrays[b["name"]]) for b in buffers if b["access"] == "read_write"]
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
export const REQUIRED_LIMITS: Readonly<Record<string, number>> = {_js(limits)};
"""


def _wgsl_exports(source: str) -> str:
    """The exact WGSL that was timed, and the variant browsers compile (subgroups enabled)."""
    return f"""\
export const WGSL: string = {_template_literal(source)};

/** Whether the kernel calls subgroup built-ins: browsers then need the 'subgroups' feature. */
export const USES_SUBGROUPS: boolean = {_js(uses_subgroups(source))};
/** What browsers compile: Tint requires `enable subgroups;` for subgroup built-ins, which
 *  wgpu's compiler (where the kernel was timed) rejects, so the directive is added here. */
export const BROWSER_WGSL: string = USES_SUBGROUPS ? "enable subgroups;\\n" + WGSL : WGSL;
"""


def _usage_flags() -> str:
    """WebGPU flag values spelled out, for hosts that install no GPUBufferUsage globals."""
    return """\
// Numeric values of the WebGPU flags, so the module also works where the
// GPUBufferUsage / GPUMapMode globals are not installed (e.g. Node before
// Object.assign(globalThis, globals)).
const USAGE = { MAP_READ: 0x0001, COPY_SRC: 0x0004, COPY_DST: 0x0008, STORAGE: 0x0080 };
const MAP_READ = 0x0001;
"""


def _request_device(f16: bool) -> str:
    """requestKernelDevice(): a device with the limits and features (shader-f16, subgroups) needed."""
    return f"""\
/** Request a device from ``adapter`` with the limits this kernel needs (compatibility mode safe). */
export async function requestKernelDevice(adapter: GPUAdapter, descriptor: GPUDeviceDescriptor = {{}}): Promise<GPUDevice> {{
  const requiredLimits: Record<string, number> = {{ ...((descriptor.requiredLimits ?? {{}}) as Record<string, number>) }};
  const have = adapter.limits as unknown as Record<string, number>;
  for (const [name, need] of Object.entries(REQUIRED_LIMITS)) {{
    const max = have[name];
    if (typeof max !== "number") continue;
    if (max < need) {{
      throw new Error(`adapter limit ${{name}} = ${{max}} is below what this kernel needs (${{need}})`);
    }}
    requiredLimits[name] = Math.max(requiredLimits[name] ?? 0, need);
  }}
  // Workgroup memory is declared inside the WGSL; ask for all the adapter has.
  if (typeof have.maxComputeWorkgroupStorageSize === "number") {{
    requiredLimits.maxComputeWorkgroupStorageSize = have.maxComputeWorkgroupStorageSize;
  }}
  const requiredFeatures = [...(descriptor.requiredFeatures ?? [])];
  if ({_js(f16)}) {{
    if (!adapter.features.has("shader-f16")) throw new Error("this kernel needs the 'shader-f16' feature");
    requiredFeatures.push("shader-f16" as GPUFeatureName);
  }}
  if (USES_SUBGROUPS) {{
    if (!adapter.features.has("subgroups")) throw new Error("this kernel needs the 'subgroups' feature");
    requiredFeatures.push("subgroups" as GPUFeatureName);
  }}
  return adapter.requestDevice({{ ...descriptor, requiredLimits, requiredFeatures }});
}}
"""


def _kernel_interface() -> str:
    """The Kernel type, and the limit check that names requestKernelDevice() when a device falls short."""
    return """\
export interface Kernel {
  readonly device: GPUDevice;
  readonly module: GPUShaderModule;
  readonly bindGroupLayout: GPUBindGroupLayout;
  readonly pipelineLayout: GPUPipelineLayout;
  readonly pipeline: GPUComputePipeline;
  /** A bind group over caller-owned buffers (STORAGE usage, sizes as in BUFFERS). */
  bindGroup(buffers: Buffers): GPUBindGroup;
  /** Record the dispatch into ``encoder`` (no submit). */
  encode(encoder: GPUCommandEncoder, buffers: Buffers | GPUBindGroup): void;
  /** Encode and submit one dispatch. */
  dispatch(buffers: Buffers | GPUBindGroup): void;
}

function checkLimits(device: GPUDevice): void {
  const have = device.limits as unknown as Record<string, number>;
  for (const [name, need] of Object.entries(REQUIRED_LIMITS)) {
    if (typeof have[name] === "number" && have[name] < need) {
      throw new Error(`device limit ${name} = ${have[name]} < ${need} needed by this kernel; ` +
        "create the device with requestKernelDevice(adapter)");
    }
  }
}
"""


def _create_kernel() -> str:
    """createKernel(): the explicit bind group layout from BUFFERS, the pipeline, the DISPATCH encode."""
    return """\
/** Compile the kernel and build its explicit layout and pipeline. */
export async function createKernel(device: GPUDevice): Promise<Kernel> {
  checkLimits(device);
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ label: `vajra ${WORKLOAD} ${SHA256.slice(0, 12)}`, code: BROWSER_WGSL });
  const info = await module.getCompilationInfo?.();
  const bindGroupLayout = device.createBindGroupLayout({
    label: `vajra ${WORKLOAD} layout`,
    entries: BUFFERS.map((b) => ({
      binding: b.binding,
      visibility: 0x4 /* GPUShaderStage.COMPUTE */,
      buffer: { type: b.access === "read" ? "read-only-storage" : "storage" } as GPUBufferBindingLayout,
    })),
  });
  const pipelineLayout = device.createPipelineLayout({ bindGroupLayouts: [bindGroupLayout] });
  const error = await device.popErrorScope();
  const errors = (info?.messages ?? []).filter((m) => m.type === "error");
  if (errors.length || error) {
    const text = errors.map((m) => `${m.lineNum}:${m.linePos}: ${m.message}`).join("\\n");
    throw new Error(`vajra ${WORKLOAD}: shader rejected: ${text || error?.message}`);
  }
  const pipeline = await device.createComputePipelineAsync({
    label: `vajra ${WORKLOAD}`,
    layout: pipelineLayout,
    compute: { module, entryPoint: ENTRY_POINT, constants: CONSTANTS as Record<string, number> },
  });
  const bindGroup = (buffers: Buffers): GPUBindGroup => device.createBindGroup({
    layout: bindGroupLayout,
    entries: BUFFERS.map((b) => {
      const buffer = (buffers as unknown as Record<string, GPUBuffer>)[b.name];
      if (!buffer) throw new Error(`vajra ${WORKLOAD}: missing buffer ${b.name}`);
      return { binding: b.binding, resource: { buffer } };
    }),
  });
  const encode = (encoder: GPUCommandEncoder, buffers: Buffers | GPUBindGroup): void => {
    const group = isBindGroup(buffers) ? buffers : bindGroup(buffers);
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(DISPATCH[0], DISPATCH[1], DISPATCH[2]);
    pass.end();
  };
  const dispatchOnce = (buffers: Buffers | GPUBindGroup): void => {
    const encoder = device.createCommandEncoder();
    encode(encoder, buffers);
    device.queue.submit([encoder.finish()]);
  };
  return { device, module, bindGroupLayout, pipelineLayout, pipeline, bindGroup, encode, dispatch: dispatchOnce };
}
"""


def _kernel_cache() -> str:
    """kernelFor() and dispatch(): the pipeline is compiled once per device, not once per call."""
    return """\
function isBindGroup(x: Buffers | GPUBindGroup): x is GPUBindGroup {
  return !BUFFERS.every((b) => b.name in (x as object));
}

const kernels = new WeakMap<GPUDevice, Promise<Kernel>>();

/** The kernel for ``device``, compiled once per device. */
export function kernelFor(device: GPUDevice): Promise<Kernel> {
  let k = kernels.get(device);
  if (!k) {
    k = createKernel(device);
    kernels.set(device, k);
  }
  return k;
}

/** Bind ``buffers`` (layout, pipeline and bind group included), dispatch DISPATCH and submit. */
export async function dispatch(device: GPUDevice, buffers: Buffers): Promise<void> {
  (await kernelFor(device)).dispatch(buffers);
}
"""


def _run_once() -> str:
    """run(): the one-call path (upload, dispatch, read back) for callers who own no buffers."""
    return """\
const ARRAYS: Record<string, new (b: ArrayBuffer) => ArrayBufferView> = {
  f32: Float32Array, f16: Uint16Array, i32: Int32Array, u32: Uint32Array,
};

/** Upload ``inputs``, run the kernel once and read the output back (each output, if several). */
export async function run(device: GPUDevice, inputs: Inputs): Promise<Outputs> {
  const kernel = await kernelFor(device);
  const owned: GPUBuffer[] = [];
  try {
    device.pushErrorScope("validation");
    const buffers: Record<string, GPUBuffer> = {};
    for (const b of BUFFERS) {
      const buffer = device.createBuffer({
        label: `vajra ${b.name}`, size: b.bytes,
        usage: USAGE.STORAGE | USAGE.COPY_DST | USAGE.COPY_SRC,
      });
      owned.push(buffer);
      buffers[b.name] = buffer;
      if (b.access === "read") {
        const data = (inputs as unknown as Record<string, { length: number } & ArrayBufferView>)[b.name];
        if (!data || data.length !== b.elements) {
          throw new Error(`vajra ${WORKLOAD}: input ${b.name} needs ${b.elements} ${b.dtype}, got ${data?.length}`);
        }
        const bytes = new Uint8Array(b.bytes);  // padded to whole words, as writeBuffer wants
        bytes.set(new Uint8Array(data.buffer as ArrayBuffer, data.byteOffset, data.byteLength));
        device.queue.writeBuffer(buffer, 0, bytes);
      }
    }
    const outs = BUFFERS.filter((b) => b.access === "read_write");
    const stagings = outs.map((out) => device.createBuffer({ label: `vajra readback ${out.name}`, size: out.bytes, usage: USAGE.MAP_READ | USAGE.COPY_DST }));
    owned.push(...stagings);
    const encoder = device.createCommandEncoder();
    kernel.encode(encoder, buffers as unknown as Buffers);
    outs.forEach((out, i) => encoder.copyBufferToBuffer(buffers[out.name], 0, stagings[i], 0, out.bytes));
    device.queue.submit([encoder.finish()]);
    const error = await device.popErrorScope();
    if (error) throw new Error(`vajra ${WORKLOAD}: ${error.message}`);
    const results: Record<string, ArrayBufferView> = {};
    for (const [i, out] of outs.entries()) {
      await stagings[i].mapAsync(MAP_READ);
      const all = new ARRAYS[out.dtype](stagings[i].getMappedRange().slice(0)) as unknown as { subarray(a: number, b: number): ArrayBufferView };
      results[out.name] = all.subarray(0, out.elements);
      stagings[i].unmap();
    }
    return (outs.length === 1 ? results[OUTPUT] : results) as unknown as Outputs;
  } finally {
    for (const b of owned) b.destroy();
  }
}
"""

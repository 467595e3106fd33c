"""The fixed part of the ``<workload>.ts`` module: device request, pipeline, dispatch, run().

Nothing here is computed from a recording (only whether the kernel needs shader-f16):
these sections read the constants ts.py writes (BUFFERS, DISPATCH, CONSTANTS, ...).
"""

from __future__ import annotations


def usage_flags() -> str:
    """WebGPU flag values spelled out, for hosts that install no GPUBufferUsage globals."""
    return """\
// Numeric values of the WebGPU flags, so the module also works where the
// GPUBufferUsage / GPUMapMode globals are not installed (e.g. Node before
// Object.assign(globalThis, globals)).
const USAGE = { MAP_READ: 0x0001, COPY_SRC: 0x0004, COPY_DST: 0x0008, UNIFORM: 0x0040, STORAGE: 0x0080 };
const MAP_READ = 0x0001;
"""


def request_device(f16: bool) -> str:
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
  if ({"true" if f16 else "false"}) {{
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


def kernel_interface() -> str:
    """The Kernel type, and the limit check that names requestKernelDevice() when a device falls short."""
    return """\
/** One pass as compiled: its pipeline and the layout of each bind group index. */
export interface KernelPass {
  readonly label: string;
  readonly pipeline: GPUComputePipeline;
  readonly pipelineLayout: GPUPipelineLayout;
  readonly bindGroupLayouts: readonly GPUBindGroupLayout[];
}

/** Bind groups over caller-owned buffers, for every pass and group index (from bind()). */
export interface Bound {
  readonly bindGroups: readonly (readonly GPUBindGroup[])[];
}

export interface Kernel {
  readonly device: GPUDevice;
  /** The result's own module (MODULES[0]); ``modules`` has every one. */
  readonly module: GPUShaderModule;
  readonly modules: readonly GPUShaderModule[];
  /** Group 0's layout, the pipeline layout and the pipeline of the result's own first pass. */
  readonly bindGroupLayout: GPUBindGroupLayout;
  readonly pipelineLayout: GPUPipelineLayout;
  readonly pipeline: GPUComputePipeline;
  readonly passes: readonly KernelPass[];
  /** The uniform buffers, owned by the kernel and filled with UNIFORMS' bytes. */
  readonly uniforms: Readonly<Record<string, GPUBuffer>>;
  /** Bind groups over caller-owned buffers (usage and size as in BUFFERS), every pass's. */
  bind(buffers: Buffers): Bound;
  /** Group 0's bind group of a one-pass, one-group kernel (bind() is the general form). */
  bindGroup(buffers: Buffers): GPUBindGroup;
  /** Record every pass, in order, into ``encoder`` (no submit). */
  encode(encoder: GPUCommandEncoder, buffers: Buffers | Bound | GPUBindGroup): void;
  /** Encode and submit the passes once. An "inout" buffer is read and overwritten. */
  dispatch(buffers: Buffers | Bound | GPUBindGroup): void;
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


def create_kernel() -> str:
    """createKernel(): each module, the uniform buffers, each pass's explicit layouts and pipeline."""
    return """\
/** Compile every module and build each pass's explicit layouts and pipeline. */
export async function createKernel(device: GPUDevice): Promise<Kernel> {
  checkLimits(device);
  const { value: made, error } = await scoped(device, async () => {
    const modules = BROWSER_MODULES.map((code, i) => device.createShaderModule({
      label: `vajra ${WORKLOAD} ${i ? `module ${i}` : SHA256.slice(0, 12)}`, code }));
    const infos = await Promise.all(modules.map((m) => m.getCompilationInfo?.()));
    const uniforms: Record<string, GPUBuffer> = {};
    for (const u of UNIFORMS) {
      const buffer = device.createBuffer({ label: `vajra uniform ${u.name}`, size: u.data.byteLength,
                                           usage: USAGE.UNIFORM | USAGE.COPY_DST });
      device.queue.writeBuffer(buffer, 0, u.data.buffer as ArrayBuffer, u.data.byteOffset, u.data.byteLength);
      uniforms[u.name] = buffer;
    }
    const layouts = PASSES.map((p) => {
      const groups: GPUBindGroupLayout[] = [];
      for (let g = 0; g < GROUPS; g++) {
        groups.push(device.createBindGroupLayout({
          label: `vajra ${WORKLOAD} ${p.label} group ${g}`,
          entries: p.layout.filter(([gg]) => gg === g).map(([, binding, type]) => ({
            binding, visibility: 0x4 /* GPUShaderStage.COMPUTE */, buffer: { type } as GPUBufferBindingLayout,
          })),
        }));
      }
      return { groups, pipelineLayout: device.createPipelineLayout({ bindGroupLayouts: groups }) };
    });
    return { modules, infos, uniforms, layouts };
  });
  const { modules, infos, uniforms, layouts } = made;
  const errors = infos.flatMap((info, i) => (info?.messages ?? []).filter((m) => m.type === "error")
    .map((m) => `${i ? `module ${i} ` : ""}${m.lineNum}:${m.linePos}: ${m.message}`));
  if (errors.length || error) {
    throw new Error(`vajra ${WORKLOAD}: shader rejected: ${errors.join("\\n") || error?.message}`);
  }
  const pipelines = await Promise.all(PASSES.map((p, i) => device.createComputePipelineAsync({
    label: `vajra ${WORKLOAD} ${p.label}`,
    layout: at(layouts, i, "pass").pipelineLayout,
    compute: { module: at(modules, p.module, "module"), entryPoint: p.entry, constants: p.constants as Record<string, number> },
  })));
  const passes: KernelPass[] = PASSES.map((p, i) => ({
    label: p.label, pipeline: at(pipelines, i, "pipeline"), pipelineLayout: at(layouts, i, "pass").pipelineLayout,
    bindGroupLayouts: at(layouts, i, "pass").groups,
  }));
  const resource = (buffers: Record<string, GPUBuffer>, g: number, binding: number,
                    rebind: Readonly<Record<string, string>>): GPUBuffer => {
    const b = BUFFERS.find((x) => x.group === g && x.binding === binding);
    const u = UNIFORMS.find((x) => x.group === g && x.binding === binding);
    const buffer = b ? buffers[rebind[b.name] ?? b.name] : u ? uniforms[u.name] : undefined;
    if (!buffer) throw new Error(`vajra ${WORKLOAD}: missing buffer ${b?.name ?? `@group(${g}) @binding(${binding})`}`);
    return buffer;
  };
  const bind = (buffers: Buffers): Bound => {
    const byName = checkedBuffers(buffers);  // before any GPU call: a missing one is named
    const entries = PASSES.map((p) => p.layout.map(([g, binding]) => ({ g, binding, resource: { buffer: resource(byName, g, binding, p.bind) } })));
    return { bindGroups: PASSES.map((_, i) => at(layouts, i, "pass").groups.map((layout, g) => device.createBindGroup({
      layout, entries: at(entries, i, "pass").filter((e) => e.g === g).map(({ binding, resource }) => ({ binding, resource })),
    }))) };
  };
  const bound = (buffers: Buffers | Bound | GPUBindGroup): Bound => {
    if (isBound(buffers)) return buffers;
    if (!isBindGroup(buffers)) return bind(buffers);
    if (PASSES.length !== 1 || GROUPS !== 1) {
      throw new Error(`vajra ${WORKLOAD}: ${PASSES.length} passes over ${GROUPS} bind groups: pass bind(buffers), not one bind group`);
    }
    return { bindGroups: [[buffers]] };
  };
  const record = (encoder: GPUCommandEncoder, groups: readonly (readonly GPUBindGroup[])[]): void => {
    PASSES.forEach((p, i) => {
      const pass = encoder.beginComputePass({ label: `vajra ${WORKLOAD} ${p.label}` });
      pass.setPipeline(at(pipelines, i, "pipeline"));
      at(groups, i, "pass's bind groups").forEach((group, g) => pass.setBindGroup(g, group));
      pass.dispatchWorkgroups(p.dispatch[0], p.dispatch[1], p.dispatch[2]);
      pass.end();
    });
  };
  const encode = (encoder: GPUCommandEncoder, buffers: Buffers | Bound | GPUBindGroup): void =>
    record(encoder, bound(buffers).bindGroups);
  const dispatchOnce = (buffers: Buffers | Bound | GPUBindGroup): void => {
    const groups = bound(buffers).bindGroups;  // checked before the encoder exists
    const encoder = device.createCommandEncoder();
    record(encoder, groups);
    device.queue.submit([encoder.finish()]);
  };
  const own = Math.max(0, PASSES.findIndex((p) => p.module === 0));
  const ownLayout = at(layouts, own, "pass");
  return {
    device, module: at(modules, 0, "module"), modules, bindGroupLayout: at(ownLayout.groups, 0, "bind group layout"),
    pipelineLayout: ownLayout.pipelineLayout, pipeline: at(pipelines, own, "pipeline"), passes, uniforms, bind,
    bindGroup: (buffers: Buffers) => at(at(bind(buffers).bindGroups, 0, "pass"), 0, "bind group"),
    encode, dispatch: dispatchOnce,
  };
}
"""


def kernel_cache() -> str:
    """kernelFor() and dispatch(): the pipelines are compiled once per device, not once per call."""
    return """\
const kernels = new WeakMap<GPUDevice, Promise<Kernel>>();

/** The kernel for ``device``, compiled once per device (a failed compile is not kept). */
export function kernelFor(device: GPUDevice): Promise<Kernel> {
  let k = kernels.get(device);
  if (!k) {
    k = createKernel(device);
    kernels.set(device, k);
    k.catch(() => kernels.delete(device));
  }
  return k;
}

/** Bind ``buffers`` (layouts, pipelines and bind groups included), run every pass and submit.
 *  An "inout" buffer is read and overwritten in place. */
export async function dispatch(device: GPUDevice, buffers: Buffers): Promise<void> {
  checkedBuffers(buffers);
  (await kernelFor(device)).dispatch(buffers);
}
"""


def run_once() -> str:
    """run(): the one-call path (upload, dispatch, read back) for callers who own no buffers."""
    return """\
const ARRAYS: Readonly<Record<BufferSpec["dtype"], new (b: ArrayBuffer) => ArrayBufferView>> = {
  f32: Float32Array, f16: Uint16Array, i32: Int32Array, u32: Uint32Array,
};

/** Upload ``inputs``, run the kernel once and read the output back (each output, if several).
 *  Fresh buffers start zeroed (outputs that accumulate from zero, scratch); an "inout"
 *  buffer is uploaded from ``inputs`` and read back as an output. Inputs are checked
 *  before any GPU call, and the error scope is popped on every path. */
export async function run(device: GPUDevice, inputs: Inputs): Promise<Outputs> {
  const data = checkedInputs(inputs);
  const kernel = await kernelFor(device);
  const outs = BUFFERS.filter((b) => b.access === "read_write" || b.access === "inout");
  const owned: GPUBuffer[] = [];
  try {
    const { value: stagings, error } = await scoped(device, () => {
      const buffers: Record<string, GPUBuffer> = {};
      for (const b of BUFFERS) {
        const buffer = device.createBuffer({
          label: `vajra ${b.name}`, size: b.bytes, usage: b.usage,
        });
        owned.push(buffer);
        buffers[b.name] = buffer;
        const input = data[b.name];
        if (input) {
          const bytes = new Uint8Array(b.bytes);  // padded to whole words, as writeBuffer wants
          bytes.set(new Uint8Array(input.buffer as ArrayBuffer, input.byteOffset, input.byteLength));
          device.queue.writeBuffer(buffer, 0, bytes);
        }
      }
      const readbacks = outs.map((out) => device.createBuffer({ label: `vajra readback ${out.name}`, size: out.bytes, usage: USAGE.MAP_READ | USAGE.COPY_DST }));
      owned.push(...readbacks);
      const encoder = device.createCommandEncoder();
      kernel.encode(encoder, buffers as unknown as Buffers);
      outs.forEach((out, i) => {
        const from = buffers[out.name];
        if (from) encoder.copyBufferToBuffer(from, 0, at(readbacks, i, "readback buffer"), 0, out.bytes);
      });
      device.queue.submit([encoder.finish()]);
      return readbacks;
    });
    if (error) throw new Error(`vajra ${WORKLOAD}: ${error.message}`);
    const results: Record<string, ArrayBufferView> = {};
    for (const [i, out] of outs.entries()) {
      const staging = at(stagings, i, "readback buffer");
      await staging.mapAsync(MAP_READ);
      const all = new ARRAYS[out.dtype](staging.getMappedRange().slice(0)) as unknown as { subarray(a: number, b: number): ArrayBufferView };
      results[out.name] = all.subarray(0, out.elements);
      staging.unmap();
    }
    return (outs.length === 1 ? results[OUTPUT] : results) as unknown as Outputs;
  } finally {
    for (const b of owned) b.destroy();
  }
}
"""

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
const USAGE = { MAP_READ: 0x0001, COPY_SRC: 0x0004, COPY_DST: 0x0008, STORAGE: 0x0080 };
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


def create_kernel() -> str:
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


def kernel_cache() -> str:
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


def run_once() -> str:
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

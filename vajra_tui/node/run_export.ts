// Run an exported Vajra kernel module (<workload>.ts) under Dawn (the npm `webgpu`
// package) and write its output, to prove the export works outside Vajra.
//
// Usage: npx tsx run_export.ts <module.ts> <manifest.json>
//
// manifest.json (paths relative to the manifest's folder):
//   {"inputs": {"A": "A.bin", "B": "B.bin"}, "output": "C.bin"}
// Inputs are raw little-endian float32; the output is written the same way.
// Without "inputs" the harness fills every input with a deterministic pattern.
// Prints one JSON line ({ok, adapter, workload, sha256, elements, ...}) and
// exits non-zero on any error (2: no adapter, 1: anything else).
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

process.env.EGL_PLATFORM ??= 'surfaceless';

function emit(obj: Record<string, unknown>, code: number): void {
  process.stdout.write(JSON.stringify(obj) + '\n', () => process.exit(code));
}

// run() takes each input as its binding's kind of typed array (it refuses any other).
const KINDS: Record<string, new (b: ArrayBuffer, offset: number, length: number) => ArrayBufferView & { length: number }> =
  { f32: Float32Array, f16: Uint16Array, i32: Int32Array, u32: Uint32Array };

function readBytes(path: string): ArrayBuffer {
  const bytes = readFileSync(path);
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy.buffer;
}

function pattern(n: number, salt: number): Float32Array {
  const out = new Float32Array(n);
  let x = (0x9e3779b9 ^ salt) >>> 0;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    out[i] = (x / 0xffffffff) * 2 - 1;
  }
  return out;
}

async function main(): Promise<void> {
  const [modulePath, manifestPath] = process.argv.slice(2);
  if (!modulePath) throw new Error('usage: run_export.ts <module.ts> [manifest.json]');
  const mod = await import(pathToFileURL(resolve(modulePath)).href);
  for (const name of ['WGSL', 'SHA256', 'BUFFERS', 'INPUTS', 'OUTPUT', 'DISPATCH', 'run', 'createKernel']) {
    if (!(name in mod)) throw new Error(`${modulePath} does not export ${name}`);
  }
  const sha = createHash('sha256').update(mod.WGSL, 'utf8').digest('hex');
  if (sha !== mod.SHA256) throw new Error(`WGSL sha256 ${sha} != exported SHA256 ${mod.SHA256}`);

  const manifest = manifestPath ? JSON.parse(readFileSync(manifestPath, 'utf8')) : {};
  const base = manifestPath ? dirname(resolve(manifestPath)) : process.cwd();
  const inputs: Record<string, ArrayBufferView> = {};
  (mod.INPUTS as string[]).forEach((name, i) => {
    const spec = mod.BUFFERS.find((b: { name: string }) => b.name === name);
    const file = manifest.inputs?.[name];
    const kind = KINDS[spec.dtype] ?? Float32Array;
    const bytes = file ? readBytes(resolve(base, file)) : pattern(spec.elements, i + 1).buffer;
    const width = spec.dtype === 'f16' ? 2 : 4;
    if (bytes.byteLength !== spec.elements * width && !(spec.dtype === 'f16' && !file)) {
      throw new Error(`input ${name}: ${bytes.byteLength / width} elements, the kernel expects ${spec.elements}`);
    }
    inputs[name] = new kind(bytes, 0, spec.elements);
  });

  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  const backend = process.env.VAJRA_DAWN_BACKEND || 'opengles';
  const gpu = create([`backend=${backend}`]);
  let adapter = await gpu.requestAdapter({ featureLevel: 'compatibility' } as GPURequestAdapterOptions);
  if (!adapter) adapter = await gpu.requestAdapter();
  if (!adapter) {
    emit({ ok: false, unavailable: true, error: 'no WebGPU adapter' }, 2);
    return;
  }
  const info = (adapter as { info?: GPUAdapterInfo }).info;
  const adapterName = [info?.vendor, info?.device, info?.description, `dawn backend=${backend}`]
    .filter(Boolean).join(' / ');
  const device: GPUDevice = await mod.requestKernelDevice(adapter);
  let uncaptured = '';
  device.addEventListener?.('uncapturederror', (e: Event) => {
    uncaptured ||= String((e as GPUUncapturedErrorEvent).error?.message ?? e);
  });

  const t0 = performance.now();
  const output: Float32Array = await mod.run(device, inputs);
  const ms = performance.now() - t0;
  await device.queue.onSubmittedWorkDone();
  if (uncaptured) throw new Error(`device error: ${uncaptured}`);
  const spec = mod.BUFFERS.find((b: { name: string }) => b.name === mod.OUTPUT);
  if (output.length !== spec.elements) throw new Error(`output has ${output.length} elements, expected ${spec.elements}`);
  let nonFinite = 0;
  for (const v of output) if (!Number.isFinite(v)) nonFinite++;
  const outFile = manifest.output ? resolve(base, manifest.output) : null;
  if (outFile) writeFileSync(outFile, new Uint8Array(output.buffer, output.byteOffset, output.byteLength));
  device.destroy();
  emit({
    ok: true, adapter: adapterName, workload: mod.WORKLOAD, sha256: sha, dispatch: mod.DISPATCH,
    elements: output.length, non_finite: nonFinite, output: outFile, ms,
  }, 0);
}

main().catch((e) => emit({ ok: false, error: String(e?.stack ?? e) }, 1));

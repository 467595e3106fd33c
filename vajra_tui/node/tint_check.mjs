// Compile one WGSL module with Dawn (the browsers' WebGPU, whose compiler is Tint)
// and print what it says as one JSON line. Naga accepts things Tint rejects
// (uniformity!), so this is the "would a browser take it?" check.
//
// Usage: node tint_check.mjs [file.wgsl]   (reads stdin when no file is given)
// Output: {"ok": bool, "messages": [{line, column, message, type}], "adapter": "..."}
import { readFileSync } from 'node:fs';

process.env.EGL_PLATFORM ??= 'surfaceless';

function emit(obj, code = 0) {
  process.stdout.write(JSON.stringify(obj) + '\n', () => process.exit(code));
}

async function main() {
  const file = process.argv[2];
  const code = file ? readFileSync(file, 'utf8') : readFileSync(0, 'utf8');
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  const backend = process.env.VAJRA_DAWN_BACKEND || 'opengles';
  const gpu = create([`backend=${backend}`]);
  let adapter = await gpu.requestAdapter({ featureLevel: 'compatibility' });
  if (!adapter) adapter = await gpu.requestAdapter();
  if (!adapter) {
    emit({ ok: false, unavailable: true, messages: [], adapter: '', error: 'no WebGPU adapter' }, 2);
    return;
  }
  const info = adapter.info || {};
  const adapterName = [info.vendor, info.device, info.description, `dawn backend=${backend}`]
    .filter(Boolean).join(' / ');
  // Ask for everything the adapter offers: compatibility-mode defaults (e.g. 128
  // invocations per workgroup) are lower than what a real browser device grants.
  const requiredLimits = {};
  for (const key in adapter.limits) {
    const v = adapter.limits[key];
    if (typeof v === 'number') requiredLimits[key] = v;
  }
  // Subgroup kernels need the feature on the device as well as `enable subgroups;`.
  const requiredFeatures = adapter.features.has('subgroups') ? ['subgroups'] : [];
  let device;
  try {
    device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  } catch {
    device = await adapter.requestDevice();
  }
  device.addEventListener?.('uncapturederror', () => {});

  const messages = [];
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  const compInfo = await module.getCompilationInfo();
  for (const m of compInfo.messages) {
    messages.push({ line: m.lineNum, column: m.linePos, message: m.message, type: m.type });
  }
  const moduleErr = await device.popErrorScope();
  let ok = !messages.some((m) => m.type === 'error') && !moduleErr;

  if (ok) {
    device.pushErrorScope('validation');
    try {
      device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    } catch (e) {
      messages.push({ line: 0, column: 0, message: String(e?.message ?? e), type: 'error' });
    }
    const pipeErr = await device.popErrorScope();
    if (pipeErr) {
      messages.push({ line: 0, column: 0, message: pipeErr.message, type: 'error' });
    }
    ok = !messages.some((m) => m.type === 'error');
  } else if (moduleErr && !messages.some((m) => m.type === 'error')) {
    messages.push({ line: 0, column: 0, message: moduleErr.message, type: 'error' });
  }
  device.destroy();
  emit({ ok, messages, adapter: adapterName, subgroups: requiredFeatures.length > 0 });
}

main().catch((e) => emit({ ok: false, unavailable: true, messages: [], adapter: '', error: String(e?.stack ?? e) }, 2));

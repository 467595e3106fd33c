"""The page side of the browser judge: one async function that ``page.evaluate`` runs.

It imports the transpiled export as an ES module and drives it through the module's own
API only (``requestKernelDevice``, ``kernelFor``, ``run``), as a web page would. It
reports the adapter (info, limits, features), the device's features (what the kernel
asked for), every compile message (of the module's WGSL strings and of each ``.wgsl``
file on its own), the outputs (base64, the dtype's raw bytes) and the median of
timestamped dispatches where the adapter has ``timestamp-query``. Verification is not
done here: Python compares the bytes with the float64 reference.
"""

from __future__ import annotations

RUN_EXPORT = r"""
async ({ moduleUrl, inputs, wgslFiles, reps }) => {
  const out = { adapter: null, limits: {}, features: [], used: [], messages: [], files: {}, outputs: {} };
  const ARRAYS = { f32: Float32Array, f16: Uint16Array, i32: Int32Array, u32: Uint32Array };
  const b64 = (v) => {
    const u8 = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    let s = '';
    for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode.apply(null, u8.subarray(i, i + 0x8000));
    return btoa(s);
  };
  const said = (e) => String((e && e.message) || e).split('\n')[0];
  if (!navigator.gpu) return { ...out, unavailable: 'navigator.gpu is undefined (WebGPU is off in this browser)' };
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) return { ...out, unavailable: 'navigator.gpu.requestAdapter() gave no adapter' };
  const info = adapter.info || {};
  out.adapter = { vendor: info.vendor || '', architecture: info.architecture || '', device: info.device || '',
                  description: info.description || '', fallback: !!(info.isFallbackAdapter || adapter.isFallbackAdapter) };
  for (const k in adapter.limits) if (typeof adapter.limits[k] === 'number') out.limits[k] = adapter.limits[k];
  out.features = [...adapter.features].sort();
  let mod;
  try { mod = await import(moduleUrl); } catch (e) { return { ...out, error: `the module does not load: ${said(e)}` }; }
  const extra = adapter.features.has('timestamp-query') ? ['timestamp-query'] : [];
  let device;
  try { device = await mod.requestKernelDevice(adapter, { requiredFeatures: extra }); }
  catch (e) { return { ...out, refused: said(e) }; }
  out.used = [...device.features].filter((f) => !extra.includes(f) && f !== 'core-features-and-limits').sort();
  const uncaptured = [];
  device.addEventListener('uncapturederror', (e) => uncaptured.push(said(e.error)));
  const compile = async (code) => {
    device.pushErrorScope('validation');
    const m = device.createShaderModule({ code });
    const got = await m.getCompilationInfo();
    const scope = await device.popErrorScope();
    const msgs = got.messages.map((x) => ({ type: x.type, line: x.lineNum, column: x.linePos, message: x.message }));
    if (scope && !msgs.some((x) => x.type === 'error')) msgs.push({ type: 'error', line: 0, column: 0, message: said(scope) });
    return msgs;
  };
  const given = {};
  for (const [name, url] of Object.entries(inputs)) {
    const spec = mod.BUFFERS.find((b) => b.name === name);
    given[name] = new ARRAYS[spec.dtype](await (await fetch(url)).arrayBuffer());
  }
  // the messages of each module the kernel builds from, from a fresh copy: a second
  // getCompilationInfo() on a module never resolves in Chromium 156
  const codes = [mod.BROWSER_WGSL || mod.WGSL, ...(mod.MODULES || []).slice(1)];
  for (const [i, code] of codes.entries()) for (const m of await compile(code)) out.messages.push({ module: i, ...m });
  await files();
  let kernel, result;
  try { kernel = await mod.kernelFor(device); } catch (e) { return { ...out, error: said(e) }; }
  try {
    result = await mod.run(device, given);
    await device.queue.onSubmittedWorkDone();
  } catch (e) { return { ...out, error: said(e) }; }
  if (uncaptured.length) return { ...out, error: `device error: ${uncaptured[0]}` };
  const named = ArrayBuffer.isView(result) ? { [mod.OUTPUT]: result } : result;
  for (const [name, view] of Object.entries(named)) {
    const spec = mod.BUFFERS.find((b) => b.name === name);
    out.outputs[name] = { dtype: spec ? spec.dtype : 'f32', data: b64(view) };
  }
  if (device.features.has('timestamp-query') && reps > 0) {
    try { out.times = await timed(mod, device, kernel, given, reps); }
    catch (e) { out.timing_error = said(e); }
  }
  device.destroy();
  return out;

  async function files() {
    for (const name of wgslFiles) {
      try { out.files[name] = await compile(await (await fetch(name)).text()); }
      catch (e) { out.files[name] = [{ type: 'error', line: 0, column: 0, message: said(e) }]; }
    }
  }

  async function timed(mod, device, kernel, given, reps) {
    const buffers = {};
    for (const b of mod.BUFFERS) {
      buffers[b.name] = device.createBuffer({ size: b.bytes, usage: b.usage ?? (0x80 | 0x8 | 0x4) });
      const data = given[b.name];
      if (data) {
        const bytes = new Uint8Array(b.bytes);
        bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
        device.queue.writeBuffer(buffers[b.name], 0, bytes);
      }
    }
    const bound = kernel.bind(buffers);
    const n = kernel.passes.length;
    const qs = device.createQuerySet({ type: 'timestamp', count: 2 * n });
    const resolve = device.createBuffer({ size: 16 * n, usage: 0x200 | 0x4 });
    const read = device.createBuffer({ size: 16 * n, usage: 0x1 | 0x8 });
    const times = [];
    for (let r = 0; r < reps + 1; r++) {
      const enc = device.createCommandEncoder();
      kernel.passes.forEach((p, i) => {
        const pass = enc.beginComputePass({ timestampWrites: { querySet: qs, beginningOfPassWriteIndex: 2 * i,
                                                               endOfPassWriteIndex: 2 * i + 1 } });
        pass.setPipeline(p.pipeline);
        bound.bindGroups[i].forEach((g, k) => pass.setBindGroup(k, g));
        const d = mod.PASSES[i].dispatch;
        pass.dispatchWorkgroups(d[0], d[1], d[2]);
        pass.end();
      });
      enc.resolveQuerySet(qs, 0, 2 * n, resolve, 0);
      enc.copyBufferToBuffer(resolve, 0, read, 0, 16 * n);
      device.queue.submit([enc.finish()]);
      await read.mapAsync(1);
      const t = new BigUint64Array(read.getMappedRange().slice(0));
      read.unmap();
      let ns = 0;
      for (let i = 0; i < n; i++) ns += Number(t[2 * i + 1] - t[2 * i]);
      if (r > 0) times.push(ns / 1e6);  // the first is a warm-up
    }
    return times;
  }
}
"""

__all__ = ["RUN_EXPORT"]

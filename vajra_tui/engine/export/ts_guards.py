"""The checks of ``<workload>.ts`` that run before anything reaches the GPU.

A caller's mistake (a missing buffer, an input of the wrong length) must be reported in
the module's own words, before any GPU call, and must leave the device as it was: no
error scope left pushed (it would swallow every later validation error on that device).
So :func:`guards` writes ``scoped()`` (push, work, pop on every path), the buffer and
input checks, and ``at()``: an index that TypeScript's ``noUncheckedIndexedAccess`` cannot
prove in range, read with an error naming what was missing instead of a non-null assertion.
Nothing here is computed from a recording.
"""

from __future__ import annotations


def guards() -> str:
    """at(), scoped(), checkedBuffers(), checkedInputs(), isBound() and isBindGroup()."""
    return """\
/** ``xs[i]``, or an error naming ``what``: every index used here is in range by construction. */
function at<T>(xs: readonly T[], i: number, what: string): T {
  const x = xs[i];
  if (x === undefined) throw new Error(`vajra ${WORKLOAD}: no ${what} ${i}`);
  return x;
}

/** Run ``work`` inside a validation error scope that is popped on every path: a throw
 *  must not leave a scope pushed, which would swallow the device's later errors. */
async function scoped<T>(device: GPUDevice, work: () => T | Promise<T>): Promise<{ value: T; error: GPUError | null }> {
  device.pushErrorScope("validation");
  let popped = false;
  try {
    const value = await work();
    popped = true;
    return { value, error: await device.popErrorScope() };
  } finally {
    if (!popped) await device.popErrorScope().catch(() => null);
  }
}

/** The caller's buffers by name, once every buffer BUFFERS lists is there. */
function checkedBuffers(buffers: Buffers): Record<string, GPUBuffer> {
  const byName = ((buffers ?? {}) as unknown) as Record<string, GPUBuffer | undefined>;
  for (const b of BUFFERS) {
    if (!byName[b.name]) throw new Error(`vajra ${WORKLOAD}: missing buffer ${b.name}`);
  }
  return byName as Record<string, GPUBuffer>;
}

/** run()'s inputs by name, once each one it uploads is a typed array of its dtype's kind
 * (a Float64Array would be uploaded byte for byte) and of the right length. */
function checkedInputs(inputs: Inputs): Record<string, ArrayBufferView> {
  const byName = ((inputs ?? {}) as unknown) as Record<string, unknown>;
  const checked: Record<string, ArrayBufferView> = {};
  for (const b of BUFFERS) {
    if (b.access !== "read" && b.access !== "inout") continue;
    const data = byName[b.name];
    const length = ArrayBuffer.isView(data) ? (data as unknown as { length?: number }).length : undefined;
    const kind = ARRAYS[b.dtype];
    if (!ArrayBuffer.isView(data) || !(data instanceof kind) || length !== b.elements) {
      throw new Error(`vajra ${WORKLOAD}: input ${b.name} needs ${b.elements} ${b.dtype} (a ${kind.name}), got ` +
        (data === undefined ? "nothing" : ArrayBuffer.isView(data) ? `a ${data.constructor.name} of ${length}`
          : typeof data));
    }
    checked[b.name] = data;
  }
  return checked;
}

function isBound(x: Buffers | Bound | GPUBindGroup): x is Bound {
  return typeof x === "object" && x !== null && Array.isArray((x as Bound).bindGroups);
}

/** A bind group, not a Buffers object (one that lacks a buffer included: bind() names it). */
function isBindGroup(x: Buffers | Bound | GPUBindGroup): x is GPUBindGroup {
  if (typeof x !== "object" || x === null || isBound(x)) return false;
  return !BUFFERS.some((b) => b.name in (x as object)) && "label" in (x as object);
}
"""

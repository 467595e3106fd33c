"""Export a crowned kernel: the exact WGSL, a TypeScript dispatch module and a lockfile.

``<workload>.wgsl`` holds the stitched source byte for byte as it was timed, so
its sha256 is the kernel's identity. ``<workload>.ts`` wraps the same string
with everything a WebGPU application needs to run it: the explicit bind group
layout, the buffer sizes of the exported problem size and the dispatch grid
the engine actually used. ``vajra.lock.json`` records where and how fast the
kernel was measured; lockfiles from several machines merge with
:func:`merge_locks` into one table keyed by kernel sha256.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import __version__
from .atomic import atomic_write
from .events import CandidateResult, DeviceInfo, WorkloadInfo
from .workloads import get_workload

LOCK_NAME = "vajra.lock.json"
LOCK_SCHEMA = "vajra.lock"
LOCK_SCHEMA_VERSION = 1

_TIMING_FIELDS = ("median_ms", "iqr_ms", "p25_ms", "p75_ms", "min_ms", "max_ms")
_DEVICE_FIELDS = ("vendor", "name", "driver", "backend", "adapter_type", "software",
                  "vendor_id", "device_id")


# ---- lock entries --------------------------------------------------------------
def device_key(device: DeviceInfo | dict[str, Any]) -> str:
    """The adapter identity entries are compared by (same form as the calibration cache)."""
    d = device.model_dump() if isinstance(device, DeviceInfo) else device
    return (f"{d.get('name', '')}|{d.get('driver', '')}|{d.get('backend', '')}|"
            f"{int(d.get('vendor_id') or 0):x}:{int(d.get('device_id') or 0):x}")


def size_label(size: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in size.items())


def entry_key(entry: dict[str, Any]) -> str:
    """``device | workload | size | sha256``: one measurement slot in a lockfile."""
    return " / ".join((
        device_key(entry["device"]), entry["workload"]["name"],
        size_label(entry["workload"]["size"]), entry["kernel"]["sha256"],
    ))


def _finite(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _sha256(text: str) -> str:
    return _sha256_bytes(text.encode())


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _checked(result: CandidateResult) -> str:
    """The kernel's sha256; refuses results that cannot be exported faithfully."""
    if result.status != "verified":
        raise ValueError(f"only verified kernels can be exported: {result.name!r} is {result.status}")
    if not result.stitched_source:
        raise ValueError(f"{result.name!r} has no stitched source to export")
    if len(result.grid) != 3 or min(result.grid) < 1:
        raise ValueError(f"{result.name!r} has no dispatch grid (got {result.grid})")
    sha = _sha256(result.stitched_source)
    if result.source_sha256 and result.source_sha256 != sha:
        raise ValueError(f"{result.name!r}: stitched source does not match its sha256 "
                         f"{result.source_sha256[:12]}…")
    return sha


def lock_entry(result: CandidateResult, device: DeviceInfo, workload: WorkloadInfo) -> dict[str, Any]:
    """One lockfile entry: which kernel, on which adapter, how fast, how verified."""
    sha = _checked(result)
    entry: dict[str, Any] = {
        "device": {"key": device_key(device), **{f: getattr(device, f) for f in _DEVICE_FIELDS}},
        "workload": {"name": workload.name, "size": dict(workload.size),
                     "flops": workload.flops, "min_bytes": workload.min_bytes},
        "kernel": {
            "sha256": sha, "name": result.name, "strategy": result.strategy,
            "origin": result.origin, "generation": result.generation,
            "workgroup_size": list(result.workgroup_size), "grid": list(result.grid),
        },
        "timing": {
            **{f: _finite(getattr(result, f)) for f in _TIMING_FIELDS},
            "method": result.timing, "samples": len(result.times_ms),
        },
        "verification": {"status": result.status, "max_rel_error": _finite(result.max_rel_error),
                         "atol": workload.atol, "rtol": workload.rtol},
        "throughput": {"gflops": _finite(result.gflops), "gbps": _finite(result.gbps),
                       "pct_of_roofline": _finite(result.pct_of_roofline),
                       "speedup_vs_baseline": _finite(result.speedup)},
        "tool_version": __version__,
        "exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }
    return {"key": entry_key(entry), **entry}


# ---- lockfiles -----------------------------------------------------------------
def _lock(entries: list[dict[str, Any]], files: dict[str, str] | None = None) -> dict[str, Any]:
    """A lockfile from entries: one per key (the newest wins), plus the kernels index.

    ``files`` (export folders only) maps each exported file name to the sha256
    of the kernel it holds now.
    """
    by_key: dict[str, dict[str, Any]] = {}
    for entry in entries:
        key = entry_key(entry)
        # the device key is derived from the device fields, never trusted as stored
        entry = {"key": key, **{k: v for k, v in entry.items() if k != "key"}}
        entry["device"] = {**entry["device"], "key": device_key(entry["device"])}
        old = by_key.get(key)  # same slot: the newest export wins, a later file on a tie
        if old is None or str(entry.get("exported_at", "")) >= str(old.get("exported_at", "")):
            by_key[key] = entry
    ordered = sorted(by_key.values(), key=lambda e: (
        e["workload"]["name"], size_label(e["workload"]["size"]), e["kernel"]["sha256"],
        e["device"]["key"]))
    kernels: dict[str, dict[str, Any]] = {}
    for e in ordered:
        k = kernels.setdefault(e["kernel"]["sha256"], {
            "workload": e["workload"]["name"], "size": e["workload"]["size"],
            "name": e["kernel"].get("name", ""), "devices": []})
        k["devices"].append({
            "key": e["device"]["key"], "name": e["device"].get("name", ""),
            "backend": e["device"].get("backend", ""), "software": e["device"].get("software", False),
            "median_ms": e["timing"].get("median_ms"), "method": e["timing"].get("method"),
            "status": e["verification"].get("status"),
        })
    for k in kernels.values():
        timed = [d for d in k["devices"] if d["median_ms"] is not None]
        k["fastest"] = min(timed, key=lambda d: d["median_ms"])["key"] if timed else None
    lock = {
        "schema": LOCK_SCHEMA,
        "schema_version": LOCK_SCHEMA_VERSION,
        "tool": "vajra-tui",
        "tool_version": __version__,
    }
    if files is not None:
        lock["files"] = dict(sorted(files.items()))
    return {
        **lock,
        "entries": ordered,
        "kernels": kernels,
    }


def dump_lock(lock: dict[str, Any]) -> str:
    return json.dumps(lock, indent=2, ensure_ascii=False) + "\n"


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return "is not an object"
    for section, fields in (("device", ("name",)), ("workload", ("name", "size")),
                            ("kernel", ("sha256",)), ("timing", ()), ("verification", ())):
        part = entry.get(section)
        if not isinstance(part, dict):
            return f"lacks {section!r}"
        for f in fields:
            if f not in part:
                return f"lacks '{section}.{f}'"
    size = entry["workload"]["size"]
    if not isinstance(size, dict) or not all(isinstance(v, int) for v in size.values()):
        return "has a 'workload.size' that is not an object of integers"
    for f in ("vendor_id", "device_id"):
        if not isinstance(entry["device"].get(f, 0), int):
            return f"has a 'device.{f}' that is not an integer"
    median = entry["timing"].get("median_ms")
    if median is not None and not isinstance(median, (int, float)):
        return "has a 'timing.median_ms' that is not a number"
    if not re.fullmatch(r"[0-9a-f]{64}", str(entry["kernel"]["sha256"])):
        return "has a 'kernel.sha256' that is not a sha256"
    return None


def load_lock(path: Path) -> dict[str, Any]:
    """Read and validate a lockfile; any problem is a one-line ValueError naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(_one_line(f"{path}: cannot read lockfile: {exc}")) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(_one_line(f"{path}: not valid JSON (line {exc.lineno}, column "
                                   f"{exc.colno}: {exc.msg})")) from None
    if not isinstance(data, dict) or data.get("schema") != LOCK_SCHEMA:
        raise ValueError(f"{path}: not a Vajra lockfile (no \"schema\": \"{LOCK_SCHEMA}\")")
    version = data.get("schema_version")
    if not isinstance(version, int) or version < 1:
        raise ValueError(f"{path}: bad schema_version {version!r}")
    if version > LOCK_SCHEMA_VERSION:
        raise ValueError(f"{path}: schema_version {version} is newer than this Vajra reads "
                         f"({LOCK_SCHEMA_VERSION}); upgrade vajra-tui")
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise ValueError(f"{path}: 'entries' is not a list")
    for number, entry in enumerate(entries):
        problem = _entry_problem(entry)
        if problem:
            raise ValueError(_one_line(f"{path}: entry {number} {problem}"))
    return data


def merge_locks(paths: list[Path]) -> dict[str, Any]:
    """Combine lockfiles from several machines into one.

    Entries with the same (device, workload, size, sha256) are one measurement
    slot: the most recently exported one is kept. The same kernel measured on
    different devices keeps one entry per device; ``kernels`` lists, per sha256,
    every device that measured it and the fastest.
    """
    entries: list[dict[str, Any]] = []
    for path in paths:
        entries.extend(load_lock(Path(path))["entries"])
    return _lock(entries)


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
    return json.dumps(value, ensure_ascii=False)


def _comment(text: str) -> str:
    return text.replace("*/", "* /").replace("\n", " ")


def typescript_module(result: CandidateResult, device: DeviceInfo, workload: WorkloadInfo) -> str:
    """The ``<workload>.ts`` dispatch module for one exported kernel."""
    sha = _checked(result)
    wl = get_workload(workload.name)
    size = dict(workload.size)
    lengths = wl.buffer_len(size)
    buffers = [{"binding": b.index, "name": b.name, "access": b.access,
                "elements": int(lengths[b.name]), "bytes": 4 * int(lengths[b.name])}
               for b in wl.bindings]
    output = wl.output.name
    inputs = [b.name for b in wl.inputs]
    wg = (list(result.workgroup_size) + [1, 1, 1])[:3]
    grid = list(result.grid)
    limits = {
        "maxStorageBuffersPerShaderStage": len(buffers),
        "maxStorageBufferBindingSize": max(b["bytes"] for b in buffers),
        "maxBufferSize": max(b["bytes"] for b in buffers),
        "maxComputeInvocationsPerWorkgroup": wg[0] * wg[1] * wg[2],
        "maxComputeWorkgroupSizeX": wg[0],
        "maxComputeWorkgroupSizeY": wg[1],
        "maxComputeWorkgroupSizeZ": wg[2],
        "maxComputeWorkgroupsPerDimension": max(grid),
    }
    label = wl.label(size)
    med = f"{result.median_ms:.4g} ms" if result.median_ms is not None else "untimed"
    input_type = "{ " + "; ".join(f"{n}: Float32Array" for n in inputs) + " }"
    buffer_type = "{ " + "; ".join(f"{b['name']}: GPUBuffer" for b in buffers) + " }"
    buffer_lines = ",\n".join(f"  {_js(b)}" for b in buffers)
    return f"""\
// Generated by Vajra {__version__} (vajra-tui): {workload.name} {label}, kernel {_comment(result.name)!s}.
// Kernel sha256 {sha}: WGSL below is byte-for-byte the source that was verified and timed.
// Measured {med} ({result.timing or 'untimed'}) on {_comment(device.name)} [{_comment(device.backend)}].
// Sizes are baked into the WGSL prelude: this module runs exactly this problem size.
/* eslint-disable */

export const WORKLOAD = {_js(workload.name)};
export const SIZE = {_js(size)} as const;
export const SHA256 = {_js(sha)};
export const ENTRY_POINT = "main";
export const WORKGROUP_SIZE = {_js(wg)} as const;
/** The dispatch the engine used (folded when a grid exceeds 65535 per dimension). */
export const DISPATCH: readonly [number, number, number] = {_js(grid)};

export type Access = "read" | "read_write";
export interface BufferSpec {{
  readonly binding: number;
  readonly name: string;
  readonly access: Access;
  /** f32 elements at the exported size. */
  readonly elements: number;
  readonly bytes: number;
}}

/** Group 0 bindings: inputs are read-only storage, the output is read_write storage. */
export const BUFFERS: readonly BufferSpec[] = [
{buffer_lines},
];
export const INPUTS = {_js(inputs)} as const;
export const OUTPUT = {_js(output)};

export type Inputs = {input_type};
export type Buffers = {buffer_type};

/** Minimum device limits this kernel needs; requestKernelDevice() asks the adapter for them. */
export const REQUIRED_LIMITS: Readonly<Record<string, number>> = {_js(limits)};

export const WGSL: string = {_template_literal(result.stitched_source)};

// Numeric values of the WebGPU flags, so the module also works where the
// GPUBufferUsage / GPUMapMode globals are not installed (e.g. Node before
// Object.assign(globalThis, globals)).
const USAGE = {{ MAP_READ: 0x0001, COPY_SRC: 0x0004, COPY_DST: 0x0008, STORAGE: 0x0080 }};
const MAP_READ = 0x0001;

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
  return adapter.requestDevice({{ ...descriptor, requiredLimits }});
}}

export interface Kernel {{
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
}}

function checkLimits(device: GPUDevice): void {{
  const have = device.limits as unknown as Record<string, number>;
  for (const [name, need] of Object.entries(REQUIRED_LIMITS)) {{
    if (typeof have[name] === "number" && have[name] < need) {{
      throw new Error(`device limit ${{name}} = ${{have[name]}} < ${{need}} needed by this kernel; ` +
        "create the device with requestKernelDevice(adapter)");
    }}
  }}
}}

/** Compile the kernel and build its explicit layout and pipeline. */
export async function createKernel(device: GPUDevice): Promise<Kernel> {{
  checkLimits(device);
  device.pushErrorScope("validation");
  const module = device.createShaderModule({{ label: `vajra ${{WORKLOAD}} ${{SHA256.slice(0, 12)}}`, code: WGSL }});
  const info = await module.getCompilationInfo?.();
  const bindGroupLayout = device.createBindGroupLayout({{
    label: `vajra ${{WORKLOAD}} layout`,
    entries: BUFFERS.map((b) => ({{
      binding: b.binding,
      visibility: 0x4 /* GPUShaderStage.COMPUTE */,
      buffer: {{ type: b.access === "read" ? "read-only-storage" : "storage" }} as GPUBufferBindingLayout,
    }})),
  }});
  const pipelineLayout = device.createPipelineLayout({{ bindGroupLayouts: [bindGroupLayout] }});
  const error = await device.popErrorScope();
  const errors = (info?.messages ?? []).filter((m) => m.type === "error");
  if (errors.length || error) {{
    const text = errors.map((m) => `${{m.lineNum}}:${{m.linePos}}: ${{m.message}}`).join("\\n");
    throw new Error(`vajra ${{WORKLOAD}}: shader rejected: ${{text || error?.message}}`);
  }}
  const pipeline = await device.createComputePipelineAsync({{
    label: `vajra ${{WORKLOAD}}`,
    layout: pipelineLayout,
    compute: {{ module, entryPoint: ENTRY_POINT }},
  }});
  const bindGroup = (buffers: Buffers): GPUBindGroup => device.createBindGroup({{
    layout: bindGroupLayout,
    entries: BUFFERS.map((b) => {{
      const buffer = (buffers as unknown as Record<string, GPUBuffer>)[b.name];
      if (!buffer) throw new Error(`vajra ${{WORKLOAD}}: missing buffer ${{b.name}}`);
      return {{ binding: b.binding, resource: {{ buffer }} }};
    }}),
  }});
  const encode = (encoder: GPUCommandEncoder, buffers: Buffers | GPUBindGroup): void => {{
    const group = isBindGroup(buffers) ? buffers : bindGroup(buffers);
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(DISPATCH[0], DISPATCH[1], DISPATCH[2]);
    pass.end();
  }};
  const dispatchOnce = (buffers: Buffers | GPUBindGroup): void => {{
    const encoder = device.createCommandEncoder();
    encode(encoder, buffers);
    device.queue.submit([encoder.finish()]);
  }};
  return {{ device, module, bindGroupLayout, pipelineLayout, pipeline, bindGroup, encode, dispatch: dispatchOnce }};
}}

function isBindGroup(x: Buffers | GPUBindGroup): x is GPUBindGroup {{
  return !BUFFERS.every((b) => b.name in (x as object));
}}

const kernels = new WeakMap<GPUDevice, Promise<Kernel>>();

/** The kernel for ``device``, compiled once per device. */
export function kernelFor(device: GPUDevice): Promise<Kernel> {{
  let k = kernels.get(device);
  if (!k) {{
    k = createKernel(device);
    kernels.set(device, k);
  }}
  return k;
}}

/** Bind ``buffers`` (layout, pipeline and bind group included), dispatch DISPATCH and submit. */
export async function dispatch(device: GPUDevice, buffers: Buffers): Promise<void> {{
  (await kernelFor(device)).dispatch(buffers);
}}

/** Upload ``inputs``, run the kernel once and read the output back. */
export async function run(device: GPUDevice, inputs: Inputs): Promise<Float32Array> {{
  const kernel = await kernelFor(device);
  const owned: GPUBuffer[] = [];
  try {{
    device.pushErrorScope("validation");
    const buffers: Record<string, GPUBuffer> = {{}};
    for (const b of BUFFERS) {{
      const buffer = device.createBuffer({{
        label: `vajra ${{b.name}}`, size: b.bytes,
        usage: USAGE.STORAGE | USAGE.COPY_DST | USAGE.COPY_SRC,
      }});
      owned.push(buffer);
      buffers[b.name] = buffer;
      if (b.access === "read") {{
        const data = (inputs as unknown as Record<string, Float32Array>)[b.name];
        if (!data || data.length !== b.elements) {{
          throw new Error(`vajra ${{WORKLOAD}}: input ${{b.name}} needs ${{b.elements}} f32, got ${{data?.length}}`);
        }}
        device.queue.writeBuffer(buffer, 0, data.buffer as ArrayBuffer, data.byteOffset, data.byteLength);
      }}
    }}
    const out = BUFFERS.find((b) => b.name === OUTPUT)!;
    const staging = device.createBuffer({{ label: "vajra readback", size: out.bytes, usage: USAGE.MAP_READ | USAGE.COPY_DST }});
    owned.push(staging);
    const encoder = device.createCommandEncoder();
    kernel.encode(encoder, buffers as unknown as Buffers);
    encoder.copyBufferToBuffer(buffers[OUTPUT], 0, staging, 0, out.bytes);
    device.queue.submit([encoder.finish()]);
    const error = await device.popErrorScope();
    if (error) throw new Error(`vajra ${{WORKLOAD}}: ${{error.message}}`);
    await staging.mapAsync(MAP_READ);
    const result = new Float32Array(staging.getMappedRange().slice(0));
    staging.unmap();
    return result;
  }} finally {{
    for (const b of owned) b.destroy();
  }}
}}
"""


# ---- export --------------------------------------------------------------------
def _existing_lock(path: Path, overwrite: bool) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Entries and file map of a lockfile already in ``out_dir``; a foreign file is refused."""
    if not path.exists():
        return [], {}
    try:
        data = load_lock(path)
        files = data.get("files")
        return data["entries"], ({k: str(v) for k, v in files.items()}
                                 if isinstance(files, dict) else {})
    except ValueError:
        if overwrite:
            return [], {}
        raise FileExistsError(f"{path} exists and is not a Vajra lockfile; "
                              "export with overwrite=True to replace it") from None


def export_winner(result: CandidateResult, device: DeviceInfo, workload: WorkloadInfo,
                  out_dir: Path, overwrite: bool = False) -> list[Path]:
    """Write ``<workload>.wgsl``, ``<workload>.ts`` and add the kernel to ``vajra.lock.json``.

    Existing ``.wgsl``/``.ts`` files are refused (FileExistsError naming the
    file, before anything is written) unless ``overwrite``; an existing Vajra
    lockfile is updated in place (the entry for the same device, workload,
    size and kernel is replaced), other entries kept, and its ``files`` map
    says which kernel each exported file now holds.
    """
    out_dir = Path(out_dir)
    entry = lock_entry(result, device, workload)
    wgsl_path = out_dir / f"{workload.name}.wgsl"
    ts_path = out_dir / f"{workload.name}.ts"
    lock_path = out_dir / LOCK_NAME
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"{out_dir} is not a directory")
    if not overwrite:
        for path in (wgsl_path, ts_path):
            if path.exists():
                raise FileExistsError(f"{path} already exists; export with overwrite=True to replace it")
    entries, files = _existing_lock(lock_path, overwrite)
    files.update({wgsl_path.name: entry["kernel"]["sha256"], ts_path.name: entry["kernel"]["sha256"]})
    module = typescript_module(result, device, workload)
    lock = _lock([*entries, entry], files)
    atomic_write(wgsl_path, result.stitched_source)
    if _sha256_bytes(wgsl_path.read_bytes()) != entry["kernel"]["sha256"]:
        raise RuntimeError(f"{wgsl_path}: the written bytes differ from the timed source "
                           "(a non-UTF-8 or newline-translating platform encoding?)")
    atomic_write(ts_path, module)
    atomic_write(lock_path, dump_lock(lock))
    return [wgsl_path, ts_path, lock_path]


__all__ = [
    "LOCK_NAME", "LOCK_SCHEMA_VERSION", "device_key", "dump_lock", "entry_key", "export_winner",
    "load_lock", "lock_entry", "merge_locks", "typescript_module",
]

"""Would this kernel run on any WebGPU device? Judged against the spec's default limits.

An adapter such as lavapipe or a desktop GPU allows far more than WebGPU promises (1024
invocations per workgroup, 32 KiB or more of workgroup storage); a browser that asks for
no more than the defaults (Chrome on SwiftShader allows 256 invocations) refuses a kernel
tuned to those. A tune therefore crowns, by default, only kernels inside the defaults and
the optional features the user asked for (``--limits portable``); the others are still
measured and shown, with the reasons given here.
"""

from __future__ import annotations

from typing import Iterable

from vajra_tui.engine.admission.adapter_fit import binding_bytes
from vajra_tui.engine.admission.contract import Stitched
from vajra_tui.engine.wgsl.consteval import ConstEvalError
from vajra_tui.engine.wgsl.memory import entry_storage, workgroup_memory_problem, workgroup_vars
from vajra_tui.engine.wgsl.tokens import read_workgroup_size, storage_bindings, uses_subgroups
from vajra_tui.engine.workloads import Size, Workload

LIMITS = ("portable", "adapter")

WEBGPU_DEFAULT_LIMITS: dict[str, int] = {
    "maxComputeInvocationsPerWorkgroup": 256,
    "maxComputeWorkgroupSizeX": 256,
    "maxComputeWorkgroupSizeY": 256,
    "maxComputeWorkgroupSizeZ": 64,
    "maxComputeWorkgroupStorageSize": 16384,
    "maxComputeWorkgroupsPerDimension": 65535,
    "maxStorageBufferBindingSize": 134217728,
    "maxBufferSize": 268435456,
    "maxStorageBuffersPerShaderStage": 8,
    "maxUniformBufferBindingSize": 65536,
    "maxBindGroups": 4,
}
"""The limits every WebGPU device has unless more is asked for: the "default" column of the
table in the WebGPU specification, section 3.6.2 "Limits" (https://www.w3.org/TR/webgpu/#limits).
A page that calls ``requestDevice()`` without ``requiredLimits`` gets exactly these."""

# `enable` directives and what a device must have been created with for each.
ENABLE_FEATURES = {"f16": "shader-f16", "subgroups": "subgroups"}


def _axes(wg: tuple[int, int, int]) -> list[str]:
    """Workgroup size per axis and in total, against the defaults."""
    d = WEBGPU_DEFAULT_LIMITS
    out = [f"workgroup size {axis}={n} > {d[f'maxComputeWorkgroupSize{axis}']} (maxComputeWorkgroupSize{axis})"
           for axis, n in zip("XYZ", wg) if n > d[f"maxComputeWorkgroupSize{axis}"]]
    total = wg[0] * wg[1] * wg[2]
    if total > d["maxComputeInvocationsPerWorkgroup"]:
        out.append(f"{total} invocations per workgroup > {d['maxComputeInvocationsPerWorkgroup']} "
                   "(maxComputeInvocationsPerWorkgroup)")
    return out


def _memory(source: str, consts: dict[str, int]) -> list[str]:
    """Workgroup storage over 16 KiB, sized as the contract sizes it (memory.py)."""
    limit = WEBGPU_DEFAULT_LIMITS["maxComputeWorkgroupStorageSize"]
    if workgroup_memory_problem(source, limit, consts) is None:
        return []
    if any(v.bytes is None for v in workgroup_vars(source, consts)):
        return ["workgroup storage cannot be sized, so it cannot be checked against 16384 bytes"]
    total = max(sum(v.bytes or 0 for v in found) for _, found in entry_storage(source, consts))
    return [f"{total} bytes of workgroup storage > {limit} (maxComputeWorkgroupStorageSize)"]


def _grid(dispatch: Iterable[int]) -> list[str]:
    most = WEBGPU_DEFAULT_LIMITS["maxComputeWorkgroupsPerDimension"]
    return [f"grid {axis}={n} workgroups > {most} (maxComputeWorkgroupsPerDimension)"
            for axis, n in zip("xyz", dispatch) if n > most]


def _bindings(source: str) -> list[str]:
    """Storage buffers in the one shader stage, and bind groups used."""
    decls = storage_bindings(source, include_all=True)
    d = WEBGPU_DEFAULT_LIMITS
    out = []
    storage = sum(1 for b in decls if b.address_space == "storage")
    if storage > d["maxStorageBuffersPerShaderStage"]:
        out.append(f"{storage} storage buffers > {d['maxStorageBuffersPerShaderStage']} "
                   "(maxStorageBuffersPerShaderStage)")
    groups = max((b.group for b in decls), default=-1) + 1
    if groups > d["maxBindGroups"]:
        out.append(f"bind group {groups - 1} used; at most {d['maxBindGroups']} groups (maxBindGroups)")
    return out


def _buffers(workload: Workload, size: Size, uniforms: dict[str, bytes]) -> list[str]:
    """Every buffer at this size, and every uniform, against the binding and buffer limits."""
    d = WEBGPU_DEFAULT_LIMITS
    out = []
    for name, n in binding_bytes(workload, size).items():
        for limit in ("maxStorageBufferBindingSize", "maxBufferSize"):
            if n > d[limit]:
                out.append(f"buffer {name!r} of {n} bytes > {d[limit]} ({limit})")
                break
    for name, data in uniforms.items():
        if len(data) > d["maxUniformBufferBindingSize"]:
            out.append(f"uniform {name!r} of {len(data)} bytes > {d['maxUniformBufferBindingSize']} "
                       "(maxUniformBufferBindingSize)")
    return out


def features_used(stitched: Stitched, workload: Workload) -> set[str]:
    """Optional device features the kernel needs: its ``enable``s, subgroup built-ins, f16 bindings."""
    used = {ENABLE_FEATURES[e] for e in stitched.enables if e in ENABLE_FEATURES}
    sources = [stitched.source, *[p.source for p in stitched.passes]]
    if any(uses_subgroups(s) for s in sources):
        used.add("subgroups")
    return used | set(workload.features)


def _int_consts(consts: dict[str, int | float | bool]) -> dict[str, int]:
    return {k: int(v) for k, v in consts.items() if isinstance(v, int) and not isinstance(v, bool)}


def _pass_problems(source: str, entry: str, dispatch: Iterable[int],
                   consts: dict[str, int | float | bool], wg: tuple[int, int, int] | None) -> list[str]:
    """One module's workgroup, storage, grid and bindings."""
    ints = _int_consts(consts)
    if wg is None:
        try:
            wg = read_workgroup_size(source, ints, entry)
        except ConstEvalError as exc:
            return [f"workgroup size of {entry} cannot be read ({exc})"]
    return [*_axes(wg), *_memory(source, ints), *_grid(dispatch), *_bindings(source)]


def portability_problems(stitched: Stitched, workload: Workload, size: Size,
                         features_wanted: Iterable[str] = ()) -> list[str]:
    """Why ``stitched`` would not run on a device with WebGPU's default limits and only the
    features in ``features_wanted`` (plus what the workload itself needs); empty: portable.

    Every pass of a multi-pass result is judged (an export runs them all); a reason that
    two passes share is said once."""
    plans = [(p.source, p.entry, p.dispatch, p.constants, stitched.workgroup_size if p.own and p.entry ==
              stitched.entry else None) for p in stitched.passes] or \
        [(stitched.source, stitched.entry, stitched.dispatch, stitched.constants, stitched.workgroup_size)]
    problems: list[str] = []
    for plan in plans:
        problems.extend(_pass_problems(*plan))
    problems.extend(_buffers(workload, size, stitched.uniforms))
    allowed = set(features_wanted) | set(workload.features)
    problems.extend(f"uses {f}, an optional feature not asked for (--feature {f})"
                    for f in sorted(features_used(stitched, workload) - allowed))
    return list(dict.fromkeys(problems))


__all__ = ["ENABLE_FEATURES", "LIMITS", "WEBGPU_DEFAULT_LIMITS", "features_used", "portability_problems"]

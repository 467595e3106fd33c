"""Templates: a parameter space, a validity check and a WGSL code generator.

A template is one kernel design for one workload (``sgemm/vec4``); a point of
its space (``{"bm": 128, "bn": 128, ...}``) is one concrete kernel. Every
generated kernel follows the engine's contract (prelude constants, the
``vajra_tile`` fold, group-0 bindings) and keeps its barriers in uniform
control flow: the only early return allowed is on ``workgroup_id`` alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from vajra_tui.engine.events import DeviceInfo

Size = dict[str, int]
Params = dict[str, Any]

# What a WebGPU adapter guarantees when it reports nothing (the spec's defaults).
DEFAULT_LIMITS = {
    "max-compute-workgroup-storage-size": 16384,
    "max-compute-invocations-per-workgroup": 256,
    "max-compute-workgroup-size-x": 256,
    "max-compute-workgroup-size-y": 256,
    "max-compute-workgroups-per-dimension": 65535,
}


def limit(device: DeviceInfo | None, name: str) -> int:
    if device is not None and name in device.limits:
        return int(device.limits[name])
    return DEFAULT_LIMITS[name]


def workgroup_fits(device: DeviceInfo | None, wx: int, wy: int = 1) -> str | None:
    """None when an (wx, wy) workgroup is allowed on the adapter, else why not."""
    if wx * wy > limit(device, "max-compute-invocations-per-workgroup"):
        return f"{wx * wy} invocations per workgroup exceed the adapter's limit"
    if wx > limit(device, "max-compute-workgroup-size-x"):
        return f"workgroup x={wx} exceeds the adapter's limit"
    if wy > limit(device, "max-compute-workgroup-size-y"):
        return f"workgroup y={wy} exceeds the adapter's limit"
    return None


def storage_fits(device: DeviceInfo | None, nbytes: int) -> str | None:
    cap = limit(device, "max-compute-workgroup-storage-size")
    return None if nbytes <= cap else f"{nbytes} B of workgroup memory exceed the adapter's {cap} B"


def big_gpu(device: DeviceInfo | None) -> bool:
    """A discrete GPU worth filling with many workgroups (not a CPU rasterizer)."""
    return device is not None and not device.software


def subgroups(device: DeviceInfo | None) -> bool:
    return bool(device is not None and device.subgroups)


def least_subgroup(device: DeviceInfo | None) -> int:
    """The fewest lanes a subgroup of this adapter can have (``DeviceInfo.least_subgroup``), 0
    without subgroups or a device."""
    return device.least_subgroup() if device is not None else 0


def shuffles_fit(device: DeviceInfo | None, lanes: int) -> str | None:
    """None when ``lanes`` neighbouring lanes always share a subgroup here (a butterfly of
    shuffles over them is sound), else why not."""
    if not subgroups(device):
        return "the adapter has no subgroups"
    if least_subgroup(device) < lanes:
        return f"a row's {lanes} lanes may not fit in one subgroup on this adapter"
    return None


@dataclass(frozen=True)
class Template:
    workload: str
    name: str  # "vec4"
    strategy: str  # "A" | "B" | "C": the design family it belongs to
    summary: str
    axes: dict[str, tuple[Any, ...]]  # ordered values of every tunable parameter
    render: Callable[[Params, Size, DeviceInfo | None], str]
    check: Callable[[Params, Size, DeviceInfo | None], str | None]  # None: usable
    general: Callable[[Params], bool] = field(default=lambda p: True)
    # Axes added after configurations were first recorded, with the value that reproduces
    # the kernel such a configuration generated then: an older params dict stays usable.
    late: dict[str, Any] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.workload}/{self.name}"

    def key(self, params: Params) -> str:
        point = self.point(params)
        return self.full_name + " " + " ".join(f"{a}={point[a]}" for a in self.axes)

    def describe(self, params: Params) -> str:
        point = self.point(params)
        return " ".join(f"{a}={point[a]}" for a in self.axes)

    def point(self, params: Params) -> Params:
        """The template's own axes out of a (possibly richer, possibly older) params dict."""
        return {a: params[a] if a in params else self.late[a] for a in self.axes}

    def complete(self, params: Params) -> Params:
        """The params dict a candidate carries: axes, template, key, general."""
        point = self.point(params)
        return {**point, "template": self.full_name, "key": self.key(point),
                "general": bool(self.general(point))}

    def usable(self, params: Params, size: Size, device: DeviceInfo | None) -> bool:
        if any(a not in params and a not in self.late for a in self.axes):
            return False
        point = self.point(params)
        if any(point[a] not in vals for a, vals in self.axes.items()):
            return False
        return self.check(point, size, device) is None


class Emitter:
    """Accumulates WGSL lines with indentation (code generation by Python loops)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, *lines: str) -> None:
        for line in lines:
            self.lines.append(("    " * self.depth + line) if line else "")

    def open(self, line: str) -> None:
        self(line)
        self.depth += 1

    def close(self, line: str = "}") -> None:
        self.depth -= 1
        self(line)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def open_main(e: Emitter, wx: int, wy: int | None = None, extra: str = "") -> None:
    """Open the entry point ``main`` of a (wx) or (wx, wy) workgroup, leaving the emitter inside
    it. ``main`` takes ``wid`` (workgroup_id) and ``lid`` (local_invocation_id); the 2-D form
    also ``li`` (local_invocation_index), then the builtins in ``extra``."""
    ids = "@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>"
    if wy is None:
        e(f"@compute @workgroup_size({wx})")
        e.open(f"fn main({ids}) {{")
    else:
        e(f"@compute @workgroup_size({wx}, {wy})", f"fn main({ids},")
        e.open(f"        @builtin(local_invocation_index) li: u32{extra}) {{")


# The first lines of most kernels: ``t``, this workgroup's tile, and an early return for the
# workgroups past the last tile row (the one early return allowed: on workgroup_id alone).
TILE_GUARD = ("let t = vajra_tile(wid);", "if (t.y >= TILES_Y) {", "    return;", "}")


def f32(x: float) -> str:
    text = repr(float(x))
    return text if ("." in text or "e" in text) else text + ".0"

"""A workload's buffers as its kernels bind them: any group, any binding number, uniforms.

Published kernels bind at ``@group(1)``, leave gaps in their binding numbers, read a
params struct from a uniform buffer, and declare one buffer ``read`` in one pass and
``read_write`` in the next. So a pipeline's layout is taken from the module it is built
from (each declaration's address space and access, at its own group and binding), and
its bind groups are made for that layout from the workload's buffers, once per distinct
layout and uniform contents. Nothing here knows a workload by name.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Sequence

import wgpu

from vajra_tui.engine.wgsl.tokens import storage_bindings
from vajra_tui.engine.workloads.bindings import Binding

Slot = tuple[int, int]  # (group, binding)
KEEP_UNIFORMS = 64  # distinct uniform contents kept (one per params configuration)


@dataclass
class Step:
    """One pass: a pipeline, its grid and the bind group of each group index."""

    pipeline: Any
    grid: tuple[int, int, int]
    groups: list[Any]


@dataclass
class Program:
    """What one result runs: its passes in order."""

    steps: list[Step] = field(default_factory=list)


def module_kinds(source: str) -> dict[Slot, str]:
    """Each declared binding's layout type in this module: ``storage`` (read_write),
    ``read-only-storage`` or ``uniform``; textures and samplers as ``unsupported``."""
    kinds: dict[Slot, str] = {}
    for decl in storage_bindings(source, include_all=True):
        if decl.address_space == "storage":
            kind = "storage" if decl.access == "read_write" else "read-only-storage"
        elif decl.address_space == "uniform":
            kind = "uniform"
        else:
            kind = "unsupported"
        kinds[(decl.group, decl.binding)] = kind
    return kinds


def aliased_slots(bindings: Sequence[Binding], bind: dict[str, str]) -> set[Slot]:
    """Slots a pass leaves unbound: those of buffers another binding takes in this pass."""
    taken = set(bind.values())
    return {b.slot for b in bindings if b.name in taken and b.name not in bind}


_TYPES = {"storage": wgpu.BufferBindingType.storage,
          "read-only-storage": wgpu.BufferBindingType.read_only_storage,
          "uniform": wgpu.BufferBindingType.uniform}


class Resources:
    """The storage buffers of the prepared workload, the uniform buffers, and the layouts
    and bind groups made for the modules that use them."""

    def __init__(self, device: wgpu.GPUDevice) -> None:
        self.device = device
        self.bindings: list[Binding] = []
        self.buffers: dict[str, wgpu.GPUBuffer] = {}
        self._layouts: dict[tuple, tuple[Any, list[Any]]] = {}
        self._groups: dict[tuple, list[Any]] = {}
        self._uniforms: dict[str, wgpu.GPUBuffer] = {}

    def reset(self, bindings: Sequence[Binding], buffers: dict[str, wgpu.GPUBuffer]) -> None:
        """A new workload: its bindings and storage buffers (uniforms come per candidate)."""
        for buf in self._uniforms.values():
            buf.destroy()
        self._uniforms.clear()
        self._layouts.clear()
        self._groups.clear()
        self.bindings, self.buffers = list(bindings), buffers

    def default_kinds(self) -> dict[Slot, str]:
        """Each binding's layout type as the workload declares it."""
        return {b.slot: ("uniform" if not b.is_storage else "storage" if b.writable else "read-only-storage")
                for b in self.bindings}

    def layout(self, source: str, bind: dict[str, str] | None = None) -> tuple[Any, tuple]:
        """The pipeline layout for a module (and its signature, to find its bind groups).

        In a pass that hands a binding another buffer (``bind``), that buffer's own slot
        is left out, unless it is rebound itself: a buffer bound writable twice in one
        dispatch is refused by browsers (writable storage aliasing)."""
        kinds = {**self.default_kinds(), **{s: k for s, k in module_kinds(source).items()
                                            if s in self.default_kinds()}}
        for slot in aliased_slots(self.bindings, bind or {}):
            kinds.pop(slot, None)
        signature = tuple(sorted(kinds.items()))
        known = self._layouts.get(signature)
        if known is None:
            top = max((g for g, _ in kinds), default=0)
            groups = []
            for g in range(top + 1):
                entries = [{"binding": b, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": _TYPES[k]}}
                           for (gg, b), k in sorted(kinds.items()) if gg == g and k in _TYPES]
                groups.append(self.device.create_bind_group_layout(entries=entries))
            known = (self.device.create_pipeline_layout(bind_group_layouts=groups), groups)
            self._layouts[signature] = known
        return known[0], signature

    def groups(self, signature: tuple, uniforms: dict[str, bytes], bind: dict[str, str] | None = None) -> list[Any]:
        """Bind groups for a layout, with this candidate's uniform contents; ``bind`` gives a
        binding another of the workload's buffers for this pass."""
        bind = bind or {}
        digest = hashlib.sha256(b"".join(n.encode() + b"=" + v for n, v in sorted(uniforms.items()))).hexdigest()
        key = (signature, digest, tuple(sorted(bind.items())))
        made = self._groups.get(key)
        if made is not None:
            return made
        _, layouts = self._layouts[signature]
        by_slot = {b.slot: b for b in self.bindings}
        made = []
        for g, layout in enumerate(layouts):
            entries = []
            for (gg, index), _kind in signature:
                if gg != g or (gg, index) not in by_slot:
                    continue
                b = by_slot[(gg, index)]
                buffer = self.buffers[bind.get(b.name, b.name)] if b.is_storage else self._uniform(b.name, uniforms)
                entries.append({"binding": index, "resource": {"buffer": buffer}})
            made.append(self.device.create_bind_group(layout=layout, entries=entries))
        if len(self._groups) > 4 * KEEP_UNIFORMS:
            self._groups.clear()
        self._groups[key] = made
        return made

    def _uniform(self, name: str, uniforms: dict[str, bytes]) -> wgpu.GPUBuffer:
        data = uniforms.get(name)
        if data is None:
            raise ValueError(f"no contents for uniform {name!r}")
        key = name + ":" + hashlib.sha256(data).hexdigest()
        buf = self._uniforms.get(key)
        if buf is None:
            if len(self._uniforms) >= KEEP_UNIFORMS:
                self._uniforms.pop(next(iter(self._uniforms)))  # its bind groups hold a reference
            buf = self.device.create_buffer(size=max(16, -(-len(data) // 16) * 16),
                                            usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
            self.device.queue.write_buffer(buf, 0, data)
            self._uniforms[key] = buf
        return buf

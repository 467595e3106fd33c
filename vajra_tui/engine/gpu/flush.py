"""Cold caches on request: a write of twice the GPU's L2 between timed dispatches.

A 32 MB image fits in an H200's L2 and is timed warm unless something evicts it,
which flatters a kernel against the DRAM roofline. Triton's ``do_bench`` and
KernelBench clear a large buffer between runs; Vajra does the same when asked
(``--cache cold``), outside the timestamps, and records which state it timed.
WebGPU reports no cache sizes, so L2 comes from a table keyed by device name,
else a generous default.
"""

from __future__ import annotations

import wgpu

from vajra_tui.engine.events import DeviceInfo

MIB = 1 << 20
# Last-level GPU cache by device name (substring, lower case), largest match first.
L2_BYTES: tuple[tuple[str, int], ...] = (
    ("h200", 60 * MIB), ("h100", 50 * MIB), ("gh200", 60 * MIB), ("a100", 40 * MIB),
    ("l40", 96 * MIB), ("l4", 48 * MIB), ("rtx 4090", 72 * MIB), ("rtx 4080", 64 * MIB),
    ("rtx 3090", 6 * MIB), ("mi300", 256 * MIB), ("apple m", 32 * MIB),
    ("llvmpipe", 32 * MIB), ("swiftshader", 32 * MIB),  # software: the CPU's last-level cache
)
DEFAULT_L2_BYTES = 256 * MIB


def l2_bytes(device: DeviceInfo) -> int:
    name = device.name.lower()
    for needle, size in L2_BYTES:
        if needle in name:
            return size
    return DEFAULT_L2_BYTES


class CacheFlusher:
    """Owns the scratch buffer; ``record(encoder)`` adds one flush to a command stream."""

    def __init__(self, device: wgpu.GPUDevice, info: DeviceInfo) -> None:
        limit = int(info.limits.get("max-buffer-size", 1 << 30))
        self.size = min(2 * l2_bytes(info), limit) // 4 * 4
        self.buffer = device.create_buffer(size=self.size, usage=wgpu.BufferUsage.COPY_DST)

    def record(self, encoder: wgpu.GPUCommandEncoder) -> None:
        encoder.clear_buffer(self.buffer, 0, self.size)

    def destroy(self) -> None:
        self.buffer.destroy()

"""The float64 references of every seed, held on the GPU for the whole prepared workload.

Each output's reference is uploaded once per seed in ``prepare``, never again when
the loaded seed changes: ``hi`` (f32 of the reference, or the exact integer for
integer outputs) is what the per-dispatch check pass compares with, and, where the
GPU judges verification, ``lo = f32(ref - hi)`` carries the rest, so ``hi + lo`` is
the float64 value to ~2^-48 relative (gpu_verify.py).

Where f32 words cannot carry a reference honestly (a value beyond f32's range, a
non-integer reference for an integer output, a zero tolerance with references
f32 would flush), that output of that seed is judged on the CPU: ``gpu_ok`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import wgpu

from vajra_tui.engine.gpu.outputs import as_words, want_words
from vajra_tui.engine.gpu.verify import output_atol

SMALLEST = 2.0**-100  # tolerances and (with atol = 0) references below this go to the CPU
LARGEST = 2.0**126


@dataclass
class Reference:
    """One output's reference for one seed, on the GPU."""

    hi: wgpu.GPUBuffer
    lo: wgpu.GPUBuffer | None
    gpu_ok: bool


def tolerance_ok(atol: float, rtol: float) -> bool:
    """Tolerances the judge's f32 constants carry without flushing or overflowing."""
    return ((atol == 0 or SMALLEST <= atol <= LARGEST) and (rtol == 0 or rtol >= SMALLEST)
            and (rtol == 0 or atol / rtol <= LARGEST))


def split(ref: np.ndarray, dtype: str, atol: float) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """(hi words, lo words or None, whether the GPU may judge against them)."""
    if dtype in ("i32", "u32"):
        lo_, hi_ = (-2**31, 2**31 - 1) if dtype == "i32" else (0, 2**32 - 1)
        exact = bool(ref.size == 0 or (np.all(np.rint(ref) == ref) and ref.min() >= lo_ and ref.max() <= hi_))
        return want_words(ref, dtype), None, exact
    with np.errstate(over="ignore", invalid="ignore"):
        hi = ref.astype(np.float32)
        lo = (ref - hi).astype(np.float32)
    ok = bool(ref.size == 0 or np.abs(hi).max() <= LARGEST)  # NaN fails this too
    if ok and output_atol(atol, dtype) == 0:  # a zero limit needs every nonzero reference to stay normal in f32
        mags = np.abs(ref)
        ok = not bool(np.any((mags > 0) & (mags < SMALLEST)))
    return hi, lo, ok


class ReferenceStore:
    """hi (and lo) buffers per seed index and output; released together."""

    def __init__(self, device: wgpu.GPUDevice, with_lo: bool) -> None:
        self.device, self.with_lo = device, with_lo
        self.refs: dict[int, dict[str, Reference]] = {}

    def upload(self, index: int, refs: dict[str, np.ndarray], dtypes: dict[str, str], atol: float) -> None:
        """The references of the seed at ``index`` (replacing what that index held)."""
        self.release(index)
        held = {}
        for name, ref in refs.items():
            hi, lo, ok = split(ref, dtypes.get(name, "f32"), atol)
            held[name] = Reference(self._buffer(hi), self._buffer(lo) if self.with_lo and lo is not None
                                   else None, ok)
        self.refs[index] = held

    def _buffer(self, words: np.ndarray) -> wgpu.GPUBuffer:
        data = as_words(words)
        buf = self.device.create_buffer(size=max(4, data.size),
                                        usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST)
        self.device.queue.write_buffer(buf, 0, data)
        return buf

    def hi(self, index: int) -> dict[str, wgpu.GPUBuffer]:
        return {name: r.hi for name, r in self.refs[index].items()}

    def get(self, index: int, name: str) -> Reference:
        return self.refs[index][name]

    def release(self, index: int | None = None) -> None:
        for i in [index] if index is not None else list(self.refs):
            for r in self.refs.pop(i, {}).values():
                r.hi.destroy()
                if r.lo is not None:
                    r.lo.destroy()

"""Verification on the GPU: the CPU judge's verdict without reading the output back.

Reading up to 256 MB back per seed and scanning it in numpy was most of a
candidate's seconds on a real GPU (issue #13). Here two passes per output
(judge_wgsl.py) count, on the device, what the CPU judge counts: elements out of
tolerance, never written (poison), non-finite, with the first index of each, and
list the few elements the host must look at: borderline ones (too close to the
limit for an f32 test to decide) and the candidates for the worst element. The
host reads back 448 bytes per output, decides the listed elements in float64 with
the CPU judge's own formula (verify.measures) and builds the same Verdict
(verify.verdict_of). When a list overflows and the answer would not be exact, it
returns None and the caller judges that output on the CPU: slower, never wrong.

Which judge runs: VAJRA_VERIFY=gpu|cpu|auto (auto: the GPU on hardware adapters,
the CPU on software ones, where "GPU" memory is host memory anyway).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import wgpu

from vajra_tui.engine.gpu.verify import Tally, Verdict, floor_of, measures, output_atol, verdict_of
from vajra_tui.engine.gpu import judge_wgsl as K
from vajra_tui.engine.gpu.references import Reference, tolerance_ok

_NUMPY = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "u32": np.uint32}
_BITS = {"f32": np.uint32, "f16": np.uint16, "i32": np.uint32, "u32": np.uint32}


def judge_path(software: bool, setting: str | None = None) -> str:
    """"gpu" or "cpu": VAJRA_VERIFY (or ``setting``) when it names one, else by adapter.

    "check" runs both on every verification and fails loudly when they disagree.
    """
    value = (setting or os.environ.get("VAJRA_VERIFY", "auto")).strip().lower()
    if value in ("gpu", "cpu", "check"):
        return value
    return "cpu" if software else "gpu"


def disagreement(gpu: dict, cpu: dict) -> str:
    """'' when two verdict dicts agree: every field alike, the largest relative error to
    1e-6 (it is exact unless more than CAP elements nearly tie for it)."""
    for key in sorted(set(gpu) | set(cpu)):
        a, b = gpu.get(key), cpu.get(key)
        if key == "judged_by" or a == b:
            continue
        if key == "max_rel_error" and a is not None and b is not None and abs(a - b) <= 1e-6 * abs(b):
            continue
        return f"{key}: GPU {a!r}, CPU {b!r}"
    return ""


class GPUJudge:
    """The judge pipelines for one prepared workload: per output, ``scan`` and ``collect``."""

    def __init__(self, device: wgpu.GPUDevice, outputs: list[tuple[str, str, int]],
                 atol: float, rtol: float) -> None:
        self.device, self.queue = device, device.queue
        self.items = outputs  # (name, dtype, elements)
        self.atol, self.rtol = atol, rtol
        self.usable = tolerance_ok(atol, rtol)
        ro = {"type": wgpu.BufferBindingType.read_only_storage}
        self.layout = device.create_bind_group_layout(entries=[
            {"binding": b, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": ro} for b in range(3)
        ] + [{"binding": 3, "visibility": wgpu.ShaderStage.COMPUTE,
              "buffer": {"type": wgpu.BufferBindingType.storage}}])
        self.pipes = [self._pipelines(dtype, count) for _, dtype, count in outputs] if self.usable else []
        self.stats = device.create_buffer(size=K.REGION * max(1, len(outputs)), usage=(
            wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC))
        self.dummy = device.create_buffer(size=4, usage=wgpu.BufferUsage.STORAGE)

    def _pipelines(self, dtype: str, count: int) -> tuple[Any, Any, int]:
        atol = output_atol(self.atol, dtype)
        module = self.device.create_shader_module(code=K.judge_source(
            dtype, count, atol, self.rtol, floor_of(atol, self.rtol)))
        layout = self.device.create_pipeline_layout(bind_group_layouts=[self.layout])
        scan, collect = (self.device.create_compute_pipeline(
            layout=layout, compute={"module": module, "entry_point": e}) for e in ("scan", "collect"))
        return scan, collect, max(1, min(-(-count // 256), 8192))

    def can_judge(self, dtype: str, ref: Reference) -> bool:
        """Whether this output's reference is on the GPU in a form the judge is exact with."""
        return self.usable and ref.gpu_ok and (ref.lo is not None or dtype in ("i32", "u32"))

    def destroy(self) -> None:
        self.stats.destroy()
        self.dummy.destroy()

    # ---- one verdict per output -------------------------------------------------
    def judge(self, targets: dict[str, wgpu.GPUBuffer], refs: dict[str, Reference],
              host_refs: dict[str, np.ndarray], poison: dict[str, int]) -> dict[str, Verdict | None]:
        """Each output in ``targets`` (the output buffers or copies of them) judged here;
        None for an output the GPU cannot judge exactly (the caller asks the CPU)."""
        todo = [k for k, (name, dtype, _) in enumerate(self.items)
                if name in targets and self.can_judge(dtype, refs[name])]
        verdicts: dict[str, Verdict | None] = {name: None for name, _, _ in self.items}
        if not todo:
            return verdicts
        self._reset(todo, poison)
        enc = self.device.create_command_encoder()
        for k in todo:
            name = self.items[k][0]
            self._encode(enc, k, targets[name], refs[name])
        self.queue.submit([enc.finish()])
        size = K.REGION * todo[-1] + 4 * K.WORDS
        words = np.frombuffer(self.queue.read_buffer(self.stats, 0, size), np.uint32)
        for k in todo:
            name, dtype, _ = self.items[k]
            head = words[K.REGION // 4 * k: K.REGION // 4 * k + K.WORDS]
            verdicts[name] = resolve(head, host_refs[name], dtype, output_atol(self.atol, dtype), self.rtol,
                                     lambda i, b=targets[name], d=dtype: self.element(b, d, i))
        return verdicts

    def _reset(self, todo: list[int], poison: dict[str, int]) -> None:
        words = np.zeros(K.REGION // 4 * len(self.items), np.uint32).reshape(len(self.items), -1)
        for k in todo:
            name, dtype, _ = self.items[k]
            words[k, [K.FIRST_UNWRITTEN, K.FIRST_NONFINITE, K.R_FIRST]] = 0xFFFFFFFF
            words[k, K.POISON] = poison[name] & 0xFFFF if dtype == "f16" else poison[name]
        self.queue.write_buffer(self.stats, 0, words)

    def _encode(self, enc: wgpu.GPUCommandEncoder, k: int, target: wgpu.GPUBuffer, ref: Reference) -> None:
        scan, collect, groups = self.pipes[k]
        group = self.device.create_bind_group(layout=self.layout, entries=[
            {"binding": 0, "resource": {"buffer": target}},
            {"binding": 1, "resource": {"buffer": ref.hi}},
            {"binding": 2, "resource": {"buffer": ref.lo or self.dummy}},
            {"binding": 3, "resource": {"buffer": self.stats, "offset": K.REGION * k, "size": 4 * K.WORDS}},
        ])
        for pipe in (scan, collect):  # two passes: collect needs scan's maxima
            cp = enc.begin_compute_pass()
            cp.set_pipeline(pipe)
            cp.set_bind_group(0, group)
            cp.dispatch_workgroups(groups, 1, 1)
            cp.end()

    def element(self, buffer: wgpu.GPUBuffer, dtype: str, i: int) -> Any:
        """One element of an output, read back alone (4 bytes) for the verdict's message."""
        per_word = 2 if dtype == "f16" else 1
        word = np.frombuffer(self.queue.read_buffer(buffer, 4 * (i // per_word), 4), np.uint32)
        return word.view(_NUMPY[dtype])[i % per_word]


# ---- the host's part: exact decisions on the listed elements --------------------
def _listed(head: np.ndarray, at: int, n: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """(indices, values as float64) of the first ``n`` (<= CAP) entries of a list."""
    pairs = head[at: at + 2 * min(n, K.CAP)].reshape(-1, 2)
    bits = pairs[:, 1].astype(_BITS[dtype])
    return pairs[:, 0].astype(np.int64), bits.view(_NUMPY[dtype]).astype(np.float64)


def _judged(head: np.ndarray, at: int, n: int, dtype: str, ref: np.ndarray, atol: float,
            rtol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(indices, bad, error over limit, relative error) of a list, in float64."""
    idx, o = _listed(head, at, n, dtype)
    bad, ratio, rel = measures(o, ref[idx], np.isfinite(o), atol, rtol, floor_of(atol, rtol))
    return idx, bad, ratio, rel


def resolve(head: np.ndarray, ref: np.ndarray, dtype: str, atol: float, rtol: float,
            got: Any) -> Verdict | None:
    """The verdict from one output's counters and lists, or None when they cannot be exact."""
    if head[K.BORDER_N] > K.CAP:
        return None
    t = Tally(unwritten=int(head[K.UNWRITTEN]), nonfinite=int(head[K.NONFINITE]))
    t.first_unwritten = int(head[K.FIRST_UNWRITTEN]) if t.unwritten else None
    t.first_nonfinite = int(head[K.FIRST_NONFINITE]) if t.nonfinite else None
    _, bad, _, _ = _judged(head, K.BORDER_LIST, int(head[K.BORDER_N]), dtype, ref, atol, rtol)
    t.bad = int(head[K.SURE_BAD]) + int(np.count_nonzero(bad))
    if t.bad and (t.unwritten or t.nonfinite):  # the worst element is not reported then
        return verdict_of(t, ref, got, "gpu")
    worst = _worst(head, ref, dtype, atol, rtol)
    if worst is None:
        return None
    t.worst_index = worst
    t.max_rel = _max_rel(head, ref, dtype, atol, rtol)
    return verdict_of(t, ref, got, "gpu")


def _worst(head: np.ndarray, ref: np.ndarray, dtype: str, atol: float, rtol: float) -> int | None:
    """numpy's argmax of the error over the limit: the lowest index among the largest."""
    if head[K.MAX_R] == 0:
        return 0  # every element equals its reference (or is non-finite): all errors 0
    n = int(head[K.R_N])
    if n <= K.CAP:
        idx, _, ratio, _ = _judged(head, K.R_LIST, n, dtype, ref, atol, rtol)
        return int(idx[np.lexsort((idx, -ratio))[0]])
    if dtype in ("i32", "u32") and rtol == 0:  # the key is the error itself: exact
        return int(head[K.R_FIRST])
    return None


def _max_rel(head: np.ndarray, ref: np.ndarray, dtype: str, atol: float, rtol: float) -> float:
    """The largest relative error: exact from the list; past CAP near-ties, the GPU's f32
    value (within ~1e-6 relative: a number shown, never a decision)."""
    if head[K.MAX_M] == 0:
        return 0.0
    n = int(head[K.M_N])
    if n <= K.CAP:
        _, _, _, rel = _judged(head, K.M_LIST, n, dtype, ref, atol, rtol)
        return float(np.max(rel))
    return float(np.array(head[K.MAX_M], np.uint32).view(np.float32))

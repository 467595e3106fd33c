"""The outputs of a workload on the GPU: poisoned before every dispatch, checked after it.

A workload may have several outputs, each of ``f32``, ``f16``, ``i32`` or ``u32``.
Before every dispatch each is filled with its poison word (a NaN no arithmetic makes
for floats; for integers a pattern that changes with the seed, see :mod:`..verify`).
After every timed dispatch, outside its timestamps, one check pass per output compares
it with the reference of the loaded seed and counts the wrong elements into a slot:
two counters per output (wrong elements, first wrong one), so the report can say which
output a kernel got wrong and where. Nothing here knows any workload by name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import wgpu

from vajra_tui.engine.gpu.verify import other_fill, output_atol, poison_word

SLOT_BYTES = 256  # dynamic offsets must be multiples of minStorageBufferOffsetAlignment (<= 256)
MAX_OUTPUTS = SLOT_BYTES // 8

# Even words get ``even``, odd words ``odd`` (the same word for the poison and a fill value).
FILL = """
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {{
    let i = g.x + g.y * n.x * 256u;
    if (i < arrayLength(&out)) {{ out[i] = select({even:#x}u, {odd:#x}u, (i & 1u) == 1u); }}
}}
"""

# ``want`` holds the reference as f32 (float outputs) or in the output's own integer type.
CHECK = """
@group(0) @binding(0) var<storage, read> out: array<u32>;
@group(0) @binding(1) var<storage, read> want: array<u32>;
@group(0) @binding(2) var<storage, read_write> bad: array<atomic<u32>, {words}>;
const COUNT: u32 = {count}u;
const ATOL: f32 = {atol};
const RTOL: f32 = {rtol};
const BASE: u32 = {base}u;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {{
    let i = g.x + g.y * n.x * 256u;
    if (i >= COUNT) {{ return; }}
{compare}
    // 1% looser than the host's float64 check: f32 rounding must never fail an honest kernel
    if (!(finite && d <= (ATOL + RTOL * r) * 1.01)) {{
        atomicAdd(&bad[BASE], 1u);
        atomicMin(&bad[BASE + 1u], i);
    }}
}}
"""

COMPARE = {
    "f32": """    let bits = out[i];
    let finite = (bits & 0x7f800000u) != 0x7f800000u;
    let w = bitcast<f32>(want[i]);
    let d = abs(bitcast<f32>(bits) - w);
    let r = abs(w);""",
    "f16": """    let word = out[i / 2u];
    let h = (word >> (16u * (i % 2u))) & 0xffffu;
    let finite = (h & 0x7c00u) != 0x7c00u;
    let w = bitcast<f32>(want[i]);
    let d = abs(unpack2x16float(word)[i % 2u] - w);
    let r = abs(w);""",
    "i32": """    let a = bitcast<i32>(out[i]);
    let b = bitcast<i32>(want[i]);
    let finite = true;
    let d = f32(select(bitcast<u32>(a) - bitcast<u32>(b), bitcast<u32>(b) - bitcast<u32>(a), a < b));
    let r = abs(f32(b));""",  # the distance in u32: |a - b| reaches 2^32 - 1, past i32 (it wrapped negative)
    "u32": """    let a = out[i];
    let b = want[i];
    let finite = true;
    let d = f32(select(a - b, b - a, a < b));
    let r = f32(b);""",
}


def as_words(data: np.ndarray) -> np.ndarray:
    """Array bytes padded to whole words, ready for ``queue.write_buffer``."""
    raw = np.ascontiguousarray(data).view(np.uint8).ravel()
    if raw.size % 4:
        raw = np.concatenate([raw, np.zeros(4 - raw.size % 4, np.uint8)])
    return raw


def want_words(ref: np.ndarray, dtype: str) -> np.ndarray:
    """The reference as the check pass reads it: f32, or the output's integer type."""
    if dtype == "i32":
        return np.clip(np.rint(ref), -2**31, 2**31 - 1).astype(np.int32)
    if dtype == "u32":
        return np.clip(np.rint(ref), 0, 2**32 - 1).astype(np.uint32)
    return ref.astype(np.float32)


@dataclass
class _Output:
    name: str
    dtype: str
    buffer: wgpu.GPUBuffer
    word: int = 0
    fill: tuple | None = None  # (pipeline, bind group, grid)
    want: wgpu.GPUBuffer | None = None
    checker: tuple | None = None  # (pipeline, bind group layout, grid)


class Outputs:
    """Every output buffer of the prepared workload, in binding order."""

    def __init__(self, device: wgpu.GPUDevice, buffers: dict[str, wgpu.GPUBuffer],
                 dtypes: dict[str, str], starts: dict[str, str | float] | None = None,
                 pristine: dict[str, wgpu.GPUBuffer] | None = None,
                 extra: dict[str, wgpu.GPUBuffer] | None = None) -> None:
        """``starts``: per writable buffer, "poison" (the default), "input" (restored from its
        ``pristine`` copy: in-place buffers) or a fill value (outputs that accumulate);
        ``extra``: scratch buffers, started the same way but never judged."""
        if len(buffers) > MAX_OUTPUTS:
            raise ValueError(f"{len(buffers)} outputs: at most {MAX_OUTPUTS} are supported")
        self.device = device
        self.starts = dict(starts or {})
        self.pristine = dict(pristine or {})
        self.items = [_Output(n, dtypes.get(n, "f32"), b) for n, b in buffers.items()]
        self.scratch = [_Output(n, dtypes.get(n, "f32"), b) for n, b in (extra or {}).items()]
        self._modules: dict[tuple[int, int], wgpu.GPUShaderModule] = {}
        # the other fills' passes, made once per output and fill: every verification runs one,
        # and a pipeline made per dispatch would grow the driver's memory (lavapipe keeps its code)
        self._other: dict[tuple[str, str], tuple] = {}
        self.set_seed(0)

    def poisoned(self, name: str) -> bool:
        """Whether this output starts from the poison (so "never written" can be told)."""
        return self.starts.get(name, "poison") == "poison"

    @property
    def names(self) -> list[str]:
        return [o.name for o in self.items]

    @property
    def first(self) -> wgpu.GPUBuffer:
        return self.items[0].buffer

    # ---- poison --------------------------------------------------------------
    def set_seed(self, index: int) -> None:
        """Poison words for the seed at ``index`` (integer outputs change pattern with it)."""
        for o in [*self.items, *self.scratch]:
            start = self.starts.get(o.name, "poison")
            if start == "input":
                continue
            word = poison_word(o.dtype, index) if start == "poison" else fill_word(o.dtype, float(start))
            if o.fill is None or word != o.word:
                o.word, o.fill = word, self._fill(o.buffer, word)

    def _fill(self, out: wgpu.GPUBuffer, word: int | tuple[int, int]) -> tuple:
        """The pass that fills ``out`` with ``word`` (or with (even, odd) words alternating)."""
        even, odd = word if isinstance(word, tuple) else (word, word)
        module = self._modules.get((even, odd))
        if module is None:
            module = self._modules[(even, odd)] = self.device.create_shader_module(
                code=FILL.format(even=even, odd=odd))
        pipe = self.device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
        group = self.device.create_bind_group(
            layout=pipe.get_bind_group_layout(0), entries=[{"binding": 0, "resource": {"buffer": out}}])
        return pipe, group, _grid(out.size // 4)

    def poison(self, enc: wgpu.GPUCommandEncoder, fill: str | None = None) -> None:
        """Start every writable buffer for a run; ``fill`` ("extremes", "zeros"): poisoned
        outputs start from that instead (verify.other_fill: does the kernel read them?)."""
        for o in [*self.items, *self.scratch]:
            if o.name in self.pristine:
                enc.copy_buffer_to_buffer(self.pristine[o.name], 0, o.buffer, 0, o.buffer.size)
                continue
            start = o.fill
            if fill is not None and self.poisoned(o.name) and o in self.items:
                key = (o.name, fill)
                if key not in self._other:
                    self._other[key] = self._fill(o.buffer, other_fill(o.dtype, fill))
                start = self._other[key]
            pipe, group, (gx, gy) = start  # type: ignore[misc]
            cp = enc.begin_compute_pass()
            cp.set_pipeline(pipe)
            cp.set_bind_group(0, group)
            cp.dispatch_workgroups(gx, gy, 1)
            cp.end()

    # ---- checks --------------------------------------------------------------
    def prepare_check(self, counts: dict[str, int], atol: float, rtol: float) -> None:
        """One check pass per output: ``counts[name]`` elements against its reference.

        The reference it reads is bound per seed (``bind_references``): the buffers
        belong to gpu/references.py, which uploads every seed once in ``prepare``.
        """
        words = 2 * len(self.items)
        for k, o in enumerate(self.items):
            count = int(counts[o.name])
            module = self.device.create_shader_module(code=CHECK.format(
                words=words, count=count, atol=f"{output_atol(atol, o.dtype):.9e}", rtol=f"{rtol:.9e}", base=2 * k,
                compare=COMPARE[o.dtype]))
            ro = {"type": wgpu.BufferBindingType.read_only_storage}
            layout = self.device.create_bind_group_layout(entries=[
                {"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": ro},
                {"binding": 1, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": ro},
                {"binding": 2, "visibility": wgpu.ShaderStage.COMPUTE,
                 "buffer": {"type": wgpu.BufferBindingType.storage, "has_dynamic_offset": True}},
            ])
            pipe = self.device.create_compute_pipeline(
                layout=self.device.create_pipeline_layout(bind_group_layouts=[layout]),
                compute={"module": module, "entry_point": "main"})
            o.checker = (pipe, layout, _grid(count))

    def bind_references(self, wants: dict[str, wgpu.GPUBuffer]) -> None:
        """The loaded seed's references (``want_words`` of each output) for the check pass."""
        for o in self.items:
            o.want = wants.get(o.name)

    @property
    def checks(self) -> bool:
        return all(o.checker is not None and o.want is not None for o in self.items)

    def destroy_checks(self) -> None:
        for o in self.items:  # the references are the reference store's to release
            o.want, o.checker = None, None

    def slots(self, count: int) -> wgpu.GPUBuffer:
        return self.device.create_buffer(
            size=SLOT_BYTES * count,
            usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC)

    def reset(self, queue: wgpu.GPUQueue, slots: wgpu.GPUBuffer) -> None:
        words = np.zeros(slots.size // 4, np.uint32).reshape(-1, SLOT_BYTES // 4)
        words[:, 1:2 * len(self.items):2] = 0xFFFFFFFF  # "first wrong element": none yet
        queue.write_buffer(slots, 0, words)

    def groups(self, slots: wgpu.GPUBuffer) -> list[wgpu.GPUBindGroup]:
        return [self.device.create_bind_group(layout=o.checker[1], entries=[  # type: ignore[index]
            {"binding": 0, "resource": {"buffer": o.buffer}},
            {"binding": 1, "resource": {"buffer": o.want}},
            {"binding": 2, "resource": {"buffer": slots, "offset": 0, "size": 8 * len(self.items)}},
        ]) for o in self.items]

    def check(self, enc: wgpu.GPUCommandEncoder, groups: list[wgpu.GPUBindGroup], slot: int) -> None:
        for o, group in zip(self.items, groups):
            pipe, _, (gx, gy) = o.checker  # type: ignore[misc]
            cp = enc.begin_compute_pass()
            cp.set_pipeline(pipe)
            cp.set_bind_group(0, group, [slot * SLOT_BYTES])
            cp.dispatch_workgroups(gx, gy, 1)
            cp.end()

    def read(self, queue: wgpu.GPUQueue, slots: wgpu.GPUBuffer) -> list[tuple[int, int, int]]:
        """Per slot: (wrong elements over all outputs, first wrong one, which output it is in)."""
        words = np.frombuffer(queue.read_buffer(slots), np.uint32).reshape(-1, SLOT_BYTES // 4)
        out = []
        for row in words:
            counts = [(int(row[2 * k]), int(row[2 * k + 1]), k) for k in range(len(self.items))]
            wrong = [c for c in counts if c[0]]
            first = wrong[0] if wrong else (0, 0xFFFFFFFF, 0)
            out.append((sum(c[0] for c in counts), first[1], first[2]))
        return out

    def read_output(self, queue: wgpu.GPUQueue, buffer: wgpu.GPUBuffer, dtype: str,
                    count: int | None = None) -> np.ndarray:
        """An output (or a snapshot of one) as its own dtype."""
        data = np.frombuffer(queue.read_buffer(buffer), dtype=_NUMPY[dtype])
        return data[:count] if count is not None else data


_NUMPY = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "u32": np.uint32}


def fill_word(dtype: str, value: float) -> int:
    """The 32-bit word that fills a buffer of ``dtype`` elements with ``value``."""
    if dtype == "f16":
        half = int(np.array(value, np.float16).view(np.uint16))
        return half << 16 | half
    if dtype in ("i32", "u32"):
        return int(np.array(int(value)).astype(np.int64).astype(np.uint32))
    return int(np.array(value, np.float32).view(np.uint32))


def _grid(items: int) -> tuple[int, int]:
    groups = max(1, -(-items // 256))
    gx = min(groups, 65535)
    return gx, -(-groups // gx)

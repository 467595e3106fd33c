"""The GPU side of the engine: adapter, buffers, pipelines, dispatch and timing.

It runs only inside the worker process, so a hung kernel can be killed with it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import wgpu

# device_info lives below adapters.py, whose listing child uses it too; callers import it from here
from vajra_tui.engine.gpu.adapter_info import device_info
from vajra_tui.engine.gpu.adapters import pick
from vajra_tui.engine.gpu.flush import CacheFlusher
from vajra_tui.engine.wgsl.tokens import pipeline_constants
from vajra_tui.engine.workloads.base import padded
from vajra_tui.engine.gpu.outputs import Outputs, as_words
from vajra_tui.engine.gpu.resources import Program, Resources, Step
from vajra_tui.engine.workloads.bindings import Binding
from vajra_tui.engine.workloads.uniforms import MAX_UNIFORM_BYTES

# Poisoning before, and checking after, every dispatch live in outputs.py: per output and dtype.
# Requested whenever the adapter offers them: the prompt advertises exactly these to a model.
KERNEL_FEATURES = ("timestamp-query", "subgroup", "shader-f16")


@dataclass
class Timing:
    wall_ms: float
    ts_ms: float | None
    bad: tuple[int, int, int] | None = None  # (wrong elements, first wrong, its output) when checked
    pass_ms: list[float] | None = None  # each pass's device time (timestamps)


@dataclass
class StreamTiming:
    """Device times per entry (in round order), the wall clock of the whole stream, snapshots."""

    ts_ms: list[list[float]]
    wall_ms: float
    snapshots: list[list[wgpu.GPUBuffer]]  # per entry: a copy of each output after its last dispatch
    bad: list[list[tuple[int, int, int]]] | None = None  # per entry, per timed dispatch (when checked)
    pass_ms: list[list[list[float]]] | None = None  # per entry, per round, per pass (multi-pass only)


class Runtime:
    """One device with the workload's buffers bound through an explicit layout."""

    def __init__(self, prefer: str | int | None = None) -> None:
        self.index, self.adapter = pick(prefer)
        wanted = [f for f in KERNEL_FEATURES if f in self.adapter.features]
        limits = {k: self.adapter.limits[k] for k in self.adapter.limits}
        self.device = self.adapter.request_device_sync(
            required_features=wanted, required_limits=limits
        )
        self.info = device_info(self.adapter, wanted, self.index)
        self.queue = self.device.queue
        self.timestamps = "timestamp-query" in wanted
        self.period = _timestamp_period(self.queue) if self.timestamps else 1.0
        self.buffers: dict[str, wgpu.GPUBuffer] = {}
        self.flusher: CacheFlusher | None = None  # set for --cache cold
        self.pristine: dict[str, wgpu.GPUBuffer] = {}  # inout buffers' inputs, restored per dispatch
        self.resources = Resources(self.device)
        self.outs: Outputs | None = None  # poison and per-dispatch checks of every output
        self.dtypes: dict[str, str] = {}
        self._one_slot: wgpu.GPUBuffer | None = None
        if self.timestamps:
            self.query_set = self.device.create_query_set(type="timestamp", count=2)
            self.resolve = self.device.create_buffer(
                size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
            )

    # ---- buffers -------------------------------------------------------------
    def release_buffers(self) -> None:
        """The workload's storage buffers and output checks destroyed (a new one, or none)."""
        for old in [*self.buffers.values(), *self.pristine.values()]:
            old.destroy()
        self.buffers.clear()
        self.pristine.clear()
        if self.outs is not None:
            self.outs.destroy_checks()
            self.outs = None

    def allocate(self, bindings: Sequence[Binding], lengths: dict[str, int]) -> None:
        """Create one storage buffer per storage binding (the previous ones released).

        Each binding keeps its own group and number (gaps and ``@group(1)`` included);
        layouts come per module (gpu/resources.py). f16 buffers hold two elements per
        word, integer outputs are poisoned per seed, an ``inout`` buffer is restored from
        a copy of its input before every dispatch and a ``fill`` output starts from its value.
        """
        self.release_buffers()
        storage = [b for b in bindings if b.is_storage]
        self.dtypes = {b.name: b.dtype for b in storage}
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
        for b in storage:
            nbytes = padded(b.width * lengths[b.name])
            # a kernel may read a small input as var<uniform> (admission/resources.py)
            extra = wgpu.BufferUsage.UNIFORM if b.access == "read" and nbytes <= MAX_UNIFORM_BYTES else 0
            self.buffers[b.name] = self.device.create_buffer(size=nbytes, usage=usage | extra)
            if b.access == "inout":
                self.pristine[b.name] = self.device.create_buffer(size=self.buffers[b.name].size, usage=usage)
        self.resources.reset(bindings, self.buffers)
        self._output = next(b.name for b in storage if b.is_output)
        self.outs = Outputs(self.device, {b.name: self.buffers[b.name] for b in storage if b.is_output},
                            self.dtypes, starts={b.name: _start_of(b) for b in storage if b.writable},
                            pristine=self.pristine, extra={b.name: self.buffers[b.name] for b in storage
                                                           if b.access == "scratch"})

    def upload(self, arrays: dict[str, np.ndarray]) -> None:
        """Inputs as given (each already of its binding's dtype), padded to whole words; an
        in-place buffer's input goes to its pristine copy, restored before every dispatch."""
        for name, data in arrays.items():
            self.queue.write_buffer(self.pristine.get(name, self.buffers[name]), 0, as_words(data))

    def set_seed(self, index: int) -> None:
        """Integer outputs are poisoned with another pattern on each seed."""
        if self.outs is not None:
            self.outs.set_seed(index)

    # ---- pipelines -----------------------------------------------------------
    def compile(self, source: str, constants: dict[str, float] | None = None,
                entry: str = "main", bind: dict[str, str] | None = None) -> wgpu.GPUComputePipeline:
        """Raises the wgpu error (with Naga's located message) when the source is bad.

        ``constants`` set the kernel's ``override`` declarations (pipeline constants);
        the layout is the one this module's declarations ask for.
        """
        module = self.device.create_shader_module(code=source)
        stage: dict = {"module": module, "entry_point": entry}
        if constants:
            stage["constants"] = pipeline_constants(source, {k: float(v) for k, v in constants.items()})
        layout, _ = self.resources.layout(source, bind)
        return self.device.create_compute_pipeline(layout=layout, compute=stage)

    def program(self, passes: Sequence[tuple[Any, str, Sequence[int], dict[str, str]]],
                uniforms: dict[str, bytes]) -> Program:
        """A result's passes, each (pipeline, its module's source, grid, rebound buffers), bound
        for running."""
        steps = []
        for pipeline, source, grid, bind in passes:
            _, signature = self.resources.layout(source, bind)
            groups = self.resources.groups(signature, uniforms, bind)
            steps.append(Step(pipeline, tuple(grid), groups))  # type: ignore[arg-type]
        return Program(steps)

    # ---- checking every dispatch -----------------------------------------------
    def prepare_check(self, counts: dict[str, int], atol: float, rtol: float) -> None:
        """The checkers for this workload and size: per output, ``counts[name]`` elements."""
        assert self.outs is not None
        self.outs.prepare_check(counts, atol, rtol)
        if self._one_slot is None:
            self._one_slot = self.outs.slots(1)

    def bind_references(self, wants: dict[str, wgpu.GPUBuffer]) -> None:
        """The loaded seed's references for the check pass (gpu/references.py owns them)."""
        if self.outs is not None:
            self.outs.bind_references(wants)

    @property
    def checks(self) -> bool:
        return self.outs is not None and self.outs.checks

    # ---- dispatch ------------------------------------------------------------
    def wait(self) -> None:
        """Block until the queue is idle (wgpu-native's blocking device poll).

        The blocking poll gives up after a while (about 30 s on lavapipe) with the work still
        running, and says so only in its result: a hung kernel under ``--deadline 60`` was
        then read back as if it had finished ("never written", rejected, not timed out). It
        is polled again until the queue is empty; the parent's watchdog ends a kernel that
        never finishes, as it does below 30 s."""
        poll = _device_poll(self.device)
        if poll is not None:
            while not poll():
                pass
            return
        legacy = getattr(self.device, "_poll_wait", None)
        if legacy is not None:
            legacy()
        else:  # another backend: a buffer read cannot finish before earlier work
            self.queue.read_buffer(self.resolve if self.timestamps else self.buffers[self._output], 0, 4)

    def poison_output(self, fill: str | None = None) -> None:
        """Start every output as its binding says (poison, fill, or its input) so an
        unwritten element can never pass; ``fill`` ("extremes", "zeros"): poisoned outputs
        start from that instead (verify.other_fill: a kernel that reads its output is caught)."""
        enc = self.device.create_command_encoder()
        self._poison_pass(enc, fill)
        self.queue.submit([enc.finish()])

    def dispatch(self, target: "Program | wgpu.GPUComputePipeline", grid: tuple[int, int, int] | None = None,
                 group: wgpu.GPUBindGroup | None = None, check: bool = False,
                 fill: str | None = None) -> Timing:
        """Poison (workload programs only), then one timed run; waits for the GPU.

        ``target`` is a workload's Program (its passes; ``grid`` overrides the first pass's
        grid, for coverage probes) or a bare pipeline with its ``group`` (calibration).
        ``check``: the outputs are then checked on the GPU against the reference, after the
        clock stopped, and ``Timing.bad`` says how many elements were wrong.
        """
        program = target if isinstance(target, Program) else Program([Step(target, grid or (1, 1, 1), [group])])
        if isinstance(target, Program) and grid is not None:
            first = program.steps[0]
            program = Program([Step(first.pipeline, tuple(grid), first.groups), *program.steps[1:]])  # type: ignore[arg-type]
        workload = isinstance(target, Program)
        if workload:
            self.poison_output(fill)
            if self.flusher is not None:
                flush = self.device.create_command_encoder()
                self.flusher.record(flush)
                self.queue.submit([flush.finish()])
            self.wait()
        count = len(program.steps)
        queries = self._queries(count)
        enc = self.device.create_command_encoder()
        self._run(enc, program, queries, 0)
        if queries is not None:
            enc.resolve_query_set(queries[0], 0, 2 * count, queries[1], 0)
        command = enc.finish()
        start = time.perf_counter()
        self.queue.submit([command])
        self.wait()
        wall = (time.perf_counter() - start) * 1e3
        ts, passes = None, None
        if queries is not None:
            spans = self._spans(queries[1], 2 * count)
            ts, passes = program_ms(spans), [e - b for b, e in spans]
            queries[0].destroy()
            queries[1].destroy()
        bad = None
        if check and workload and self.checks and self._one_slot is not None:
            assert self.outs is not None
            self.outs.reset(self.queue, self._one_slot)
            enc = self.device.create_command_encoder()
            self.outs.check(enc, self.outs.groups(self._one_slot), 0)
            self.queue.submit([enc.finish()])
            bad = self.outs.read(self.queue, self._one_slot)[0]
        return Timing(wall_ms=wall, ts_ms=ts, bad=bad, pass_ms=passes)

    def _queries(self, count: int) -> tuple[Any, Any] | None:
        if not self.timestamps:
            return None
        queries = self.device.create_query_set(type="timestamp", count=2 * count)
        resolve = self.device.create_buffer(size=16 * count,
                                            usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        return queries, resolve

    def _spans(self, resolve: wgpu.GPUBuffer, count: int) -> list[tuple[float, float]]:
        """(begin, end) milliseconds of each pass from a resolved run of timestamp pairs."""
        stamps = np.frombuffer(self.queue.read_buffer(resolve), dtype=np.uint64).astype(np.int64)[:count]
        ms = (stamps - stamps.min()).astype(np.float64) * self.period / 1e6 if count else stamps
        return [(float(b), max(float(e), float(b))) for b, e in zip(ms[0::2], ms[1::2])]

    def _run(self, enc, program: Program, queries: tuple[Any, Any] | None, first: int) -> None:
        """Record a program's passes; with ``queries``, each pass writes its begin and end
        timestamps from index ``first`` on (two per pass)."""
        for k, step in enumerate(program.steps):
            writes = None
            if queries is not None:
                writes = {"query_set": queries[0], "beginning_of_pass_write_index": first + 2 * k,
                          "end_of_pass_write_index": first + 2 * k + 1}
            cp = enc.begin_compute_pass(timestamp_writes=writes)
            cp.set_pipeline(step.pipeline)
            for index, group in enumerate(step.groups):
                cp.set_bind_group(index, group)
            cp.dispatch_workgroups(*step.grid)
            cp.end()

    def _poison_pass(self, enc, fill: str | None = None) -> None:
        assert self.outs is not None
        self.outs.poison(enc, fill)

    def set_cache_state(self, state: str) -> None:
        """"cold": flush the GPU's caches before every dispatch, outside its timestamps."""
        if state == "cold" and self.flusher is None:
            self.flusher = CacheFlusher(self.device, self.info)
        elif state != "cold" and self.flusher is not None:
            self.flusher.destroy()
            self.flusher = None

    def _flush(self, enc) -> None:
        if self.flusher is not None:
            self.flusher.record(enc)

    def spin(self, entries: list[Program], copies: int) -> None:
        """Every program ``copies`` times in one submission, untimed and unchecked, and wait:
        work that brings an idled clock up before a batch (the batch poisons and restores
        every output and in-place buffer before each of its own runs)."""
        enc = self.device.create_command_encoder()
        for _ in range(copies):
            for program in entries:
                self._run(enc, program, None, 0)
        self.queue.submit([enc.finish()])
        self.wait()

    def time_stream(self, entries: list[Program], warmup: int, reps: int) -> StreamTiming:
        """Warm-ups and rotating timed rounds for several kernels in ONE submission.

        A GPU left idle between dispatches (while the host waits, reads back and
        loops) lowers its clocks within a few hundred milliseconds, which once made
        kernels look 3-6x slower than they are. Back to back, it stays at speed.
        Each run still follows its own NaN poisoning; every timed run is checked on
        the GPU right after it (outside its timestamps), and the outputs of every
        entry's last timed run are copied aside so they can be verified in full. A
        program of several passes is timed pass by pass; its time runs from its first pass's
        begin to its last pass's end (``program_ms``).
        """
        n = len(entries)
        assert self.outs is not None
        slots = self.outs.slots(n * reps) if self.checks else None
        group = None
        if slots is not None:
            self.outs.reset(self.queue, slots)
            group = self.outs.groups(slots)
        starts, total = [], 0
        for program in entries:
            starts.append(total)
            total += len(program.steps)
        width = 2 * total  # timestamps per round
        queries = self.device.create_query_set(type="timestamp", count=width * reps)
        resolve = self.device.create_buffer(
            size=8 * width * reps, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        outs = [self.buffers[name] for name in self.outs.names]
        snapshots = [[self.device.create_buffer(  # STORAGE: the GPU judge reads them where they are
            size=out.size, usage=wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
            | wgpu.BufferUsage.STORAGE) for out in outs]
            for _ in entries]
        enc = self.device.create_command_encoder()
        for program in entries:
            for _ in range(warmup):
                self._poison_pass(enc)
                self._flush(enc)
                self._run(enc, program, None, 0)
        owned: list[list[int]] = [[] for _ in entries]
        slot = -1
        for rnd in range(reps):
            for e in [(i + rnd) % n for i in range(n)]:
                slot += 1
                owned[e].append(slot)
                self._poison_pass(enc)
                self._flush(enc)
                self._run(enc, entries[e], (queries, resolve), rnd * width + 2 * starts[e])
                if group is not None:
                    self.outs.check(enc, group, slot)
                if rnd == reps - 1:
                    for out, snap in zip(outs, snapshots[e]):
                        enc.copy_buffer_to_buffer(out, 0, snap, 0, out.size)
        enc.resolve_query_set(queries, 0, width * reps, resolve, 0)
        command = enc.finish()
        start = time.perf_counter()
        self.queue.submit([command])
        self.wait()
        wall = (time.perf_counter() - start) * 1e3
        spans = self._spans(resolve, width * reps)
        queries.destroy()
        resolve.destroy()
        bad = None
        if slots is not None:
            counts = self.outs.read(self.queue, slots)
            bad = [[counts[s] for s in ss] for ss in owned]
            slots.destroy()
        runs = [[spans[rnd * total + starts[e]: rnd * total + starts[e] + len(entries[e].steps)]
                 for rnd in range(reps)] for e in range(n)]
        per_pass = [[[end - begin for begin, end in run] for run in entry] for entry in runs]
        return StreamTiming([[program_ms(run) for run in entry] for entry in runs], wall, snapshots, bad,
                            per_pass if any(len(p.steps) > 1 for p in entries) else None)

    def read(self, buffer: wgpu.GPUBuffer, dtype: str = "f32") -> np.ndarray:
        return np.frombuffer(self.queue.read_buffer(buffer), dtype={
            "f32": np.float32, "f16": np.float16, "i32": np.int32, "u32": np.uint32}[dtype])


def _device_poll(device: Any) -> Callable[[], bool] | None:
    """wgpu-native's ``wgpuDevicePoll(device, wait=true)``, which returns whether the queue is
    empty; None where this wgpu has no such call (the caller falls back to ``_poll_wait``)."""
    try:
        from wgpu.backends.wgpu_native._api import ffi, libf  # the call _poll_wait makes, with its result
    except ImportError:
        return None
    internal = getattr(device, "_internal", None)
    if internal is None or not hasattr(libf, "wgpuDevicePoll"):
        return None
    return lambda: bool(libf.wgpuDevicePoll(internal, True, ffi.NULL))


def program_ms(spans: list[tuple[float, float]]) -> float:
    """A program's milliseconds from its passes' (begin, end): its first begin to its last end,
    so the gaps between dispatches count, as they do in a browser and in torch's CUDA events
    (the sum of the passes' own spans left them out). Never under that sum, should a driver
    stamp passes out of order."""
    own = sum(e - b for b, e in spans)
    return max(spans[-1][1] - spans[0][0], own) if len(spans) > 1 else own


def _timestamp_period(queue: wgpu.GPUQueue) -> float:
    """Nanoseconds per timestamp tick (1.0 on most drivers, not all)."""
    try:
        from wgpu.backends.wgpu_native._ffi import lib

        period = float(lib.wgpuQueueGetTimestampPeriod(queue._internal))
        return period if period > 0 else 1.0
    except Exception:  # an older wgpu-native without the extension
        return 1.0


def _start_of(b: Binding) -> str | float:
    """How a writable buffer starts each run: "poison", "input" (inout) or its fill value."""
    if b.access == "inout":
        return "input"
    return "poison" if b.fill is None else float(b.fill)

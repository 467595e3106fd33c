"""The worker process: owns the adapter and answers one request at a time.

The parent (client.py) enforces deadlines by killing this process; nothing
here needs to defend against hangs, only against errors, which it reports. A parent that
dies without ending it (kill -9, an SSH session's hangup) cannot: so the worker ends itself
once it has been orphaned, even in the middle of a kernel that never returns.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import signal
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Any, Callable

import numpy as np

from vajra_tui.engine.gpu.verify import combine, compare, poison_word
from vajra_tui.engine.workloads import get_workload
from vajra_tui.engine.gpu.calibrate import calibrate as roofline, quick_copy_gbps
from vajra_tui.engine.gpu.clock import Clock as _Clock
from vajra_tui.engine.gpu.gpu_verify import GPUJudge, disagreement, judge_path
from vajra_tui.engine.gpu.pipelines import PipelineStore
from vajra_tui.engine.gpu.protocol import (
    Calibrate, Calibrated, Checked, Compile, Compiled, CopyRate, Drop, Dropped, Failure, Greeting, Hello, Parse,
    Parsed, Prebuild, Prebuilt, Prepare, Prepared, QuickCopy, Quit, Ready, Release, Reply, Request, StreamTimed, Time,
    Timed, TimeStream, Verify,
)
from vajra_tui.engine.gpu.references import ReferenceStore
from vajra_tui.engine.gpu.resources import Program
from vajra_tui.engine.gpu.runtime import Runtime
from vajra_tui.engine.gpu.stale_reads import stale_reads
from vajra_tui.engine.gpu.telemetry import Telemetry, bring_up
from vajra_tui.engine.gpu.telemetry import summarize as summarize_telemetry


class Worker:
    def __init__(self, prefer: str | None, nvml_index: int | None = None) -> None:
        """``prefer``: an adapter index or a name substring (gpu/adapters.py); ``nvml_index``:
        the NVML GPU a probe found that adapter to be, so telemetry samples the right one."""
        self.rt = Runtime(prefer)
        self.telemetry = Telemetry(self.rt.info, nvml_index)
        self.workload = None
        self.size: dict[str, int] = {}
        self.pipelines = PipelineStore(self.rt)
        self.programs: dict[str, tuple[list[str], dict[str, bytes]]] = {}  # cid -> its passes, uniforms
        self.binds: dict[str, dict[str, str]] = {}  # pass cid -> the buffers it rebinds
        self.inputs: dict[int, dict[str, np.ndarray]] = {}
        self.refs: dict[int, dict[str, np.ndarray]] = {}  # per seed, per output: float64
        self.seeds: list[int] = []  # in order: integer outputs are poisoned per seed's place
        self.loaded_seed: int | None = None
        # Who judges verification (VAJRA_VERIFY=gpu|cpu|auto; gpu_verify.py), the references
        # every seed keeps on the GPU, and the judge's pipelines for the prepared workload.
        self.judge = judge_path(self.rt.info.software)
        self.store: ReferenceStore | None = None
        self.gpu_judge: GPUJudge | None = None
        # one handler per request type (gpu/protocol.py): the type says what is asked
        self._handlers: dict[type, Callable[[Any], Reply]] = {
            Hello: self.hello, Prepare: self.prepare, Compile: self.compile, Prebuild: self.prebuild,
            Verify: self.verify, Parse: self.parse, Time: self.time, TimeStream: self.time_stream,
            Drop: self.drop, Calibrate: self.calibrate, QuickCopy: self.quick_copy, Release: self.release,
        }

    def handle(self, request: Request[Any]) -> Reply:
        """The reply to one request; what a handler raises, serve() sends back as a Failure."""
        handler = self._handlers.get(type(request))
        if handler is None:
            raise TypeError(f"not a request this worker serves: {type(request).__name__}")
        return handler(request)

    def hello(self, request: Hello) -> Greeting:
        return Greeting(device=self.rt.info, pid=os.getpid())

    def prepare(self, request: Prepare) -> Prepared:
        """``workload`` is a spec the loader resolves (a name, a file, ``pkg.mod:ATTR``).

        What the workload's functions return is checked here, where it is computed at
        the size that runs: a broken one is a ``WorkloadError`` naming the field.
        """
        seeds, size = list(request.seeds), request.size
        self.workload, self.size = get_workload(request.workload), size
        self._forget_workload()
        self.seeds = list(seeds)
        self.rt.allocate(self.workload.bindings, self.workload.checked_lengths(size))
        clock = _Clock()
        self.store = ReferenceStore(self.rt.device, with_lo=self.judge in ("gpu", "check"))
        for seed in seeds:  # inputs and float64 references once per seed; references to the GPU
            self._load(seed, clock)
        if seeds:  # every timed dispatch is checked on the GPU against the reference
            with clock("pipelines"):
                atol, rtol = self.workload.tolerance(size), float(self.workload.rtol)
                counts = {n: int(r.size) for n, r in self.refs[seeds[0]].items()}
                self.rt.prepare_check(counts, atol, rtol)
                if self.judge in ("gpu", "check"):
                    self.gpu_judge = GPUJudge(self.rt.device, [(b.name, b.dtype, counts[b.name])
                                                               for b in self.workload.outputs], atol, rtol)
            self.loaded_seed = None  # bind the first seed's reference with its inputs
            self._load(seeds[0], clock)
        _trim()
        return Prepared(rss_mb=_rss_mb(), judge=self.judge, seconds=clock.seconds)

    def _forget_workload(self) -> None:
        """What the previous workload left: its pipelines (built against its buffers' layout),
        programs, inputs, float64 references and judge. A new prepare and a release start here."""
        self.pipelines.clear()
        self.programs.clear()
        self.binds.clear()
        self.inputs.clear()
        self.refs.clear()
        self.seeds, self.loaded_seed = [], None
        if self.store is not None:
            self.store.release()
        if self.gpu_judge is not None:
            self.gpu_judge.destroy()
        self.store, self.gpu_judge = None, None

    def _load(self, seed: int, clock: "_Clock | None" = None) -> None:
        """Make ``seed`` the loaded one: its inputs uploaded, its references bound."""
        clock = clock or _Clock()
        if seed not in self.inputs:
            with clock("inputs"):
                rng = np.random.default_rng(seed)
                self.inputs[seed] = self.workload.checked_inputs(self.size, rng)
            with clock("references"):
                self.refs[seed] = self.workload.checked_references(self.size, self.inputs[seed])
        assert self.store is not None
        if seed not in self.store.refs:  # once per seed: switching seeds uploads inputs only
            with clock("upload_references"):
                self.store.upload(seed, self.refs[seed], self.rt.dtypes, self.workload.tolerance(self.size))
        if self.loaded_seed != seed:
            with clock("upload_inputs"):
                self.rt.upload(self.inputs[seed])
                self.rt.bind_references(self.store.hi(seed))
                self.rt.set_seed(self._seed_index(seed))
                self.rt.wait()
            self.loaded_seed = seed

    def _seed_index(self, seed: int) -> int:
        return self.seeds.index(seed) if seed in self.seeds else 0

    def compile(self, request: Compile) -> Compiled:
        """See PipelineStore.compile: what runs is ``source`` with its workgroup memory zeroed.

        A multi-pass result's other passes (``more``) are built under ``cid#k``; the
        result runs them all, in their order, with its uniform contents bound.
        """
        cid = request.cid
        got = self.pipelines.compile(cid, request.source, request.dispatch, request.constants, request.entry,
                                     dict(request.bind))
        order = [(request.first, cid, dict(request.bind))]
        for k, spec in enumerate(request.more, 1):
            if not got.compiled:
                break
            sub = f"{cid}#{k}"
            other = self.pipelines.compile(sub, spec.source, spec.dispatch, spec.constants, spec.entry,
                                           dict(spec.bind))
            if not other.compiled:
                return Compiled(compiled=False, error=f"pass {spec.entry} (the workload's own module): "
                                                      f"{other.error}")
            order.append((spec.index, sub, dict(spec.bind)))
        if got.compiled:
            order.sort(key=lambda item: item[0])
            self.programs[cid] = ([c for _, c, _ in order], dict(request.uniforms))
            self.binds.update({c: bind for _, c, bind in order if bind})
        return got

    def program(self, cid: str, grid: Any = None) -> Program:
        """The passes a result runs, bound with its uniforms (``grid`` overrides the first's)."""
        cids, uniforms = self.programs.get(cid, ([cid], {}))
        program = self.rt.program([(self.pipelines[c][0], self.pipelines.modules[c], self.pipelines[c][1],
                                    self.binds.get(c, {})) for c in cids], uniforms)
        if grid is not None:
            program.steps[0].grid = tuple(grid)
        return program

    def prebuild(self, request: Prebuild) -> Prebuilt:
        """A generation's kernels built on threads while it is admitted (PipelineStore.prebuild)."""
        return self.pipelines.prebuild(request.items, request.more)

    def _check(self, seed: int, judge: str | None = None) -> dict:
        """The verdict on the outputs as the last dispatch left them."""
        return self._verdict(seed, {n: self.rt.buffers[n] for n in self.rt.outs.names}, judge)

    def _verdict(self, seed: int, buffers: dict[str, Any], judge: str | None = None) -> dict:
        """Every output (in ``buffers``: the outputs or copies of them) against its reference,
        with the poison pattern of this seed: on the GPU where it judges (``judge`` overrides
        the worker's choice), read back and judged here otherwise."""
        judge = judge or self.judge
        if judge == "check":  # both judges, which must agree (VAJRA_VERIFY=check: the tests)
            gpu, cpu = self._verdict(seed, buffers, "gpu"), self._verdict(seed, buffers, "cpu")
            why = disagreement(gpu, cpu)
            if why:
                raise RuntimeError(f"the GPU and CPU judges disagree: {why}")
            return {**gpu, "judged_by": f"{gpu['judged_by']}={cpu['judged_by']}"}
        atol, rtol, index = self.workload.tolerance(self.size), float(self.workload.rtol), self._seed_index(seed)
        poison = {b.name: poison_word(b.dtype, index) for b in self.workload.outputs}
        verdicts: dict[str, Any] = {}
        if judge == "gpu" and self.gpu_judge is not None and self.store is not None:
            verdicts = self.gpu_judge.judge(buffers, self.store.refs[seed], self.refs[seed], poison)
        for b in self.workload.outputs:
            if verdicts.get(b.name) is None:
                out = self.rt.read(buffers[b.name], b.dtype)
                verdicts[b.name] = compare(out, self.refs[seed][b.name], atol, rtol, b.dtype, poison[b.name])
        return combine({b.name: verdicts[b.name] for b in self.workload.outputs}).as_dict()

    def _total(self, seed: int) -> int:
        return int(sum(r.size for r in self.refs[seed].values()))

    def verify(self, request: Verify) -> Checked:
        """One poisoned dispatch, checked; ``grid`` overrides the planned one (coverage probes);
        ``judge`` ("gpu" or "cpu") overrides who judges it (the tests cross-check the two)."""
        self._load(request.seed)
        program = self.program(request.cid, request.grid or None)
        self.rt.dispatch(program)
        verdict = self._check(request.seed, request.judge)
        if not any(self.rt.outs.poisoned(b.name) for b in self.workload.outputs):
            return Checked(**verdict)
        if verdict["passed"]:  # again from the second fill: a NaN does not survive max or min
            self.rt.dispatch(program, fill="extremes")
            again = self._check(request.seed, request.judge)
            if again["passed"]:
                return Checked(**verdict)
            verdict = {**again, "reason": f"verifies only from the poison fill: from another, {again['reason']}"}
        if request.grid:  # a coverage probe fails by design on a correct kernel: only pass or fail is asked,
            return Checked(**verdict)  # so not the four dispatches and readbacks that explain a failure
        return Checked(**self._second_fill(program, request.seed, verdict))

    def _second_fill(self, program: Program, seed: int, verdict: dict) -> dict:
        """Tell "reads its output's old contents" from "never written" (gpu/stale_reads.py)."""
        counts = {name: int(ref.size) for name, ref in self.refs[seed].items()}
        return stale_reads(self.rt, self.workload, program, self._seed_index(seed), verdict, counts)

    def parse(self, request: Parse) -> Parsed:
        """Only the compiler's front end: does this text parse and validate as a module?"""
        try:
            self.rt.device.create_shader_module(code=request.source)
        except Exception as exc:  # wgpu raises GPUValidationError and friends
            return Parsed(error=str(exc))
        return Parsed(error="")

    def time(self, request: Time) -> Timed:
        """``n`` dispatches, each checked on the GPU after its clock stopped; ``check`` also
        verifies the last one in full. Any wrong dispatch comes back as a failed verdict."""
        seed = request.seed
        self._load(seed)
        self.rt.set_cache_state(request.cache)
        program = self.program(request.cid)
        runs = [self.rt.dispatch(program, check=True) for _ in range(request.n)]
        verdict = self._check(seed) if request.check else None
        bad = [r.bad for r in runs if r.bad is not None]
        failed = _with_dispatches(verdict, bad, self._total(seed), "dispatch", self.rt.outs.names)
        return Timed(wall_ms=[r.wall_ms for r in runs], ts_ms=[r.ts_ms for r in runs],
                     verdict=Checked(**failed) if failed is not None else None)

    def time_stream(self, request: TimeStream) -> StreamTimed:
        """All of a batch's timed dispatches back to back; see Runtime.time_stream.

        The GPU's clocks are sampled (NVML, where there is one) before and after; with
        ``bring_up`` a clock that idled down is brought up first by the batch's own kernels, untimed.
        """
        seed = request.seed
        self._load(seed)
        self.rt.set_cache_state(request.cache)
        programs = [self.program(c) for c in request.cids]
        warmed_ms, low = (bring_up(self.telemetry.sample, self.telemetry.max_sm_mhz(),
                                   lambda copies: self.rt.spin(programs, copies))
                          if request.bring_up else (0.0, ""))
        first = self.telemetry.sample()
        timing = self.rt.time_stream(programs, request.warmup, request.reps)
        reason = "; ".join(x for x in (self.telemetry.reason, low) if x)
        telemetry = summarize_telemetry(first, self.telemetry.sample(), reason, warmed_ms)
        verdicts = []
        names = self.rt.outs.names
        for index, snaps in enumerate(timing.snapshots):
            verdict = self._verdict(seed, dict(zip(names, snaps)))
            for snap in snaps:
                snap.destroy()
            if timing.bad is not None:  # every timed dispatch, not only the last one read back
                verdict = _with_dispatches(verdict, timing.bad[index], self._total(seed),
                                           "timed dispatch", names) or verdict
            verdicts.append(Checked(**verdict))
        return StreamTimed(ts_ms=timing.ts_ms, wall_ms=timing.wall_ms, verdicts=verdicts, telemetry=telemetry,
                           pass_ms=timing.pass_ms)

    def drop(self, request: Drop) -> Dropped:
        """Finished candidates: their pipelines (and the module, layout and JIT code under
        them) go. ``cids`` drops a whole batch with one poll and one trim. ``keep``: the
        session's finalists now, whose pipelines stay for the next shoot-out."""
        finalists = {sub for c in (request.keep or []) for sub in self._passes_of(c)}
        cids = [sub for c in ([request.cid] if request.cid else []) + list(request.cids or [])
                for sub in self._passes_of(c)]
        released = [self.pipelines.drop(c, c in finalists) for c in cids]
        for c in cids:
            if c not in finalists:
                self.programs.pop(c, None)
                self.binds.pop(c, None)
        if request.keep is not None:
            released.append(self.pipelines.keep_only(finalists))
        if any(released):
            self.rt.wait()  # wgpu-native frees released objects when the device is polled
            _trim()
        return Dropped(rss_mb=_rss_mb())

    def release(self, request: Release) -> Dropped:
        """The workload let go, as if none had been prepared: the worker idles empty."""
        self._forget_workload()
        self.workload, self.size = None, {}
        self.rt.release_buffers()
        self.rt.wait()
        _trim()
        return Dropped(rss_mb=_rss_mb())

    def _passes_of(self, cid: str) -> list[str]:
        return self.programs.get(cid, ([cid], {}))[0] if cid in self.programs else [cid]

    def calibrate(self, request: Calibrate) -> Calibrated:
        return Calibrated(calibration=roofline(self.rt))

    def quick_copy(self, request: QuickCopy) -> CopyRate:
        """A few copy dispatches: enough to tell whether a cached calibration still holds."""
        return CopyRate(copy_gbps=quick_copy_gbps(self.rt, shape=request.shape))


def _with_dispatches(verdict: dict | None, bad: list[tuple[int, int, int]], total: int,
                     what: str, outputs: list[str] | None = None) -> dict | None:
    """The verdict, failed if any checked dispatch was wrong (None: nothing to report)."""
    wrong = [(k, count, first, out) for k, (count, first, out) in enumerate(bad) if count]
    if not wrong:
        return verdict
    k, count, first, out = wrong[0]
    which = ", ".join(str(w[0] + 1) for w in wrong)
    where = f"element {first} of {outputs[out]}" if outputs and len(outputs) > 1 else f"element {first}"
    detail = (f"{what} {k + 1} of {len(bad)} wrote {count} of {total} elements wrong, first at "
              f"{where} (wrong: {which} of {len(bad)})")
    if verdict is not None and not verdict["passed"]:
        return {**verdict, "reason": f"{verdict['reason']}; also {detail}"}
    return {"passed": False, "max_rel_error": None, "worst_index": first, "reason": detail,
            "unwritten": 0, "nonfinite": 0, "where": f"checked after every {what}"}


_LIBC = None


def _rss_mb() -> float:
    """This process's resident set (the client replaces a worker that keeps growing)."""
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return -1.0


def _trim() -> None:
    """Give freed heap back to the OS (glibc keeps it otherwise, and RSS only grows)."""
    global _LIBC
    gc.collect()
    if _LIBC is None:
        name = ctypes.util.find_library("c")
        try:
            _LIBC = ctypes.CDLL(name) if name else False
        except OSError:
            _LIBC = False
    if _LIBC and hasattr(_LIBC, "malloc_trim"):
        _LIBC.malloc_trim(0)


ORPHAN_CHECK_S = 1.0


def end_with_parent(parent: int) -> None:
    """A daemon thread that kills this process once ``parent`` is no longer its parent. An
    idle worker sees the pipe close and returns, but one inside a hung kernel never reads it
    again, and would hold the GPU until the machine restarts. A polled parent id, not Linux's
    PR_SET_PDEATHSIG: that fires when the *thread* that started the worker ends, and the
    parent starts workers from threads that come and go."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_CHECK_S)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="vajra-orphan-check", daemon=True).start()


def serve(conn: Connection, prefer: str | None, nvml_index: int | None = None,
          parent: int | None = None) -> None:
    """Entry point of the child process."""
    if parent is not None:
        end_with_parent(parent)
    try:
        worker = Worker(prefer, nvml_index)
    except Exception as exc:
        conn.send(Failure("error", f"no usable adapter: {exc}"))
        return
    # Everything alive now (modules, wgpu's bindings, the device) lives as long as the worker:
    # frozen, the collections _trim() runs after each batch only walk what the tune made since.
    gc.freeze()
    conn.send(Ready())
    while True:
        try:
            request = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        if isinstance(request, Quit):
            return
        try:
            conn.send(worker.handle(request))
        except (KeyboardInterrupt, GeneratorExit) as exc:
            if not isinstance(request, Prepare):  # a real Ctrl+C: the parent ends the run
                raise
            # raised by the workload's own make_inputs or reference: the user's file, in one line
            conn.send(Failure("workload", f"make_inputs or reference raised {type(exc).__name__}"))
        except Exception as exc:
            # a broken workload is the user's file, not the worker: it goes back as a
            # WorkloadError (Failure keeps its parts), which the session says in one line
            conn.send(Failure.of(exc))


if __name__ == "__main__":
    serve(Connection(int(sys.argv[1])), sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None,
          int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else None, os.getppid())

"""The worker process: owns the adapter and answers one request at a time.

The parent (client.py) enforces deadlines by killing this process; nothing
here needs to defend against hangs, only against errors, which it reports.
"""

from __future__ import annotations

import os
import sys
import traceback
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from ..verify import compare
from ..workloads import get_workload
from .calibrate import calibrate, quick_copy_gbps
from .runtime import Runtime
from .telemetry import Telemetry
from .telemetry import summarize as summarize_telemetry


class Worker:
    def __init__(self, prefer: str | None) -> None:
        self.rt = Runtime(prefer)
        self.telemetry = Telemetry(self.rt.info)
        self.workload = None
        self.size: dict[str, int] = {}
        self.pipelines: dict[str, tuple[Any, tuple[int, int, int]]] = {}
        self.inputs: dict[int, dict[str, np.ndarray]] = {}
        self.refs: dict[int, np.ndarray] = {}
        self.loaded_seed: int | None = None

    # Each op_* takes keyword arguments from the request and returns a dict.
    def op_hello(self) -> dict:
        return {"device": self.rt.info.model_dump(), "pid": os.getpid()}

    def op_prepare(self, workload: str, size: dict[str, int], seeds: list[int]) -> dict:
        self.workload, self.size = get_workload(workload), size
        self.pipelines.clear()
        self.inputs.clear()
        self.refs.clear()
        self.loaded_seed = None
        order = [b.name for b in self.workload.bindings]
        outputs = {self.workload.output.name}
        self.rt.allocate(self.workload.buffer_len(size), outputs, order)
        for seed in seeds:
            self._load(seed)
        return {}

    def _load(self, seed: int) -> None:
        if seed not in self.inputs:
            rng = np.random.default_rng(seed)
            self.inputs[seed] = self.workload.make_inputs(self.size, rng)
            self.refs[seed] = self.workload.reference(self.size, self.inputs[seed])
        if self.loaded_seed != seed:
            self.rt.upload(self.inputs[seed])
            self.rt.wait()
            self.loaded_seed = seed

    def op_compile(self, cid: str, source: str, dispatch: list[int]) -> dict:
        try:
            pipeline = self.rt.compile(source)
        except Exception as exc:  # wgpu raises GPUValidationError and friends
            return {"compiled": False, "error": str(exc)}
        self.pipelines[cid] = (pipeline, tuple(dispatch))
        return {"compiled": True}

    def _check(self, seed: int) -> dict:
        verdict = compare(self.rt.read_output(), self.refs[seed], self.workload.atol(self.size))
        return verdict.as_dict()

    def op_verify(self, cid: str, seed: int, grid: list[int] | None = None) -> dict:
        """One poisoned dispatch, checked; ``grid`` overrides the planned one (coverage probes)."""
        self._load(seed)
        pipeline, planned = self.pipelines[cid]
        self.rt.dispatch(pipeline, tuple(grid) if grid else planned)
        return self._check(seed)

    def op_parse(self, source: str) -> dict:
        """Only the compiler's front end: does this text parse and validate as a module?"""
        try:
            self.rt.device.create_shader_module(code=source)
        except Exception as exc:  # wgpu raises GPUValidationError and friends
            return {"error": str(exc)}
        return {"error": ""}

    def op_time(self, cid: str, n: int, seed: int, check: bool = False, cache: str = "warm") -> dict:
        self._load(seed)
        self.rt.set_cache_state(cache)
        pipeline, grid = self.pipelines[cid]
        runs = [self.rt.dispatch(pipeline, grid) for _ in range(n)]
        out: dict[str, Any] = {"wall_ms": [r.wall_ms for r in runs], "ts_ms": [r.ts_ms for r in runs]}
        if check:
            out["verdict"] = self._check(seed)
        return out

    def op_time_stream(self, cids: list[str], warmup: int, reps: int, seed: int,
                       cache: str = "warm") -> dict:
        """All of a batch's timed dispatches back to back; see Runtime.time_stream.

        The GPU's clocks are sampled (NVML, where there is one) before and after.
        """
        self._load(seed)
        self.rt.set_cache_state(cache)
        first = self.telemetry.sample()
        timing = self.rt.time_stream([self.pipelines[c] for c in cids], warmup, reps)
        telemetry = summarize_telemetry(first, self.telemetry.sample(), self.telemetry.reason)
        atol = self.workload.atol(self.size)
        verdicts = []
        for snap in timing.snapshots:
            verdicts.append(compare(self.rt.read(snap), self.refs[seed], atol).as_dict())
            snap.destroy()
        return {"ts_ms": timing.ts_ms, "wall_ms": timing.wall_ms, "verdicts": verdicts,
                "telemetry": telemetry.model_dump()}

    def op_drop(self, cid: str) -> dict:
        self.pipelines.pop(cid, None)
        return {}

    def op_calibrate(self) -> dict:
        return {"calibration": calibrate(self.rt).model_dump()}

    def op_quick_copy(self) -> dict:
        """A few copy dispatches: enough to tell whether a cached calibration still holds."""
        return {"copy_gbps": quick_copy_gbps(self.rt)}


def serve(conn: Connection, prefer: str | None) -> None:
    """Entry point of the child process."""
    try:
        worker = Worker(prefer)
    except Exception as exc:
        conn.send({"ok": False, "error": f"no usable adapter: {exc}"})
        return
    conn.send({"ok": True})
    while True:
        try:
            request = conn.recv()
        except (EOFError, KeyboardInterrupt):
            return
        op = request.pop("op")
        if op == "quit":
            return
        try:
            reply = getattr(worker, f"op_{op}")(**request)
            conn.send({"ok": True, **reply})
        except Exception as exc:
            conn.send({"ok": False, "error": f"{type(exc).__name__}: {exc}",
                       "trace": traceback.format_exc(limit=4)})


if __name__ == "__main__":
    serve(Connection(int(sys.argv[1])), sys.argv[2] if len(sys.argv) > 2 else None)

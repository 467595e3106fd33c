"""The parent's handle on the GPU worker process: deadlines, kills and restarts.

A hung WGSL kernel blocks its process forever (no device-lost event arrives),
so the only reliable remedy is to kill the process. The client remembers the
state-building requests (prepare, compile) and replays them into the fresh
worker, so a restart is invisible to the session apart from the lost candidate.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Any

from ...settings import cache_dir
from ..damage import open_log
from ..events import DeviceInfo, NvmlMatch

STARTUP_TIMEOUT_S = 120.0
# Drivers keep memory for every pipeline ever built (lavapipe: megabytes of JIT code per
# kernel, released only with the process), so a worker that has grown this far since its
# first finished candidate is replaced by a fresh one between candidates, its state replayed.
RECYCLE_MB = float(os.environ.get("VAJRA_WORKER_RECYCLE_MB", "96"))


class WorkerError(Exception):
    """The worker answered with an error (a Python exception inside it)."""


class WorkerTimeout(Exception):
    """The request ran past its deadline; the worker was killed."""


class WorkerCrashed(Exception):
    """The worker died (device lost, driver crash) while serving a request."""


class GPUClient:
    def __init__(self, prefer: str | int | None = None, nice: int = 0, label: str | None = None,
                 nvml: NvmlMatch | None = None) -> None:
        """``prefer`` names the adapter: an index (exact; see gpu/adapters.py) or a name
        substring the worker resolves (an unknown or ambiguous one fails the start, never
        falls back). ``nice`` lowers the worker's CPU priority: on a software adapter the
        GPU work *is* CPU work, and an interactive UI must win the cores when it needs them.
        ``label`` names this worker among the lanes of a run; ``nvml`` is what a probe
        found the adapter to be (telemetry then samples that GPU)."""
        self.prefer = None if prefer is None or str(prefer).strip() == "" else prefer
        self.adapter_index: int | None = int(prefer) if str(prefer).strip().isdigit() else None
        self.nvml = nvml
        self._label = label
        self.nice = nice
        self.device: DeviceInfo | None = None
        self.restarts = 0
        self.recycles = 0  # planned replacements of a worker that grew (not crashes)
        self._settled_rss: float | None = None  # the worker's RSS after its first finished candidate
        self._proc: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self._prepare: dict[str, Any] | None = None
        self._compiled: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._interrupted = False

    # ---- lifecycle -----------------------------------------------------------
    def start(self) -> DeviceInfo:
        ours, theirs = socket.socketpair()
        args = [sys.executable, "-m", "vajra_tui.engine.gpu.worker", str(theirs.fileno())]
        args.append("" if self.prefer is None else str(self.prefer))
        if self.nvml is not None:
            args.append(str(self.nvml.index))
        # driver chatter must never reach the terminal UI; a damaged cache folder never stops a run
        with open_log(cache_dir() / "worker.log") as err:
            self._proc = subprocess.Popen(args, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                          stdout=err, stderr=err, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                                          preexec_fn=self._lower_priority if self.nice else None)
        theirs.close()
        parent = self._conn = Connection(ours.detach())
        if not parent.poll(STARTUP_TIMEOUT_S):
            self._kill()
            raise WorkerTimeout("the GPU worker did not start in time")
        try:
            hello = parent.recv()
        except EOFError:
            self._kill()
            raise WorkerCrashed("the GPU worker died while starting") from None
        if not hello.get("ok"):
            self._kill()
            raise WorkerError(hello.get("error", "the GPU worker failed to start"))
        self.device = DeviceInfo(**self._roundtrip({"op": "hello"}, STARTUP_TIMEOUT_S)["device"])
        self.adapter_index = self.device.adapter_index
        if self.nvml is not None:
            self.device.nvml = self.nvml
        return self.device

    @property
    def label(self) -> str:
        """This worker among the lanes of a run: ``gpu<adapter index>`` unless named."""
        if self._label:
            return self._label
        return f"gpu{self.adapter_index}" if self.adapter_index is not None else "gpu"

    def _lower_priority(self) -> None:
        os.nice(self.nice)  # runs in the child between fork and exec

    def close(self) -> None:
        if self._lock.acquire(timeout=5):  # after the request in flight, if it ends soon
            try:
                self._close()
            finally:
                self._lock.release()
        else:  # still busy: kill its worker, and the thread waiting on it cleans up
            self.interrupt()

    def _close(self) -> None:
        if self._proc is not None and self._proc.poll() is None and self._conn is not None:
            try:
                self._conn.send({"op": "quit"})
                self._proc.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()

    def _kill(self) -> None:
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        if self._conn is not None:
            self._conn.close()
        self._proc, self._conn = None, None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def restart(self) -> None:
        """A fresh worker with the same workload prepared and pipelines compiled."""
        self._kill()
        self.restarts += 1
        self._replace()

    def _replace(self) -> None:
        self._settled_rss = None
        self.start()
        if self._prepare is not None:
            self._roundtrip(dict(self._prepare), STARTUP_TIMEOUT_S * 5)
        for request in list(self._compiled.values()):
            self._roundtrip(dict(request), STARTUP_TIMEOUT_S)

    # ---- requests ------------------------------------------------------------
    def _roundtrip(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        assert self._conn is not None, "worker not started"
        try:
            self._conn.send(request)
        except OSError:  # the worker is gone (killed, crashed, device lost)
            self._kill()
            raise WorkerCrashed(f"the GPU worker was gone before {request['op']}") from None
        if not self._conn.poll(timeout):
            self._kill()
            raise WorkerTimeout(f"{request['op']} ran past its {timeout:.1f} s deadline")
        try:
            reply = self._conn.recv()
        except (EOFError, OSError):
            self._kill()
            raise WorkerCrashed(f"the GPU worker died during {request['op']}") from None
        if not reply.pop("ok"):
            raise WorkerError(reply.get("error", "unknown worker error"))
        return reply

    def call(self, op: str, timeout: float, **kwargs: Any) -> dict[str, Any]:
        """One request; a timeout or crash leaves a fresh worker behind before raising."""
        request = {"op": op, **kwargs}
        with self._lock:
            if self._interrupted and self._proc is not None and self._proc.poll() is not None:
                self._interrupted = False  # killed by interrupt() as its request ended: not a crash
                self._kill()
            if self._conn is None:
                self.restart()
            try:
                reply = self._roundtrip(dict(request), timeout)
            except (WorkerTimeout, WorkerCrashed):
                self._forget(kwargs.get("cid"))
                if self._interrupted:  # the user stopped it: the next call starts a fresh worker
                    self._interrupted = False
                    self._kill()
                    raise
                self.restart()
                raise
            self._remember(op, request, reply)
            if op == "drop":
                self._recycle_if_grown(reply.get("rss_mb"))
            return reply

    def _recycle_if_grown(self, rss_mb: float | None) -> None:
        """Between candidates: replace a worker that has grown by RECYCLE_MB (a planned restart)."""
        if not isinstance(rss_mb, (int, float)) or RECYCLE_MB <= 0:
            return
        if self._settled_rss is None:
            self._settled_rss = float(rss_mb)
            return
        if rss_mb - self._settled_rss < RECYCLE_MB:
            return
        self.recycles += 1
        try:
            self._close()
            self._replace()
        except (WorkerTimeout, WorkerCrashed, WorkerError):
            self._kill()  # the next call starts (and prepares) a fresh worker

    def _remember(self, op: str, request: dict[str, Any], reply: dict[str, Any]) -> None:
        if op == "prepare":
            self._prepare, self._compiled = request, {}
            # a new workload's buffers are not growth: measure from its first candidate anew
            self._settled_rss = None
        elif op == "compile" and reply.get("compiled"):
            self._compiled[request["cid"]] = request
        elif op == "drop":
            for cid in [request.get("cid"), *request.get("cids", [])]:
                self._compiled.pop(cid, None)

    def interrupt(self, forget: list[str] | tuple[str, ...] = ()) -> None:
        """Stop the request in flight by killing the worker under it (a user's cancel).

        Safe from any thread: only the process is killed; the thread waiting on it sees
        the socket close, raises WorkerCrashed and leaves no worker behind, and the next
        call starts a fresh one with the workload prepared again. ``forget`` names
        candidates whose compiled pipelines that fresh worker need not rebuild.
        """
        for cid in forget:
            self._compiled.pop(cid, None)
        if self._lock.acquire(blocking=False):  # idle: just end it; the next call starts another
            try:
                self._kill()
            finally:
                self._lock.release()
            return
        self._interrupted = True
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def _forget(self, cid: str | None) -> None:
        if cid is not None:
            self._compiled.pop(cid, None)

    async def acall(self, op: str, timeout: float, **kwargs: Any) -> dict[str, Any]:
        """The same request from async code: the event loop never waits on the GPU."""
        return await asyncio.to_thread(self.call, op, timeout, **kwargs)

    async def astart(self) -> DeviceInfo:
        return await asyncio.to_thread(self.start)

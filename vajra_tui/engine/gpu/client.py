"""The parent's handle on the GPU worker process: deadlines, kills and restarts.

A hung WGSL kernel blocks its process forever (no device-lost event arrives),
so the only reliable remedy is to kill the process. The client remembers the
state-building requests (prepare, compile) and replays them into the fresh
worker, so a restart is invisible to the session apart from the lost candidate.
A worker that grows is replaced the same way, but planned: its successor is started and
prepared on a thread while it serves on, and swapped in between two requests.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import threading
from multiprocessing.connection import Connection
from typing import Any, Callable

from vajra_tui.settings import cache_dir
from vajra_tui.engine.child import child_env, module_command, shader_cache_env
from vajra_tui.engine.gpu.protocol import (
    R, Compile, Compiled, Drop, Dropped, Failure, Hello, Prebuild, Prepare, Quit, Ready, Request,
    WorkerCrashed, WorkerError, WorkerTimeout, candidate_of,
)
from vajra_tui.engine.gpu import idle
from vajra_tui.engine.gpu.standby import STARTUP_TIMEOUT_S, Standby, end_worker, exchange
from vajra_tui.engine.store.damage import open_log
from vajra_tui.engine.events import DeviceInfo, NvmlMatch
from vajra_tui.engine.workloads.base import WorkloadError

# the faults of a request are protocol types; they are imported from here as well
__all__ = ["GPUClient", "RECYCLE_MB", "STARTUP_TIMEOUT_S", "WorkerCrashed", "WorkerError", "WorkerTimeout"]

# Drivers keep memory for every pipeline ever built (lavapipe: megabytes of JIT code per
# kernel, released only with the process), so a worker that has grown this far since its
# first finished candidate is replaced: a standby is started and prepared in the background
# (a spawn plus a prepare take seconds) and swapped in between requests, its compiles replayed.
RECYCLE_MB = float(os.environ.get("VAJRA_WORKER_RECYCLE_MB", "96"))
# every way a replayed request can fail: a standby that meets one is replaced the old way
_REPLAY_FAULTS = (WorkerTimeout, WorkerCrashed, WorkerError, WorkloadError)


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
        self._prepare: Prepare | None = None
        self._compiled: dict[str, Compile] = {}  # replayed into a fresh worker
        self._standby: Standby | None = None  # a grown worker's successor, being readied
        # between a prebuild and its batch's drop the worker holds pipelines being built for
        # the compiles to come: a standby swapped in then would compile each one serially
        self._building = False
        self._lock = threading.Lock()
        self._interrupted = False

    # ---- lifecycle -----------------------------------------------------------
    def start(self) -> DeviceInfo:
        """A worker: the one an earlier run of this process left idle (gpu/idle.py), else new."""
        self._proc, self._conn, self.device = idle.take(self._key()) or self._spawn()
        self.adapter_index = self.device.adapter_index
        if self.nvml is not None:
            self.device.nvml = self.nvml
        return self.device

    def _spawn(self, started: Callable[[subprocess.Popen], None] | None = None,
               ) -> tuple[subprocess.Popen, Connection, DeviceInfo]:
        """A new worker and its hello, not yet this client's: start() adopts it, a standby
        holds it. ``started`` sees the process as soon as it exists. A failure kills it."""
        ours, theirs = socket.socketpair()
        env = self._env()
        args = module_command("vajra_tui.engine.gpu.worker", str(theirs.fileno()),
                              "" if self.prefer is None else str(self.prefer))
        if self.nvml is not None:
            args.append(str(self.nvml.index))
        # driver chatter must never reach the terminal UI; a damaged cache folder never stops a run
        with open_log(cache_dir() / "worker.log") as err:
            proc = subprocess.Popen(args, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                    stdout=err, stderr=err, env=env,
                                    preexec_fn=self._lower_priority if self.nice else None)
        theirs.close()
        conn = Connection(ours.detach())
        try:
            if started is not None:
                started(proc)
            if not conn.poll(STARTUP_TIMEOUT_S):
                raise WorkerTimeout("the GPU worker did not start in time")
            try:
                ready = conn.recv()
            except (EOFError, OSError):
                raise WorkerCrashed("the GPU worker died while starting") from None
            if isinstance(ready, Failure):
                raise ready.exception()
            if not isinstance(ready, Ready):
                raise WorkerError("the GPU worker failed to start")
            device = exchange(conn, Hello(), STARTUP_TIMEOUT_S).device
        except BaseException:
            end_worker(proc, conn)
            raise
        return proc, conn, device

    @staticmethod
    def _env() -> dict[str, str]:
        return shader_cache_env(child_env(PYTHONUNBUFFERED="1"))

    def _key(self) -> object:
        """Which idle workers could serve as this client's: started the same way."""
        return idle.worker_key(self.prefer, self.nice, self.nvml.index if self.nvml else None, self._env())

    @property
    def label(self) -> str:
        """This worker among the lanes of a run: ``gpu<adapter index>`` unless named."""
        if self._label:
            return self._label
        return f"gpu{self.adapter_index}" if self.adapter_index is not None else "gpu"

    def _lower_priority(self) -> None:
        os.nice(self.nice)  # runs in the child between fork and exec

    def close(self) -> None:
        """End the worker and any standby; a busy one is killed and its caller cleans up."""
        if self._lock.acquire(timeout=5):  # after the request in flight, if it ends soon
            try:
                if not self._park():
                    self._close()
            finally:
                self._lock.release()
        else:  # still busy: kill its worker, and the thread waiting on it cleans up
            self.interrupt()

    def _park(self) -> bool:
        """At the end of a run: a worker that answered its last request, and has not grown
        enough to be replaced, waits idle for the next run (gpu/idle.py). True if it does."""
        if self._proc is None or self._conn is None or self.device is None or self._interrupted \
                or self._building or self._standby is not None:
            return False
        if not idle.park(self._key(), self._proc, self._conn, self.device):
            return False
        self._proc, self._conn = None, None
        return True

    def _close(self) -> None:
        if self._proc is not None and self._proc.poll() is None and self._conn is not None:
            try:
                self._conn.send(Quit())
                self._proc.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()

    def _kill(self) -> None:
        """End the worker, and its standby: prepared for a state a crash or a cancel ended."""
        self._drop_standby()
        end_worker(self._proc, self._conn)
        self._proc, self._conn = None, None

    def _drop_standby(self) -> None:
        standby, self._standby = self._standby, None
        if standby is not None:
            standby.discard()

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
            self._roundtrip(self._prepare, STARTUP_TIMEOUT_S * 5)
        for request in list(self._compiled.values()):
            self._roundtrip(request, STARTUP_TIMEOUT_S)

    # ---- requests ------------------------------------------------------------
    def _roundtrip(self, request: Request[R], timeout: float) -> R:
        assert self._conn is not None, "worker not started"
        try:
            return exchange(self._conn, request, timeout)
        except (WorkerTimeout, WorkerCrashed):
            self._kill()
            raise

    async def request(self, request: Request[R], timeout: float) -> R:
        """Send one request and return its typed reply (``await client.request(Compile(...), 60)``).

        The way the engine talks to a worker: on a thread, so the event loop never waits on
        the GPU. Raises WorkerTimeout or WorkerCrashed (a fresh worker is left behind first),
        WorkloadError for the workload's own fault, WorkerError for any other in the worker.
        """
        return await asyncio.to_thread(self.request_blocking, request, timeout)

    def request_blocking(self, request: Request[R], timeout: float) -> R:
        """:meth:`request` for a thread of its own (a Ray actor, a synchronous test): the same
        request, waited for here; a timeout or crash leaves a fresh worker behind before raising."""
        with self._lock:
            if self._interrupted and self._proc is not None and self._proc.poll() is not None:
                self._interrupted = False  # killed by interrupt() as its request ended: not a crash
                self._kill()
            if isinstance(request, Prepare):  # a new workload: a standby prepared for the old one is stale
                self._drop_standby()
            if isinstance(request, Prebuild):  # its kernels build in this worker: no swap until the batch's drop
                self._building = True
            elif not self._building:
                self._adopt_standby()
            if self._conn is None:
                self.restart()
            try:
                reply = self._roundtrip(request, timeout)
            except (WorkerTimeout, WorkerCrashed):
                self._forget(candidate_of(request))
                if self._interrupted:  # the user stopped it: the next call starts a fresh worker
                    self._interrupted = False
                    self._kill()
                    raise
                self.restart()
                raise
            self._remember(request, reply)
            if isinstance(request, Drop):
                self._building = False
                self._recycle_if_grown(reply.rss_mb if isinstance(reply, Dropped) else None)
            return reply

    def _recycle_if_grown(self, rss_mb: float | None) -> None:
        """Between candidates: a worker grown by RECYCLE_MB gets a standby, readied in the background."""
        if not isinstance(rss_mb, (int, float)) or RECYCLE_MB <= 0 or self._standby is not None:
            return
        if self._settled_rss is None:
            self._settled_rss = float(rss_mb)
            return
        if rss_mb - self._settled_rss >= RECYCLE_MB:
            self._standby = Standby(self._spawn, self._prepare)

    def _adopt_standby(self) -> None:
        """Under the lock, before a request: swap in a ready standby (a planned replacement).

        Only the compiles are replayed here (the kept candidates, usually the baseline alone);
        a standby that failed is replaced the old way, synchronously, as it was found grown.
        """
        standby = self._standby
        if standby is None or not standby.ready.is_set():
            return
        self._standby = None
        self.recycles += 1
        try:
            if standby.conn is None:
                raise WorkerCrashed("the standby worker did not start")
            for request in list(self._compiled.values()):
                exchange(standby.conn, request, STARTUP_TIMEOUT_S)
        except _REPLAY_FAULTS:
            standby.discard()
            try:
                self._close()
                self._replace()
            except _REPLAY_FAULTS:
                self._kill()  # the call goes on to start (and prepare) a fresh worker
            return
        self._close()  # the old worker quits cleanly
        self._proc, self._conn, self._settled_rss = standby.proc, standby.conn, None

    def _remember(self, request: Request[Any], reply: Any) -> None:
        """What a fresh worker must be told again: the workload prepared, the kept compiles."""
        if isinstance(request, Prepare):
            self._prepare, self._compiled = request, {}
            # a new workload's buffers are not growth: measure from its first candidate anew
            self._settled_rss = None
        elif isinstance(request, Compile) and isinstance(reply, Compiled) and reply.compiled:
            self._compiled[request.cid] = request
        elif isinstance(request, Drop):
            for cid in [request.cid, *(request.cids or ())]:
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

    async def astart(self) -> DeviceInfo:
        return await asyncio.to_thread(self.start)

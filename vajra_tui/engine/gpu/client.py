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
from ..events import DeviceInfo

STARTUP_TIMEOUT_S = 120.0


class WorkerError(Exception):
    """The worker answered with an error (a Python exception inside it)."""


class WorkerTimeout(Exception):
    """The request ran past its deadline; the worker was killed."""


class WorkerCrashed(Exception):
    """The worker died (device lost, driver crash) while serving a request."""


class GPUClient:
    def __init__(self, prefer: str | None = None, nice: int = 0) -> None:
        """``nice`` lowers the worker's CPU priority: on a software adapter the GPU work *is*
        CPU work, and an interactive UI must win the cores when it needs them."""
        self.prefer = prefer
        self.nice = nice
        self.device: DeviceInfo | None = None
        self.restarts = 0
        self._proc: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self._prepare: dict[str, Any] | None = None
        self._compiled: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    # ---- lifecycle -----------------------------------------------------------
    def start(self) -> DeviceInfo:
        ours, theirs = socket.socketpair()
        args = [sys.executable, "-m", "vajra_tui.engine.gpu.worker", str(theirs.fileno())]
        if self.prefer:
            args.append(self.prefer)
        log = cache_dir() / "worker.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as err:  # driver chatter must never reach the terminal UI
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
        return self.device

    def _lower_priority(self) -> None:
        os.nice(self.nice)  # runs in the child between fork and exec

    def close(self) -> None:
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
            if self._conn is None:
                self.restart()
            try:
                reply = self._roundtrip(dict(request), timeout)
            except (WorkerTimeout, WorkerCrashed):
                self._forget(kwargs.get("cid"))
                self.restart()
                raise
            self._remember(op, request, reply)
            return reply

    def _remember(self, op: str, request: dict[str, Any], reply: dict[str, Any]) -> None:
        if op == "prepare":
            self._prepare, self._compiled = request, {}
        elif op == "compile" and reply.get("compiled"):
            self._compiled[request["cid"]] = request
        elif op == "drop":
            self._compiled.pop(request["cid"], None)

    def _forget(self, cid: str | None) -> None:
        if cid is not None:
            self._compiled.pop(cid, None)

    async def acall(self, op: str, timeout: float, **kwargs: Any) -> dict[str, Any]:
        """The same request from async code: the event loop never waits on the GPU."""
        return await asyncio.to_thread(self.call, op, timeout, **kwargs)

    async def astart(self) -> DeviceInfo:
        return await asyncio.to_thread(self.start)

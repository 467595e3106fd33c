"""One exchange with a GPU worker, ending one, and the standby that replaces a grown one.

The client (client.py) owns the process it serves from; these pieces own nothing but
what they are handed, so the standby's thread can build a worker without touching the
client, which adopts it under its own lock between requests.
"""

from __future__ import annotations

import subprocess
import threading
from multiprocessing.connection import Connection
from typing import Callable

from vajra_tui.engine.gpu.protocol import R, Failure, Prepare, Request, WorkerCrashed, WorkerTimeout

STARTUP_TIMEOUT_S = 120.0
# The longest one exchange is waited for. A timeout is a product (a dispatch's deadline times
# the warm-up and timed dispatches of every kernel of a batch) and may grow past what the
# operating system's poll() takes (2**31 ms, about 24.8 days): ``--reps 10000`` with a 30 s
# deadline ended in "OverflowError: timeout is too large". Reps are bounded now
# (settings.MAX_REPS), but a product of deadlines is not. A day is far past any real request,
# and still a bound: a hung worker is killed at last rather than waited on forever.
MAX_EXCHANGE_TIMEOUT_S = 86_400.0


def bounded_timeout(timeout: float) -> float:
    """``timeout`` in seconds, at most :data:`MAX_EXCHANGE_TIMEOUT_S` (an infinite or NaN one
    too, which poll() would refuse or never end on), and never below zero."""
    try:
        value = float(timeout)
    except (TypeError, ValueError, OverflowError):
        return MAX_EXCHANGE_TIMEOUT_S
    if value != value or value > MAX_EXCHANGE_TIMEOUT_S:  # NaN, inf, or merely huge
        return MAX_EXCHANGE_TIMEOUT_S
    return max(value, 0.0)


def exchange(conn: Connection, request: Request[R], timeout: float) -> R:
    """One request and its reply; raises, but cleans nothing up: the caller owns the process.
    A failure the worker sent back is raised as its own type (WorkloadError, WorkerError).
    The wait is bounded by :func:`bounded_timeout` (a day at most)."""
    timeout = bounded_timeout(timeout)
    try:
        conn.send(request)
    except OSError:  # the worker is gone (killed, crashed, device lost)
        raise WorkerCrashed(f"the GPU worker was gone before {request.op}") from None
    if not conn.poll(timeout):
        raise WorkerTimeout(f"{request.op} ran past its {timeout:.1f} s deadline")
    try:
        reply = conn.recv()
    except (EOFError, OSError):
        raise WorkerCrashed(f"the GPU worker died during {request.op}") from None
    if isinstance(reply, Failure):
        raise reply.exception()
    return reply


def end_worker(proc: subprocess.Popen | None, conn: Connection | None) -> None:
    """Kill and reap a worker (no zombie left behind) and close its connection."""
    if proc is not None:
        if proc.poll() is None:
            proc.kill()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
    if conn is not None:
        conn.close()


class Standby:
    """A successor to a grown worker, started and prepared on a thread of its own.

    The thread never touches the client: it builds its own process and connection,
    which the client adopts under its lock between requests (or discards). ``ready``
    is set when the thread is done; ``conn`` is None then if it failed.
    """

    def __init__(self, spawn: Callable[..., tuple], prepare: Prepare | None) -> None:
        self.proc: subprocess.Popen | None = None
        self.conn: Connection | None = None
        self.ready = threading.Event()
        self._guard = threading.Lock()  # ``proc`` and ``_dropped`` between the thread and discard()
        self._dropped = False
        self._thread = threading.Thread(target=self._run, args=(spawn, prepare), daemon=True,
                                        name="vajra-standby-worker")
        self._thread.start()

    def _started(self, proc: subprocess.Popen) -> None:
        with self._guard:  # visible at once, so discard() can kill it while it starts
            self.proc = proc
            if self._dropped:
                proc.kill()

    def _run(self, spawn: Callable[..., tuple], prepare: Prepare | None) -> None:
        conn = None
        try:
            _, conn, _ = spawn(self._started)
            if prepare is not None:  # the float64 references: the slow part, off the critical path
                exchange(conn, prepare, STARTUP_TIMEOUT_S * 5)
            self.conn = conn
        except Exception:  # a failed standby is discarded; the client falls back to a restart
            end_worker(self.proc, conn)
        finally:
            self.ready.set()

    def discard(self) -> None:
        with self._guard:
            self._dropped = True
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
        self._thread.join(10)  # its hello or prepare ends as the process dies
        end_worker(self.proc, self.conn)
        self.conn = None


__all__ = ["STARTUP_TIMEOUT_S", "Standby", "end_worker", "exchange"]

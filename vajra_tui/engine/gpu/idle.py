"""GPU workers a finished run leaves idle, for the next run of the same process.

Starting a worker is a process spawn, a Vulkan instance, an adapter enumeration and a
device: 1.3-2 s on an H200, more than a seed-size tune spends on its kernels. A script that
tunes nine workloads one ``vajra_tui.tune`` call at a time, or a TUI session that runs
again, paid it every time. A run that ends cleanly therefore hands its worker here, its
workload released (no GPU memory held), and the next client that would start an identical
worker (same adapter choice, priority, NVML identity, environment and working folder) takes
it instead.

Only a worker that answered its last request is parked: a killed, hung or crashed one never
is. A parked worker ends after ``VAJRA_WORKER_IDLE_S`` seconds (default 30; 0 turns parking
off) or when this process exits; its socket closing ends it too, if the parent dies.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import subprocess
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, Hashable

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.gpu.protocol import Hello, Quit, Release
from vajra_tui.engine.gpu.standby import end_worker, exchange

RELEASE_TIMEOUT_S = 10.0
MOST_PARKED = 4  # one per adapter of a multi-GPU run; beyond that the oldest ends
HELLO_TIMEOUT_S = 5.0


def idle_seconds() -> float:
    """How long a parked worker waits for the next run (``VAJRA_WORKER_IDLE_S``; 0: never parks)."""
    try:
        return max(0.0, float(os.environ.get("VAJRA_WORKER_IDLE_S", "30")))
    except ValueError:
        return 30.0


# Variables that name a moment, not a configuration: pytest rewrites PYTEST_CURRENT_TEST at
# every phase of every test, so with it in the key a suite that scripts Vajra (ours, or a
# user's CI) never reused a parked worker and paid a process, a Vulkan instance and a device
# for every test. A worker does not read it.
MOMENTARY = frozenset({"PYTEST_CURRENT_TEST"})


def worker_key(prefer: Any, nice: int, nvml_index: int | None, env: dict[str, str]) -> Hashable:
    """What makes two workers interchangeable: everything their start was given (but the
    :data:`MOMENTARY` variables), the working folder included (a workload named by a relative
    path resolves there)."""
    kept = sorted((k, v) for k, v in env.items() if k not in MOMENTARY)
    digest = hashlib.sha256(repr(kept).encode()).hexdigest()
    return (str(prefer), nice, nvml_index, os.getcwd(), digest)


@dataclass
class _Parked:
    proc: subprocess.Popen
    conn: Connection
    device: DeviceInfo
    timer: threading.Timer = field(repr=False)


_LOCK = threading.Lock()
_PARKED: dict[Hashable, _Parked] = {}


def park(key: Hashable, proc: subprocess.Popen, conn: Connection, device: DeviceInfo) -> bool:
    """Keep a healthy worker for the next run: True if kept (the caller no longer owns it).
    Its workload is released first; a worker that fails that, or a key already holding
    one, is not kept and stays the caller's to end."""
    wait = idle_seconds()
    if wait <= 0 or proc.poll() is not None:
        return False
    with _LOCK:
        if key in _PARKED:
            return False
    try:
        exchange(conn, Release(), RELEASE_TIMEOUT_S)
    except Exception:  # noqa: BLE001 - any fault: the caller ends it the usual way
        return False
    timer = threading.Timer(wait, _expire, args=(key, proc))
    timer.daemon = True
    with _LOCK:
        if key in _PARKED:
            return False
        _PARKED[key] = _Parked(proc, conn, device, timer)
        evicted = [_PARKED.pop(k) for k in list(_PARKED)[:max(0, len(_PARKED) - MOST_PARKED)]]
    timer.start()
    for old in evicted:
        old.timer.cancel()
        _end(old)
    return True


def take(key: Hashable) -> tuple[subprocess.Popen, Connection, DeviceInfo] | None:
    """The worker parked under ``key``, alive and answering, or None."""
    with _LOCK:
        parked = _PARKED.pop(key, None)
    if parked is None:
        return None
    parked.timer.cancel()
    try:
        if parked.proc.poll() is not None:
            raise OSError("ended while parked")
        exchange(parked.conn, Hello(), HELLO_TIMEOUT_S)
    except Exception:  # noqa: BLE001 - a worker that does not answer is ended, not reused
        _end(parked)
        return None
    return parked.proc, parked.conn, parked.device.model_copy(deep=True)


def parked_pids() -> list[int]:
    """The processes parked now (tests and ``doctor`` see them by pid)."""
    with _LOCK:
        return [p.proc.pid for p in _PARKED.values()]


def end_all() -> None:
    """End every parked worker (at exit, and for tests)."""
    with _LOCK:
        parked = list(_PARKED.values())
        _PARKED.clear()
    for p in parked:
        p.timer.cancel()
        _end(p)


def _expire(key: Hashable, proc: subprocess.Popen) -> None:
    with _LOCK:
        parked = _PARKED.get(key)
        if parked is None or parked.proc is not proc:
            return
        del _PARKED[key]
    _end(parked)


def _end(parked: _Parked) -> None:
    """Quit politely, then make sure: a parked worker has nothing in flight."""
    try:
        parked.conn.send(Quit())
        parked.proc.wait(2)
    except (OSError, subprocess.TimeoutExpired):
        pass
    end_worker(parked.proc, parked.conn)


atexit.register(end_all)

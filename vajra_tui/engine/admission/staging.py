"""Staging: a candidate's sanitize, stitch and tile check, on other cores when that pays.

The three are pure text work: source in, source, plan and diagnostics out. At large sizes
the library's kernels are unrolled into 20-150 KB of WGSL, and the Python front end takes
0.1-0.2 s to read each one; a generation of 24 took 4.5-5 s on the event loop's thread,
during which no lane's GPU could start (measured on a 2xH200 host, issue #14). So a
generation's kernels are staged together in a pool of processes, one per spare core,
each of which loads the workload from its spec as the GPU worker does. Small batches
and hosts with few cores stage in this process, where a pool's start would cost more
than it saves. Either way the outcome is the same :class:`Staged`, and the session
emits the same events from it in the same order.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from vajra_tui.engine.child import child_env, module_command
from vajra_tui.engine.admission.contract import ContractError, Stitched, prelude, stitch
from vajra_tui.engine.events import Diagnostic
from vajra_tui.engine.workloads import Size, Workload, get_workload

POOL_MIN_CHARS = 200_000  # a batch smaller than this stages here while no pool runs (a start is ~0.5 s)
POOL_WARM_MIN_CHARS = 64_000
"""A batch of several jobs this big (about 0.4 s of staging here on an H200 host) starts the
staging processes for the generations to come, staged here itself while they start, and goes
to them once they run. Six fft kernels (121k characters) took 0.85 s here with the worker
idle. Below it, staging here costs less than the processes save: their jobs come back one
by one, so the worker's first prebuild holds fewer kernels to compile side by side."""
POOL_MIN_CORES = 4  # with fewer, the GPU workers and this process already fill them


@dataclass
class Limits:
    """What the adapter allows that stitching checks: the grid's largest side, workgroup memory."""

    max_dim: int = 65535
    max_workgroup_bytes: int | None = None


@dataclass
class Staged:
    """What staging one candidate found. ``source`` is the body that will be compiled:
    the repaired one when the sanitizer repaired it, else the author's."""

    source: str
    findings: list[Diagnostic] = field(default_factory=list)
    diff: str = ""
    repaired: bool = False
    refused: bool = False  # a generated kernel whose barrier the sanitizer could not repair
    stitched: Stitched | None = None
    contract: Diagnostic | None = None  # the contract broken, located in ``source``
    tile_warnings: list[Diagnostic] = field(default_factory=list)
    probe: bool = False  # whether the grid probe may shrink its dispatch (screening.probe_applies)


def stage_text(workload: Workload, size: Size, source: str, generated: bool, sanitize_it: bool,
               constants: dict, limits: Limits) -> Staged:
    """Sanitize (generated kernels are repaired or refused; a user's is only flagged),
    stitch, and read the tile header, as one pure step."""
    from vajra_tui.engine.admission.screening import probe_applies
    from vajra_tui.engine.wgsl.sanitize import sanitize
    from vajra_tui.engine.wgsl.tile_check import check_tile_header

    staged = Staged(source=source)
    if sanitize_it:
        fixed = sanitize(source, prelude=prelude(workload, size, (1, 1), 1, set()))
        if fixed.findings:
            staged.findings, staged.repaired = list(fixed.findings), generated and fixed.repaired
            staged.diff = fixed.diff if staged.repaired else ""
            if staged.repaired:
                staged.source = fixed.source
            elif generated:
                staged.refused = True
                return staged
    try:
        st = stitch(workload, size, staged.source, limits.max_dim, limits.max_workgroup_bytes,
                    constants=constants)
    except ContractError as exc:
        staged.contract = exc.diagnostic
        return staged
    except (ArithmeticError, ValueError, LookupError, RecursionError) as exc:
        staged.contract = unreadable(exc)  # a front-end gap: this candidate is refused, the run goes on
        return staged
    staged.stitched = st
    staged.tile_warnings = check_tile_header(staged.source, workload.grid_of_output(size), st.workgroup_size,
                                             tile=st.tile, folds_large_grids=True)
    staged.probe = probe_applies(st, staged.source)
    return staged


MAX_REASON_CHARS = 300
"""How much of an unexpected front-end error's text a rejection carries (it may quote the kernel)."""


def unreadable(exc: BaseException) -> Diagnostic:
    """The one-line rejection for a kernel the front end failed to read in a way it did not
    foresee (each such case is a bug to fix there; the run must not end on it)."""
    text = " ".join(str(exc).split())[:MAX_REASON_CHARS] or "no detail"
    return Diagnostic(line=1, column=1, message=f"the WGSL front end cannot read this kernel "
                                                f"({type(exc).__name__}: {text})")


POOL_JOB_TIMEOUT_S = 120.0


def _stage_by_spec(spec: str, size: Size, source: str, generated: bool, sanitize_it: bool,
                   constants: dict, limits: Limits) -> Staged:
    """In a staging process: the workload from its spec (loaders remember what they loaded)."""
    return stage_text(get_workload(spec), size, source, generated, sanitize_it, constants, limits)


class StagingRefused(RuntimeError):
    """A staging process could not stage a job (most often: it cannot import the workload,
    which only this process can, e.g. a module made at run time with no file on any path)."""


# workloads whose jobs a staging process refused: staged in this process from then on
_HERE_ONLY: set[str] = set()


class _Stager:
    """One staging process, fed one job at a time over a socket pair.

    A plain child (``python -m vajra_tui.engine.admission.staging``), not multiprocessing: its
    spawn and forkserver methods run the parent's ``__main__`` again in every child, and
    that is a user's script when Vajra is driven from Python.
    """

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        self.proc = subprocess.Popen(module_command("vajra_tui.engine.admission.staging", str(theirs.fileno())),
                                     pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, env=child_env(),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        theirs.close()
        self.conn = Connection(ours.detach())
        self.lock = threading.Lock()  # the lanes of a run stage their batches at the same time

    def stage(self, job: tuple) -> Staged:
        """Raises when the child fails (gone, late, or its own error): the caller stages
        that job here instead."""
        with self.lock:
            self.conn.send(job)
            if not self.conn.poll(POOL_JOB_TIMEOUT_S):
                self.proc.kill()
                raise TimeoutError("a staging process ran past its deadline")
            ok, value = self.conn.recv()
        if not ok:
            raise StagingRefused(value)
        return value

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.conn.close()


_STAGERS: list[_Stager] = []


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def pool_size() -> int:
    """Processes for staging: ``VAJRA_STAGING_PROCESSES`` if set (0: never), else the cores
    left after this process, up to 8; 0 on hosts with fewer than POOL_MIN_CORES."""
    env = os.environ.get("VAJRA_STAGING_PROCESSES", "").strip()
    if env.isdigit():
        return int(env)
    cores = _cores()
    return min(8, cores - 1) if cores >= POOL_MIN_CORES else 0


def _pool() -> list[_Stager]:
    """The staging processes, started at the first batch that needs them and kept."""
    _STAGERS[:] = [s for s in _STAGERS if s.alive()]
    want = pool_size()
    while len(_STAGERS) > want:  # fewer asked for than run (VAJRA_STAGING_PROCESSES lowered)
        _STAGERS.pop().close()
    while len(_STAGERS) < want:
        _STAGERS.append(_Stager())
    return list(_STAGERS)


def shutdown() -> None:
    """End the staging processes (at exit, and in tests that count processes)."""
    while _STAGERS:
        _STAGERS.pop().close()


atexit.register(shutdown)


_RUNNING: set[asyncio.Task] = set()  # batches being staged (the loop keeps weak references)


def _for_pool(jobs: list[tuple[str, bool, bool, dict]], spec: str) -> bool:
    """Whether this batch goes to the staging processes. A batch of POOL_WARM_MIN_CHARS or
    more starts them when they do not run yet (in the background: it is staged here)."""
    if not spec or spec in _HERE_ONLY:
        return False
    chars = sum(len(src) for src, *_ in jobs)
    forced = os.environ.get("VAJRA_STAGING_PROCESSES", "").strip().isdigit()
    if chars >= POOL_MIN_CHARS or (forced and len(jobs) > 1):
        return True
    if len(jobs) < 2 or chars < POOL_WARM_MIN_CHARS or pool_size() == 0:
        return False
    running = any(s.alive() for s in _STAGERS)
    _pool()  # started, or kept to its size
    return running


def stage_futures(workload: Workload, spec: str, size: Size, jobs: list[tuple[str, bool, bool, dict]],
                  limits: Limits) -> list[asyncio.Future]:
    """Start staging ``jobs`` (source, generated, sanitize, constants); one future per job,
    in order, each done as soon as its job is (admission starts on the first while the rest
    are staged). On the staging processes when the batch is big enough to pay for them,
    each job going to the next free one; a job whose process fails is staged here. A small
    batch is staged here and now."""
    loop = asyncio.get_running_loop()
    futures: list[asyncio.Future] = [loop.create_future() for _ in jobs]
    stagers = _pool() if _for_pool(jobs, spec) else []
    todo = list(range(len(jobs)))

    def here(k: int) -> None:
        try:
            futures[k].set_result(stage_text(workload, size, *jobs[k], limits))
        except Exception as exc:  # noqa: BLE001 - raised where the candidate is awaited, as before
            futures[k].set_exception(exc)

    async def drain(stager: _Stager) -> None:
        while todo:
            k = todo.pop(0)
            src, gen, san, consts = jobs[k]
            try:
                futures[k].set_result(await asyncio.to_thread(
                    stager.stage, (spec, dict(size), src, gen, san, dict(consts), limits)))
            except StagingRefused:  # the child is well, the job is not: this workload stays here
                _HERE_ONLY.add(spec)
                here(k)
                todo.clear()
                return
            except Exception:  # noqa: BLE001 - a broken pipe, a timeout: staged here
                stager.close()  # _pool() starts another for the next batch
                here(k)
                return

    async def run() -> None:
        await asyncio.gather(*(drain(s) for s in stagers))
        for k in range(len(jobs)):  # what no process staged (they failed or refused): here
            if not futures[k].done():
                here(k)

    if not stagers:
        for k in range(len(jobs)):
            here(k)
        return futures
    task = asyncio.ensure_future(run())
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)
    return futures


async def stage_all(workload: Workload, spec: str, size: Size, jobs: list[tuple[str, bool, bool, dict]],
                    limits: Limits) -> list[Staged]:
    """Every job of :func:`stage_futures`, staged, in order."""
    return [await f for f in stage_futures(workload, spec, size, jobs, limits)]


def serve(fd: int) -> None:
    """A staging process: jobs in, (ok, Staged or the error's text) out, until the parent goes.

    Public: it is this module's entry point as a child (``python -m``, see :class:`_Stager`),
    called through the module's package name so that what it pickles unpickles in the parent.
    """
    conn = Connection(fd)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply = (True, _stage_by_spec(*job))
        except Exception as exc:  # noqa: BLE001 - the parent stages it itself and says why
            reply = (False, f"{type(exc).__name__}: {exc}")
        conn.send(reply)


if __name__ == "__main__":  # by its package name, so what it pickles unpickles in the parent
    from vajra_tui.engine.admission import staging

    staging.serve(int(sys.argv[1]))

"""The worker's compiled pipelines: built once, reused by content, several at a time.

A candidate's pipeline is keyed by what was compiled (its source with workgroup memory
zeroed, and its pipeline constants), so a finalist timed again in a shoot-out, or a
copy under another name, is never built twice. The session names the current finalists
whenever it drops a batch (``keep``), and their pipelines stay until they stop being
finalists: a generation of 96 drops far more kernels than the few recent ones kept, and
an unrolled finalist rebuilt for the shoot-out costs seconds on NVIDIA. Drivers compile
one pipeline per thread, and an NVIDIA compile of an unrolled library kernel takes
0.1-3 s, so a generation's kernels are built together on a thread pool (:meth:`PipelineStore.prebuild`)
while they are admitted one by one; admission finds each one built, or waits for that
one only. Whatever fails there is left for :meth:`PipelineStore.compile` to report, on
the worker's own thread, with its located message.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Sequence

from vajra_tui.engine.wgsl.memory import workgroup_memory_problem, zero_init_source
from vajra_tui.engine.gpu.protocol import Compiled, PrebuildItem, Prebuilt
from vajra_tui.engine.gpu.runtime import Runtime

KEEP_RECENT = 8  # pipelines of finished candidates kept for a shoot-out
MAX_BUILD_THREADS = 8


class PipelineStore:
    """Pipelines by candidate id, plus the recently finished and the prebuilt, by content."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self.by_cid: dict[str, tuple[Any, tuple[int, int, int]]] = {}
        self.keys: dict[str, str] = {}  # cid -> hash of its compiled source
        self.recent: OrderedDict[str, Any] = OrderedDict()
        self.prebuilt: dict[tuple[str, str], Future] = {}  # builds prebuild() started, by source
        self.finalists: dict[str, tuple[str, Any]] = {}  # cid -> (key, pipeline), kept for shoot-outs
        self.modules: dict[str, str] = {}  # cid -> the module it was built from (its layout's)

    def clear(self) -> None:
        """A new workload: every pipeline was built against the previous buffers' layout."""
        self.by_cid.clear()
        self.keys.clear()
        self.recent.clear()
        self.prebuilt.clear()
        self.finalists.clear()
        self.modules.clear()

    def __getitem__(self, cid: str) -> tuple[Any, tuple[int, int, int]]:
        return self.by_cid[cid]

    def __contains__(self, cid: str) -> bool:
        return cid in self.by_cid

    # ---- building ------------------------------------------------------------
    def compile(self, cid: str, source: str, dispatch: Sequence[int],
                constants: dict[str, Any] | None = None, entry: str = "main",
                bind: dict[str, str] | None = None) -> Compiled:
        """Compile what runs: ``source`` with its workgroup memory zeroed (WebGPU's rule).

        A kernel over the adapter's workgroup-memory limit, or one whose workgroup
        memory cannot be sized, is refused here whatever the contract said: wgpu
        would build it and lavapipe would run it. Compile errors are reported for
        ``source`` as given, so their lines and columns are the caller's. ``constants``
        set the kernel's ``override``s as pipeline constants (never by editing the text).
        """
        self.by_cid.pop(cid, None)  # a recompile replaces (and releases) the old pipeline
        self.keys.pop(cid, None)
        self.modules[cid] = source
        entry = _entry_key(entry, bind)
        built = self._prebuilt(source, constants, entry)
        problem, guarded, prebuilt = built if built is not None else (*self._read(source, constants, entry), None)
        if problem is not None:
            own = self._compile_error(source, constants, entry)
            if own:  # the compiler's own complaint first, at its own line
                return Compiled(compiled=False, error=own)
            message, line, column = problem
            return Compiled(compiled=False, error=located(message, source, line, column))
        key = _key(guarded, constants, entry)
        reused = prebuilt or self.recent.pop(key, None) or self._kept(key) or next(
            (self.by_cid[c][0] for c, k in self.keys.items() if k == key and c in self.by_cid), None)
        if reused is not None:  # built before (prebuilt, a finalist timed again, a copy)
            self.by_cid[cid], self.keys[cid] = (reused, tuple(dispatch)), key
            # "built": whether this kernel's pipeline had to be built for it (by its prebuild)
            return Compiled(compiled=True, zero_init=guarded is not source, reused=True,
                            built=prebuilt is not None)
        try:
            pipeline = self.rt.compile(guarded, constants, *split_entry(entry))
        except Exception as exc:  # wgpu raises GPUValidationError and friends
            own = str(exc) if guarded is source else self._compile_error(source, constants, entry)
            if own:  # located in the caller's text, not in the zero-initialised one
                return Compiled(compiled=False, error=own)
            first = (str(exc).strip().splitlines() or ["?"])[0]
            return Compiled(compiled=False, error=located(
                f"its workgroup memory could not be zero-initialised ({first}): a kernel that could "
                "read what an earlier dispatch left there is not run", source, 1, 1))
        self.by_cid[cid], self.keys[cid] = (pipeline, tuple(dispatch)), key
        return Compiled(compiled=True, zero_init=guarded is not source, built=True)

    def prebuild(self, items: Sequence[PrebuildItem], more: bool = False) -> Prebuilt:
        """Start reading and building these kernels (``source``, ``constants``) on a thread
        pool, for ``compile`` to find, and answer at once.

        Admission then compiles (finds) and verifies each kernel as soon as its own
        pipeline is ready, while the rest are still read and built: the largest unrolled
        kernel of a generation takes seconds on NVIDIA, and nothing else waits for it.
        Leftovers of an earlier batch are released first (``more``: these join the batch's
        earlier calls): they belonged to candidates that never reached compile (duplicates,
        contract failures), and pipelines cost memory.
        """
        if not more:
            self.prebuilt.clear()
        jobs = {_index(item.source, item.constants or None, _entry_key(item.entry, item.bind)): item
                for item in items}
        if not jobs:
            return Prebuilt(queued=0)
        known = set(self.recent) | set(self.keys.values()) | {k for k, _ in self.finalists.values()}
        threads = max(1, min(build_threads(), len(jobs)))
        pool = ThreadPoolExecutor(threads, thread_name_prefix="vajra-build")
        for index, item in jobs.items():
            self.prebuilt[index] = pool.submit(self._build, item.source, item.constants or None, known,
                                               _entry_key(item.entry, item.bind))
        pool.shutdown(wait=False)  # its threads end when the queue is built
        return Prebuilt(queued=len(jobs), threads=threads)

    def _build(self, source: str, constants: dict[str, Any] | None,
               known: set[str], entry: str = "main") -> tuple[tuple | None, str, Any | None]:
        """On a build thread: the front end's reading, then the pipeline unless it is refused,
        already built, or fails (compile() then reports why, on the worker's own thread)."""
        problem, guarded = self._read(source, constants, entry)
        if problem is not None or _key(guarded, constants, entry) in known:
            return problem, guarded, None
        try:
            return problem, guarded, self.rt.compile(guarded, constants, *split_entry(entry))
        except Exception:  # noqa: BLE001 - compiled again where its message is located
            return problem, guarded, None

    def _prebuilt(self, source: str, constants: dict[str, Any] | None,
                  entry: str = "main") -> tuple[tuple | None, str, Any | None] | None:
        """What a prebuild made of this kernel (waiting for it if it is still being built):
        (why it is refused, its guarded source, its pipeline or None); None if not prebuilt."""
        future = self.prebuilt.pop(_index(source, constants, entry), None)
        if future is None:
            return None
        try:
            problem, guarded, pipeline = future.result()
        except Exception:  # noqa: BLE001 - read and compiled again on this thread
            return None
        return problem, (source if guarded == source else guarded), pipeline  # "is source": untouched

    def drop(self, cid: str, keep: bool = False) -> bool:
        """A finished candidate's pipeline goes, unless another candidate shares it or it is a
        finalist (``keep``); it stays among the recent few for a shoot-out. True when
        something was released."""
        entry, key = self.by_cid.pop(cid, None), self.keys.pop(cid, None)
        if not keep:
            self.modules.pop(cid, None)
        if entry is None:
            return False
        if keep and key is not None:
            self.finalists[cid] = (key, entry[0])
            return False
        if key is not None and key not in self.keys.values():
            self._recent(key, entry[0])
        return True

    def keep_only(self, finalists: set[str]) -> bool:
        """The session's finalists now: pipelines of earlier finalists that are no longer
        among them join the recent few (and go in turn). True when one was let go."""
        gone = [cid for cid in self.finalists if cid not in finalists]
        for cid in gone:
            self._recent(*self.finalists.pop(cid))
        return bool(gone)

    def _kept(self, key: str) -> Any | None:
        return next((pipeline for k, pipeline in self.finalists.values() if k == key), None)

    def _recent(self, key: str, pipeline: Any) -> None:
        self.recent[key] = pipeline
        while len(self.recent) > KEEP_RECENT:
            self.recent.popitem(last=False)

    # ---- helpers ---------------------------------------------------------------
    def _read(self, source: str, constants: dict[str, Any] | None, entry: str = "main") -> tuple[tuple | None, str]:
        ints = {k: int(v) for k, v in (constants or {}).items() if isinstance(v, int) and not isinstance(v, bool)}
        limit = self.rt.info.limits.get("max-compute-workgroup-storage-size")
        try:
            name = split_entry(entry)[0]
            problem = workgroup_memory_problem(source, limit, ints, name)
            return problem, (zero_init_source(source, ints, name) if problem is None else source)
        except Exception as exc:  # noqa: BLE001 - a declaration this front end cannot follow
            return (f"cannot read its workgroup memory ({exc})", 1, 1), source

    def _compile_error(self, source: str, constants: dict[str, Any] | None = None, entry: str = "main") -> str:
        """The compiler's error for ``source`` as given, or '' when it compiles."""
        try:
            self.rt.compile(source, constants, *split_entry(entry))
        except Exception as exc:  # noqa: BLE001
            return str(exc) or exc.__class__.__name__
        return ""


def build_threads() -> int:
    """Threads a prebuild compiles on: ``VAJRA_BUILD_THREADS`` if set, else this process's
    cores, up to MAX_BUILD_THREADS (each lane's worker has a pool of its own)."""
    env = os.environ.get("VAJRA_BUILD_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(MAX_BUILD_THREADS, cores))


def _entry_key(entry: str, bind: dict[str, str] | None) -> str:
    """An entry point with the buffers its pass rebinds: both decide the pipeline's layout,
    so both key it (``entry|a=b,c=d``); split again by :func:`split_entry`."""
    return entry + ("|" + ",".join(f"{k}={v}" for k, v in sorted(bind.items())) if bind else "")


def split_entry(key: str) -> tuple[str, dict[str, str]]:
    entry, _, rest = key.partition("|")
    return entry, dict(pair.split("=", 1) for pair in rest.split(",")) if rest else {}


def _index(source: str, constants: dict[str, Any] | None, entry: str = "main") -> tuple[str, str]:
    """A prebuild's kernel as compile() will name it: its source as sent, its constants and entry."""
    return source, json.dumps(constants or {}, sort_keys=True) + "@" + entry


def _key(guarded: str, constants: dict[str, Any] | None, entry: str = "main") -> str:
    return hashlib.sha256((guarded + json.dumps(constants or {}, sort_keys=True) + "@" + entry).encode(
        "utf-8", "surrogatepass")).hexdigest()


def located(message: str, source: str, line: int, column: int) -> str:
    """A message in Naga's frame, so diagnostics place it at the line of the declaration."""
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    gutter = " " * len(str(line))
    return (f"Shader validation error: {message}\n{gutter} ┌─ wgsl:{line}:{column}\n{gutter} │\n"
            f"{line} │ {text}\n{gutter} │ {' ' * (column - 1)}^ {message}\n")

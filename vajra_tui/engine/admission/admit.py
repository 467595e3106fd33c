"""Admission: one candidate through sanitize, stitch, compile, verify and the grid probe.

:class:`Admission` is a collaborator a :class:`~vajra_tui.engine.session.Session` builds
and holds (the batch half is :class:`~vajra_tui.engine.timing.batches.BatchTiming`). What
is fixed for the session's life comes in through the constructor; what changes during a
run (the device once opened, the deadline once the baseline is timed) and the session's
books and announcements are read through :class:`AdmissionSession`, so nothing here
touches an attribute the session does not declare. A candidate that fails anywhere here
becomes a result with its reason, never an exception.
"""

from __future__ import annotations

import asyncio
from typing import Protocol, Sequence

from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.admission.contract import Stitched, parse_only_source
from vajra_tui.engine.admission.contract import stitch as stitch_source
from vajra_tui.engine.events import (
    CandidateFinished, CandidateResult, CandidateSource, CompileFinished, DeviceInfo, Diagnostic, Event,
    Notice, SanitizerRewrite, StageChanged, VerificationFinished,
)
from vajra_tui.engine.gpu.client import WorkerCrashed, WorkerError, WorkerTimeout
from vajra_tui.engine.gpu.loop_limit import note_for
from vajra_tui.engine.gpu.protocol import Parse, Prebuild, PrebuildItem, Verify
from vajra_tui.engine.admission.screening import duplicate_of, over_dispatch
from vajra_tui.engine.admission.staging import Limits, Staged, stage_futures
from vajra_tui.engine.scale.lane import Lane
from vajra_tui.engine.wgsl.diagnostics import LineMap, diagnostics_from_error
from vajra_tui.engine.workloads import Size, Workload

COMPILE_TIMEOUT_S = 60.0
PREBUILD_S_PER_KERNEL = 2.0  # on top of one compile's deadline: the worker reads each kernel before it answers


class AdmissionSession(Protocol):
    """What admission reads and asks of its session (a Session is one).

    The books are the session's: admission files each candidate's stitched kernel there and
    fills in its result. Queueing, recalling and failing a candidate are the session's too,
    since it announces every candidate once and keeps final outcomes on disk.
    """

    candidates: dict[str, Candidate]
    results: dict[str, CandidateResult]
    stitched: dict[str, Stitched]

    @property
    def device(self) -> DeviceInfo | None: ...

    @property
    def deadline_s(self) -> float: ...

    def deadline_for(self, cid: str) -> float: ...

    def emit(self, event: Event) -> None: ...

    def queue(self, cand: Candidate) -> CandidateResult: ...

    def recall(self, result: CandidateResult) -> CandidateResult | None: ...

    def fail(self, result: CandidateResult, status: str, reason: str) -> bool: ...


class Admission:
    """Everything that happens to one candidate before it is timed."""

    def __init__(self, session: AdmissionSession, client: Lane, workload: Workload, size: Size,
                 spec: str, seeds: Sequence[int], resume: bool = False) -> None:
        """``spec``: what the staging processes import to get the workload back; ``seeds``:
        every candidate verifies on each (the first also serves the grid probe); ``resume``:
        results of earlier runs are recalled, so a generation is not prebuilt."""
        self.session, self.client = session, client
        self.workload, self.size, self.spec = workload, size, spec
        self.seeds, self.resume = tuple(seeds), resume
        self.loop_note_told = False  # llvmpipe's loop limit, told at the first failed verification

    async def admit(self, cand: Candidate) -> bool:
        """Prepare a candidate for timing; False (with its result emitted) if it failed."""
        return cand.id in await self.admit_many([cand])

    async def admit_many(self, candidates: list[Candidate]) -> list[str]:
        """Admit a generation; the ids that survived, in order.

        Every candidate is sanitized and stitched (on other cores when they are big:
        staging.py), and the worker builds the pipelines of those staged so far on its
        threads (a driver compiles one per thread) while each candidate in turn is
        compiled (found built), verified and probed: the first is verified while the
        rest are still staged and built.
        """
        results = [self.session.queue(cand) for cand in candidates]
        staging = self._start_staging(candidates)
        build = len(staging) > 1 and not self.resume  # resumed kernels are mostly not compiled at all
        sent: set[int] = set()
        admitted = []
        for k, (cand, result) in enumerate(zip(candidates, results)):
            if k not in staging:
                self.session.fail(result, "no_kernel", cand.no_kernel_reason or "no kernel in response")
                continue
            staged = await self._staged(cand, result, await staging[k])
            if staged is None:
                continue
            if build and k not in sent:
                await self._prebuild_staged(staging, sent, first=k)
            if await self._admit_staged(cand, *staged):
                admitted.append(cand.id)
        return admitted

    def _start_staging(self, cands: list[Candidate]) -> dict[int, asyncio.Future]:
        """Staging of every candidate with a source begun: its index -> the future of its Staged."""
        todo = [k for k, cand in enumerate(cands) if cand.source.strip()]
        futures = stage_futures(
            self.workload, self.spec, self.size,
            [(cands[k].source, _generated(cands[k]), cands[k].strategy != "baseline", dict(cands[k].constants))
             for k in todo],
            self._limits())
        return dict(zip(todo, futures))

    async def _prebuild_staged(self, staging: dict[int, asyncio.Future], sent: set[int], first: int) -> None:
        """Send the worker ``first`` and every other kernel staged by now, not sent before."""
        ready = [first] + [k for k, f in staging.items() if k not in sent and k != first and f.done()
                           and not f.cancelled() and f.exception() is None]
        sent.update(ready)
        stitched = [st for st in (staging[k].result().stitched for k in ready) if st is not None]
        if stitched:
            await self.prebuild(stitched, more=len(sent) > len(ready))

    async def prebuild(self, stitched: list[Stitched], more: bool = False) -> None:
        """Best effort: a failure here costs only time, as admission compiles each again.
        ``more``: these join the batch's earlier prebuilds (otherwise their leftovers go)."""
        items = [PrebuildItem(source=p.source, constants=p.constants or None, entry=p.entry, bind=dict(p.bind))
                 for st in stitched for p in (st.passes or [])]
        try:  # a compile that hangs costs about one compile's deadline, not one per kernel
            await self.client.request(Prebuild(items=items, more=more),
                                      COMPILE_TIMEOUT_S + PREBUILD_S_PER_KERNEL * len(items))
        except (WorkerTimeout, WorkerCrashed, WorkerError):
            pass

    async def _staged(self, cand: Candidate, result: CandidateResult,
                      staged: Staged) -> tuple[CandidateResult, Staged] | None:
        """What staging found, said as events; None when the candidate failed there."""
        if cand.strategy != "baseline" and not self._sanitizer_said(cand, result, staged):
            return None
        if staged.contract is not None:
            await self._contract_failed(result, staged.contract, staged.source)
            return None
        return result, staged

    async def _admit_staged(self, cand: Candidate, result: CandidateResult, staged: Staged) -> bool:
        """Compile, verify (two seeds) and probe the grid of a staged candidate.

        A copy is judged against the candidates admitted before it, here rather than when
        staged: an earlier twin that crashed under a dying worker leaves this one its run.
        """
        st, source = staged.stitched, staged.source
        assert st is not None
        twin = duplicate_of(st.sha256, cand.id, self.session.stitched, self.session.results)
        self.session.stitched[cand.id] = st
        self._publish(result, st, source)
        if twin is not None:
            result.duplicate_of = twin.name
            return self.session.fail(result, "duplicate", f"same kernel as {twin.name}: not compiled or timed twice")
        earlier = self.session.recall(result)
        if earlier is not None:
            return self._recalled(result, earlier)
        for d in staged.tile_warnings:  # before it runs: a header that leaves outputs uncomputed
            self.session.emit(Notice(level="warning",
                                     message=f"{cand.name}: tile header {d.line}:{d.column}: {d.message}"))
        if not (await self._compile(result, st, source) and await self._verify(result)):
            return False
        return await self._right_size(result, st, source, staged.probe)

    def _limits(self) -> Limits:
        """What the adapter allows that stitching checks (the defaults before it is known)."""
        limits = self.session.device.limits if self.session.device else {}
        return Limits(limits.get("max-compute-workgroups-per-dimension", 65535),
                      limits.get("max-compute-workgroup-storage-size"))

    def stitch(self, source: str, tile: tuple[int, int] | None = None,
               constants: dict | None = None) -> Stitched:
        """``source`` stitched to this workload and size within the adapter's limits (the
        grid probe stitches again with a larger ``tile``); raises ContractError."""
        limits = self._limits()
        return stitch_source(self.workload, self.size, source, limits.max_dim, limits.max_workgroup_bytes,
                             tile=tile, constants=constants)

    def _publish(self, result: CandidateResult, st: Stitched, source: str) -> None:
        result.stitched_source, result.source_sha256 = st.source, st.sha256
        result.workgroup_size, result.grid = list(st.workgroup_size), list(st.dispatch)
        result.enables = list(st.enables)
        result.constants = dict(st.constants)
        result.uniforms = {name: data.hex() for name, data in st.uniforms.items()}
        result.passes = ([{"label": p.label, "entry": p.entry, "source": "" if p.own else p.source,
                           "grid": list(p.dispatch), "own": p.own, "constants": dict(p.constants),
                           "bind": dict(p.bind)} for p in st.passes]
                         if len(st.passes) > 1 else [])
        self.session.emit(CandidateSource(id=result.id, source=source, stitched_source=st.source,
                                          workgroup_size=result.workgroup_size, grid=result.grid))

    async def _contract_failed(self, result: CandidateResult, broken: Diagnostic, source: str) -> bool:
        """Syntax errors come first: ask the compiler before blaming the contract. A template
        that cannot be expanded is the exception: the compiler would only trip over its
        unexpanded ``{{NAME}}``, where the template's own line names the missing value."""
        if broken.message.startswith("template:"):
            result.diagnostics = [self._to_original(broken, source, result)]
            return self.session.fail(result, "compile_error", broken.message)
        probe = parse_only_source(self.workload, self.size, source)
        try:
            error = (await self.client.request(Parse(source=probe.source), COMPILE_TIMEOUT_S)).error
        except (WorkerTimeout, WorkerCrashed, WorkerError):
            error = ""
        if error:
            result.diagnostics = self._locate(error, probe, source, result)
            first = result.diagnostics[0]
            return self.session.fail(result, "compile_error", f"{first.line}:{first.column}: {first.message}")
        result.diagnostics = [self._to_original(broken, source, result)]
        return self.session.fail(result, "compile_error", f"contract: {broken.message}")

    async def _right_size(self, result: CandidateResult, st: Stitched, source: str, probe: bool) -> bool:
        """Find a kernel dispatched many times over, say so, and time it on the grid it needs;
        ``probe``: whether the probe applies (screening.probe_applies, found when staged)."""
        if not probe or len(st.passes) > 1:
            return True  # a multi-pass program is dispatched on the grids its workload declares

        async def covers(grid: tuple[int, int, int]) -> bool:
            verdict = await self.client.request(Verify(cid=result.id, seed=self.seeds[0], grid=list(grid)),
                                                self.session.deadline_for(result.id))
            return bool(verdict.passed)

        try:
            fx, fy = await over_dispatch(st, covers)
        except (WorkerTimeout, WorkerCrashed, WorkerError):
            return True  # the planned grid verified; a probe that fails says nothing more
        if (fx, fy) == (1, 1):
            return True
        tile = (st.tile[0] * fx, st.tile[1] * fy)
        result.over_dispatch = [fx, fy]
        if self.workload.grid is not None:  # the workload's own grid: said, not changed
            self.session.emit(Notice(level="warning", message=(
                f"{'the baseline' if result.id == 'baseline' else result.name}: dispatched {fx * fy}x over: "
                f"{fx}x{fy} times fewer workgroups than the workload's grid ({st.dispatch[0]}x"
                f"{st.dispatch[1]}) also verify; its time includes the extra workgroups")))
            return True
        resized = self.stitch(source, tile, constants=st.given)
        self.session.emit(Notice(level="warning", message=(
            f"{'the baseline' if result.id == 'baseline' else result.name}: dispatched {fx * fy}x over: "
            f"{st.dispatch[0]}x{st.dispatch[1]} workgroups "
            f"planned from its tile {st.tile[0]}x{st.tile[1]}, but {resized.dispatch[0]}x"
            f"{resized.dispatch[1]} cover the output (each workgroup computes {tile[0]}x{tile[1]}); "
            f"timed on that grid. Declare it with `// tile: {tile[0]}x{tile[1]}`.")))
        self.session.stitched[result.id] = resized
        self._publish(result, resized, source)
        return await self._compile(result, resized, source) and await self._verify(result)

    def _sanitizer_said(self, cand: Candidate, result: CandidateResult, staged: Staged) -> bool:
        """Generated kernels are repaired or refused; a user's own kernel is only flagged.

        A barrier in non-uniform control flow is undefined behaviour on GPUs and
        browsers refuse the kernel, so one that cannot be repaired never runs when a
        model wrote it, and carries the browser-invalid flag when a user did.
        False when the candidate was refused (its result emitted).
        """
        self.session.emit(StageChanged(id=cand.id, stage="sanitizing"))
        if not staged.findings:
            return True
        self.session.emit(SanitizerRewrite(id=cand.id, findings=staged.findings, diff=staged.diff,
                                           repaired=staged.repaired))
        if staged.repaired:
            result.rewrites.append(staged.diff)
            result.source = staged.source
            return True
        first = staged.findings[0]
        why = f"{first.line}:{first.column}: barrier in non-uniform control flow ({first.message})"
        if staged.refused:
            result.diagnostics = list(staged.findings)
            return self.session.fail(result, "compile_error", f"{why}; browsers reject it and the sanitizer "
                                     "could not repair it")
        result.browser_invalid = why
        self.session.emit(Notice(level="warning", message=f"{cand.name} is not browser-valid: {why}"))
        return True

    async def _compile(self, result: CandidateResult, st: Stitched, source: str) -> bool:
        self.session.emit(StageChanged(id=result.id, stage="compiling"))
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            request = st.compile_request(result.id)
            reply = await self.client.request(request, max(COMPILE_TIMEOUT_S, self.session.deadline_s))
        except WorkerTimeout:
            return self.session.fail(result, "timeout", "compilation ran past its deadline")
        except (WorkerCrashed, WorkerError) as exc:
            return self.session.fail(result, "crashed", str(exc))
        ok = reply.compiled
        if not ok:
            result.diagnostics = self._locate(reply.error, st, source, result)
        self.session.emit(CompileFinished(id=result.id, ok=ok, diagnostics=result.diagnostics,
                                          seconds=loop.time() - began))
        if not ok:
            first = result.diagnostics[0]
            return self.session.fail(result, "compile_error", f"{first.line}:{first.column}: {first.message}")
        return True

    async def _verify(self, result: CandidateResult) -> bool:
        self.session.emit(StageChanged(id=result.id, stage="verifying"))
        timeout = self.session.deadline_for(result.id)
        for seed in self.seeds:
            try:
                verdict = await self.client.request(Verify(cid=result.id, seed=seed), timeout)
            except WorkerTimeout:
                result.deadline_s = timeout
                return self.session.fail(result, "timeout", f"killed after its {timeout:.1f} s deadline")
            except (WorkerCrashed, WorkerError) as exc:
                return self.session.fail(result, "crashed", str(exc))
            result.max_rel_error = verdict.max_rel_error
            result.worst_index = verdict.worst_index
            self.session.emit(VerificationFinished(id=result.id, seed=seed, passed=verdict.passed,
                                                   max_rel_error=verdict.max_rel_error,
                                                   worst_index=verdict.worst_index,
                                                   reason=verdict.reason, judged_by=verdict.judged_by))
            if not verdict.passed:
                if result.id != "baseline":  # a rejected baseline ends the run, its line saying this
                    self._tell_loop_limit()
                return self.session.fail(result, "rejected", f"seed {seed}: {verdict.reason}")
        return True

    def _tell_loop_limit(self) -> None:
        """On llvmpipe, the first failed verification of a run says that its loop limit may
        be why (gpu/loop_limit.py); a kernel's own reason stays as measured."""
        note = note_for(self.session.device)
        if note and not self.loop_note_told:
            self.loop_note_told = True
            self.session.emit(Notice(level="warning", message=note))

    def _locate(self, error: str, st: Stitched, compiled_body: str,
                result: CandidateResult) -> list[Diagnostic]:
        """The compiler's messages at the lines the candidate's author wrote.

        ``compiled_body`` is what followed the prelude (sanitized, `enable` lines
        blanked); the author's own text is the candidate as it arrived.
        """
        body = "".join(st.source.splitlines(keepends=True)[st.prelude_lines:])
        return diagnostics_from_error(error, prelude_lines=st.prelude_lines, compiled_body=body,
                                      original_body=self.session.candidates[result.id].source)

    def _to_original(self, diagnostic: Diagnostic, compiled_body: str,
                     result: CandidateResult) -> Diagnostic:
        """A contract error found in the sanitized text, moved to the author's line."""
        original = self.session.candidates[result.id].source
        if compiled_body == original:
            return _with_line_text(diagnostic, original)
        mapped = LineMap(0, compiled_body, original).line(diagnostic.line) or diagnostic.line
        return _with_line_text(diagnostic.model_copy(update={"line": mapped}), original)

    def _recalled(self, result: CandidateResult, earlier: CandidateResult) -> bool:
        """Reuse an outcome measured in an earlier run (--resume): nothing is measured again."""
        keep = {"id", "name", "strategy", "origin", "generation", "params", "raw_reply", "rewrites"}
        numbers = earlier.model_dump(exclude=keep)
        for field_name, value in numbers.items():
            setattr(result, field_name, value)
        result.from_cache, result.batch = True, None
        result.history = [*earlier.history, {"batch": earlier.batch, "median_ms": earlier.median_ms,
                                             "speedup": earlier.speedup, "run": "earlier"}]
        self.session.emit(StageChanged(id=result.id, stage="done", detail=f"{result.status} (earlier run)"))
        self.session.emit(CandidateFinished(result=result))
        return False


def _with_line_text(diagnostic: Diagnostic, source: str) -> Diagnostic:
    lines = source.splitlines()
    if 0 < diagnostic.line <= len(lines):
        return diagnostic.model_copy(update={"source_line": lines[diagnostic.line - 1].rstrip()})
    return diagnostic


def _generated(cand: Candidate) -> bool:
    """Written by a model or the library: the sanitizer repairs it or refuses it. A user's
    own kernel (``user``, or ``params``: the user's, configured) is only flagged."""
    return cand.strategy not in ("user", "params")

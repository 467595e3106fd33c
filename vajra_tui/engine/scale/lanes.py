"""One tuning run over several lanes (GPU workers): ``tune --gpus`` and ``--ray``.

Built by engine/run/builder.py (the one place a tuner is made) for ``tune --gpus``,
``--ray``, ``gpus=`` in the API, the TUI's lanes and each model of a fleet::

    tuner = LaneTuner(session, lanes, source, user_kernels, budget=6)
    ranked = await tuner.run(generations)      # the Tuner's loop, spread over the lanes

``session`` is the primary :class:`~..session.Session`, whose client must be ``lanes[0]``.
A lane is anything :class:`.lane.Lane`-like; ``request(Hello(), ...)`` is its health check after
each batch (a GPUClient restarts a dead worker there), and the optional attributes
``adapter_index`` and ``host`` label it in ``LanesUpdated``. Lanes are closed by the caller
(or :meth:`LaneTuner.close`).

Why it is shaped this way:

* Each lane has a Session of its own, with its own calibration and its own baseline,
  because a speedup divides the baseline timed *in the same batch on the same adapter*.
  A timing batch is admitted (compile, verify) and timed on one lane only, so the
  timings of one kernel never mix GPUs; compilation and verification spread with it.
* The generation logic stays :class:`~..tune.Tuner`'s: this class only replaces how one
  generation's candidates are measured (``_evaluate``) and where the shoot-out runs.
* The shoot-out of each generation (what the report, JSON, lockfile and export show) is
  timed on one lane, the primary (lane 0 unless it was lost), beside its one baseline.
* Batch numbers come from one counter shared by the lanes, so a batch number names one
  batch on one adapter and the shoot-out knows which finalists it must time again.
* Faults are events: a candidate whose worker died under it (``crashed``) is retried
  once on another lane; a lane whose worker cannot be restarted is marked lost, its
  in-flight candidates retried elsewhere, a Notice says what was lost, and the run goes
  on. Only when every lane is lost does the run stop: :class:`LanesLost` (a
  ``WorkerCrashed``) carries the ranking of the last generation that finished, so the
  caller still reports what was measured (engine/run/builder.py ``Run.tune``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Sequence

from vajra_tui.engine.candidate import Candidate
from vajra_tui.engine.events import Notice
from vajra_tui.engine.gpu.client import WorkerCrashed, WorkerError, WorkerTimeout
from vajra_tui.engine.gpu.protocol import Hello
from vajra_tui.engine.session import Session
from vajra_tui.engine.sources.base import CandidateSource
from vajra_tui.engine.tune import Tuner
from vajra_tui.engine.scale.lane import Lane
from vajra_tui.engine.scale.lanes_state import LaneBoard, filtered_emit

HEALTH_TIMEOUT_S = 120.0
FAULTS = (WorkerCrashed, WorkerError, WorkerTimeout)


class LanesLost(WorkerCrashed):
    """Every lane was lost mid-run. Not a bare crash: what finished before is kept.

    ``ranked`` is the last finished generation's ranking (``generation`` says which, 0:
    none finished); ``report`` is filled in by ``Run.tune`` so the CLI and the API can
    still show the finished generations, labelled incomplete by this error's message.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.ranked: list[Any] = []
        self.generation = 0
        self.report: Any = None


class LaneTuner(Tuner):
    """A :class:`Tuner` whose generations are measured on several lanes at once."""

    def __init__(self, session: Session, lanes: Sequence[Lane], source: CandidateSource,
                 user_kernels: Sequence[Candidate] = (), budget: int = 6, shootouts: str = "every") -> None:
        if not lanes or session.client is not lanes[0]:
            raise ValueError("the primary session's client must be lanes[0]")
        super().__init__(session, source, user_kernels, budget=budget, shootouts=shootouts)
        self.lanes = list(lanes)
        self.primary = 0
        self.board = LaneBoard(self.lanes, session.emit)
        counter = itertools.count(1)
        self.sessions = [session] + [self._secondary(session, k) for k in range(1, len(self.lanes))]
        for s in self.sessions:
            s.next_batch = lambda: next(counter)
        self.owner: dict[str, int] = {}  # candidate id -> the lane that measured it last
        self.retried: set[str] = set()
        self.finished: tuple[int, list[Any]] = (0, [])  # the last generation ranked, and its ranking

    def _secondary(self, primary: Session, k: int) -> Session:
        """A session like the primary on lane ``k``; its run-level events are held back."""
        emit = filtered_emit(primary.emit, lambda: self.primary == k, self.lanes[k].label)
        return Session(primary.workload, primary.size, self.lanes[k], emit, primary.timing,
                       seeds=primary.seeds, source_mode=primary.source_mode,
                       grounding=primary.grounding, results_cache=primary.results_cache,
                       resume=primary.resume, fresh=primary.fresh_seed)

    # ---- start: every lane calibrated, prepared and with a baseline ---------------
    async def start(self):
        """The primary's session opens first (its ``SessionStarted`` opens a recording, before
        any lane's event) while the other lanes' workers start (a second or two each: imports,
        adapters, device); then every lane calibrates, prepares and times its baseline at
        once. A secondary lane that fails to start is lost, not fatal."""
        primary = self.sessions[self.primary]
        others = [k for k in range(len(self.lanes)) if k != self.primary]
        workers = {k: asyncio.ensure_future(self.lanes[k].astart()) for k in others
                   if self.lanes[k].device is None}
        opened = primary.device is None  # the TUI starts it itself, to build its library first
        try:
            if opened:
                await primary.open()
        except BaseException:
            for task in workers.values():
                task.cancel()
            raise
        self.board.started(self.primary, primary.device)
        outcomes = await asyncio.gather(self._prepared_baseline(self.primary, opened),
                                        *(self._start_lane(k, workers.get(k)) for k in others),
                                        return_exceptions=True)
        if isinstance(outcomes[0], BaseException):
            raise outcomes[0]  # the primary's failure (a failing baseline) ends the run as before
        for k, outcome in zip(others, outcomes[1:]):
            if isinstance(outcome, BaseException):
                self._lose(k, f"could not start: {outcome}", [])
        return outcomes[0]

    async def _start_lane(self, k: int, worker: asyncio.Future | None = None):
        if worker is not None:
            await worker  # its start began with the primary's; a failure loses the lane
        session = self.sessions[k]
        await session.start()
        self.board.started(k, session.device)
        return await self._baseline(k)

    async def _prepared_baseline(self, k: int, prepare: bool):
        if prepare:
            await self.sessions[k].prepare()
        return await self._baseline(k)

    async def _baseline(self, k: int):
        session = self.sessions[k]
        result = await session.run_baseline(time=True)
        self.board.timed(k, session.baseline_ms, batch=True)
        return result

    # ---- one generation: whole batches, one lane each ---------------------------
    async def _evaluate(self, candidates: list[Candidate], generation: int) -> None:
        pending: list[tuple[list[Candidate], str]] = [(chunk, "") for chunk in self._chunks(candidates)]
        while pending:
            plan = self._assign(pending)
            pending = []
            if not plan:  # no live lane took them (_assign said so)
                break
            retries = await asyncio.gather(*(self._batch(k, chunk) for k, chunk in plan))
            for k, again in zip([k for k, _ in plan], retries):
                if again:
                    pending.append((again, self.lanes[k].label))
        self._merge()
        self._reprimary()

    def _chunks(self, candidates: list[Candidate]) -> list[list[Candidate]]:
        """One batch per live lane, dealt round-robin (neighbouring configurations apart).

        A candidate with the same text and constants as an earlier one joins that one's
        batch: a lane's session knows only its own kernels, so a copy dealt to another
        lane would be compiled and timed twice instead of being called a duplicate.
        """
        live = self.board.live()
        distinct = {_same_kernel(c) for c in candidates}
        n = max(1, min(len(live), len(distinct)))
        chunks: list[list[Candidate]] = [[] for _ in range(n)]
        home: dict[tuple[str, str], int] = {}
        for cand in candidates:
            key = _same_kernel(cand)
            if key not in home:
                home[key] = len(home) % n
            chunks[home[key]].append(cand)
        return [chunk for chunk in chunks if chunk]

    def _assign(self, pending: list[tuple[list[Candidate], str]]) -> list[tuple[int, list[Candidate]]]:
        """Each chunk to a free live lane, a retry away from the lane it failed on where possible."""
        free = list(self.board.live())
        plan: list[tuple[int, list[Candidate]]] = []
        for chunk, avoid in pending:
            if not free:
                free = list(self.board.live())  # more chunks than lanes: a lane takes two
            if not free:
                self._give_up(chunk)
                continue
            k = next((k for k in free if self.lanes[k].label != avoid), free[0])
            free.remove(k)
            match = next((p for p in plan if p[0] == k), None)
            if match is not None:
                match[1].extend(chunk)
            else:
                plan.append((k, list(chunk)))
        return plan

    async def _batch(self, k: int, chunk: list[Candidate]) -> list[Candidate]:
        """Admit and time ``chunk`` on lane ``k``; return what must be retried elsewhere."""
        session, lane = self.sessions[k], self.lanes[k]
        self.board.state(k, "admitting")
        for cand in chunk:
            self.owner[cand.id] = k
        admitted = await session.admit_many(chunk)
        self.board.state(k, "timing")
        await session.time_batch(["baseline", *admitted])
        try:
            await session.drop([c.id for c in chunk if c.id in session.stitched])
        except FAULTS:
            pass  # the health check below says whether the lane is still there
        base_ok = session.results["baseline"].status == "verified"
        timed = sum(1 for c in chunk if session.results[c.id].batch == session.batch)
        self.board.timed(k, session.baseline_ms if base_ok else None, batch=True, candidates=timed)
        crashed = [c for c in chunk if session.results[c.id].status == "crashed"]
        if not await self._healthy(k):
            self._lose(k, "its worker died and could not be restarted", crashed)
        else:
            self.board.state(k, "idle")
        again = [c for c in crashed if c.id not in self.retried]
        self.retried.update(c.id for c in again)
        if again and self.board.is_live(k):
            self._notice(f"{lane.label}: retrying {_names(again)} once {self._retry_where(k)} "
                         "(the worker died under them)")
        return again

    def _retry_where(self, k: int) -> str:
        """Where a retry of lane ``k``'s candidates goes, said truthfully: ``_assign`` sends
        it to another live lane when there is one, else back to ``k`` itself."""
        others = [self.lanes[j].label for j in self.board.live() if j != k]
        if not others:
            return f"on {self.lanes[k].label} again (no other lane to retry on)"
        return f"on {others[0]}" if len(others) == 1 else f"on another lane ({', '.join(others)})"

    async def _healthy(self, k: int) -> bool:
        try:
            await self.lanes[k].request(Hello(), HEALTH_TIMEOUT_S)
            return True
        except FAULTS:
            return False

    def _lose(self, k: int, why: str, in_flight: list[Candidate]) -> None:
        self.board.lose(k, [c.name for c in in_flight])
        live = self.board.live()
        fate = ("no other lane to retry on: they stay crashed" if not live else
                f"retried once on {self.lanes[live[0]].label}" if len(live) == 1 else
                f"retried once on another lane ({', '.join(self.lanes[j].label for j in live)})")
        what = f"; in flight: {_names(in_flight)} ({fate})" if in_flight else ""
        self._notice(f"{self.lanes[k].label} lost: {why}{what}", "warning")
        try:
            self.lanes[k].close()
        except Exception:  # noqa: BLE001 - a dead lane's close is best effort
            pass
        if not live:
            self._stop(f"{self.lanes[k].label}: {why}")

    def _stop(self, last: str) -> None:
        """No lane is left: stop with what the finished generations ranked."""
        done, ranked = self.finished
        kept = (f"the report shows generation {done}, the last one finished" if done else
                "no generation finished")
        exc = LanesLost(f"every GPU lane was lost (last: {last}); {kept}")
        exc.generation, exc.ranked = done, list(ranked)
        raise exc

    def _give_up(self, chunk: list[Candidate]) -> None:
        if chunk:
            self._notice(f"no lane left to retry {_names(chunk)}: they stay crashed", "warning")

    def _notice(self, message: str, level: str = "info") -> None:
        self.sessions[self.primary].emit(Notice(level=level, message=message))  # type: ignore[arg-type]

    # ---- the shared view, and the lane the shoot-out runs on -----------------------
    def _merge(self) -> None:
        """Every lane's results in every session (each keeps its own baseline)."""
        for cid, k in self.owner.items():
            src = self.sessions[k]
            if cid not in src.results:  # cancelled in the TUI and forgotten there
                continue
            for dst in self.sessions:
                if dst is src:
                    continue
                dst.results[cid], dst.candidates[cid] = src.results[cid], src.candidates[cid]
                if cid in src.stitched:
                    dst.stitched[cid] = src.stitched[cid]

    def _reprimary(self) -> None:
        """A lost primary hands the shoot-out to the first live lane (said in a notice)."""
        if self.board.is_live(self.primary):
            return
        old, self.primary = self.primary, self.board.live()[0]
        self.session = self.sessions[self.primary]
        self.board.final = self.primary
        self._notice(f"{self.lanes[old].label} was lost: shoot-outs are timed on "
                     f"{self.lanes[self.primary].label} from now on", "warning")

    async def _ranked(self, generation: int):
        """The shoot-out on the primary lane alone: one adapter, one baseline sample."""
        if self._provisional:
            return self._finish(generation, await super()._ranked(generation))
        self.board.state(self.primary, "timing")
        try:
            return self._finish(generation, await super()._ranked(generation))
        finally:
            s = self.session
            self.board.timed(self.primary, s.baseline_ms, batch=True)
            self.board.state(self.primary, "idle")

    def _finish(self, generation: int, ranked: list[Any]) -> list[Any]:
        """Kept as the last finished generation, for a run whose lanes are all lost later."""
        self.finished = (generation, list(ranked))
        return ranked

    def close(self) -> None:
        for lane in self.lanes:
            lane.close()


def _same_kernel(cand: Candidate) -> tuple[str, str]:
    """What makes two candidates the same kernel before they are stitched."""
    return cand.source, json.dumps(cand.constants, sort_keys=True, default=str)


def _names(cands: list[Candidate]) -> str:
    return ", ".join(c.name for c in cands)


__all__ = ["LaneTuner", "LanesLost"]

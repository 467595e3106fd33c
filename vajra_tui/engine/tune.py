"""The closed loop: baseline, three strategies, then generations of evolution.

The CLI and the API call :meth:`Tuner.run`; the TUI calls the same steps one at a
time (``e`` is :meth:`Tuner.evolve`), so both produce the same events. The tuner asks
one :class:`~vajra_tui.engine.sources.base.CandidateSource` for each generation and
never asks which kind it is; engine/run/builder.py composes that source.
"""

from __future__ import annotations

import string
from typing import Sequence

from vajra_tui.engine.admission.contract import prelude
from vajra_tui.engine.browser.crown import crown_in_browser
from vajra_tui.engine.candidate import Candidate, GenerationContext
from vajra_tui.engine.events import CandidateResult, GenerationStarted, Notice
from vajra_tui.engine.session import Session
from vajra_tui.engine.sources.base import STRATEGIES, CandidateSource, UserKernels
from vajra_tui.engine.timing.ranking import Ranking
from vajra_tui.engine.workloads import Size, Workload

SHOOTOUTS = ("every", "last")


_PROBE = (1009, 1013, 1019, 1021, 1031, 1033, 1039, 1049)


def output_axes(workload: Workload, size: Size) -> list[str]:
    """The size constant each output axis runs along, read off the workload's declaration.

    ``output_grid`` is evaluated at distinct primes, so the value on each axis names
    its dimension ("N" for sgemm's x); an axis that is always 1 reads "1", one that is
    no single dimension reads its value at the real size.
    """
    probe = {d: _PROBE[i % len(_PROBE)] + 64 * (i // len(_PROBE))
             for i, d in enumerate(workload.dims)}
    try:
        at_probe = list(workload.grid_of_output(probe))
    except Exception:  # noqa: BLE001 - a grid that needs real sizes: fall back to numbers
        at_probe = [0, 0]
    real = list(workload.grid_of_output(size))
    names = []
    for value, actual in zip(at_probe, real):
        name = next((d for d, v in probe.items() if v == value), None)
        names.append(name or str(actual))
    return names


def generation_letter(generation: int) -> str:
    """Generation 2 is variant D, 3 is E, and so on."""
    letters = string.ascii_uppercase
    return letters[min(generation + 1, len(letters) - 1)]


def winner_first(ranking: Ranking) -> list[CandidateResult]:
    """The ranked kernels, the baseline left out, the winner first: under ``--limits portable``
    a faster kernel that may not be crowned follows it, in its place among the others."""
    if ranking.winner is None:
        return []
    rest = [r for r in ranking.ranked if r.id not in ("baseline", ranking.winner.id)]
    return [ranking.winner, *rest]


class Tuner:
    def __init__(self, session: Session, source: CandidateSource, user_kernels: Sequence[Candidate] = (),
                 budget: int = 6, shootouts: str = "every") -> None:
        """``source`` proposes every generation; ``user_kernels`` are measured beside the
        first one. ``shootouts``: "every" generation ends with a shoot-out (what an interactive
        session needs: any generation may be the one a user keeps), or only the "last"
        one of :meth:`run`; earlier generations are then ranked provisionally, by each
        kernel's ratio to the baseline of its own batch, which is what picks the next
        parent either way."""
        if shootouts not in SHOOTOUTS:
            raise ValueError(f"shootouts {shootouts!r}: choose {' or '.join(SHOOTOUTS)}")
        self.session = session
        self.sessions = [session]  # every lane's session (a LaneTuner has one per lane)
        self.source = source
        self.user = UserKernels(user_kernels)
        self.budget = budget
        self.shootouts = shootouts
        self._provisional = False  # this generation ends without a shoot-out (run(), "last")
        self.generation = 0

    @property
    def source_label(self) -> str:
        return self.source.label

    def context(self) -> GenerationContext:
        """What the sources may know: the workload's declaration, the calibration, the
        baseline's numbers, every result so far and the candidates (conversations, sources)."""
        s = self.session
        results = list(s.results.values())
        ranking = s.ranking(results)
        # the parent of the next generation: the fastest kernel that may be crowned
        ranked = [r for r in ranking.ranked if r.id != "baseline" and s.crownable(r)]
        empty = prelude(s.workload, s.size, (1, 1), 1, set())
        return GenerationContext(
            workload=s.info, device=s.device, generation=self.generation, prelude=empty,
            baseline_source=s.workload.baseline, results=results,
            winner=ranked[0] if ranked else None, budget=self.budget,
            tried=[str(r.params.get("key")) for r in results if r.params.get("key")],
            summary=s.workload.summary, output_axes=output_axes(s.workload, s.size),
            output=s.workload.output.name, calibration=s.calibration,
            baseline=s.results.get("baseline"), baseline_won=ranking.baseline_won,
            candidates=dict(s.candidates),
        )

    async def start(self) -> CandidateResult:
        await self.session.start()
        return await self.session.run_baseline(time=True)

    async def first_generation(self) -> list[CandidateResult]:
        self.generation = 1
        self.session.emit(GenerationStarted(generation=1, source=self.source_label))
        ctx = self.context()
        candidates = await self.source.propose(ctx, STRATEGIES)
        if self.source.note:  # e.g. no templates for a user's workload
            self.session.emit(Notice(message=self.source.note))
        await self._evaluate(candidates + await self.user.propose(ctx), generation=1)
        return await self._ranked(1)

    async def evolve(self) -> list[CandidateResult]:
        """One more generation from the current winner."""
        if self.generation == 0:
            return await self.first_generation()
        self.generation += 1
        self.session.emit(GenerationStarted(generation=self.generation, source=self.source_label))
        ctx = self.context()
        if ctx.winner is None:
            self.session.emit(Notice(level="warning", message="nothing verified yet: evolving from the baseline"))
        candidates = await self.source.evolve(ctx, generation_letter(self.generation))
        if not candidates:
            self.session.emit(Notice(message=self.source.exhausted or
                                     "the library's neighbourhood is exhausted: no new configuration to try"))
        await self._evaluate(candidates, generation=self.generation)
        return await self._ranked(self.generation)

    async def _evaluate(self, candidates: list[Candidate], generation: int) -> None:
        """Measure one generation's candidates; several adapters spread them (scale/lanes.py)."""
        await self.session.evaluate(candidates, generation=generation)

    async def _ranked(self, generation: int):
        """The generation's verdict from the final shoot-out: finalists beside one baseline
        sample; a provisional one (no shoot-out) inside :meth:`run` with ``shootouts="last"``."""
        if self._provisional:
            return self.session.rank(generation)
        ranking = await crown_in_browser(self.session, await self.session.shootout(generation), generation)
        if ranking.winner is not None:
            return winner_first(ranking)
        return []

    async def run(self, generations: int) -> list[CandidateResult]:
        await self.start()
        last = self.shootouts == "last"
        self._provisional = last and generations > 0
        try:
            ranked = await self.first_generation()
            for left in range(generations, 0, -1):
                self._provisional = last and left > 1
                ranked = await self.evolve()
        finally:
            self._provisional = False
        return ranked

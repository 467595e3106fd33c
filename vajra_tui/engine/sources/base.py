"""Where candidates come from: the one protocol every source implements.

The tuner asks a source for a generation and never asks which kind it is: Vajra's
template library, the language model, the ``// tune:`` parameter search and the
user's own kernel files all answer the same two questions. Sources compose: a
:class:`Fallback` asks the model first and the library when the model gave nothing
usable, and :class:`UserKernels` adds the user's files to the first generation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Sequence

from vajra_tui.engine.candidate import Candidate, GenerationContext

STRATEGIES = ("A", "B", "C")  # the first generation's three strategies


class CandidateSource(ABC):
    """A source of candidates for one generation at a time.

    ``label`` names the source in the events (``GenerationStarted.source``); ``note`` is
    said once when the source has nothing for this workload at all, ``exhausted`` when
    :meth:`evolve` proposed nothing for a reason other than the usual one.
    """

    label: str = "source"
    note: str = ""
    exhausted: str = ""

    @property
    def available(self) -> bool:
        """Whether asking can give kernels at all (a model without a key cannot)."""
        return True

    @abstractmethod
    async def propose(self, ctx: GenerationContext, strategies: Sequence[str] = STRATEGIES) -> list[Candidate]:
        """The first generation: candidates for ``strategies`` (A, B, C), from nothing measured."""

    @abstractmethod
    async def evolve(self, ctx: GenerationContext, letter: str) -> list[Candidate]:
        """A later generation (variant ``letter``: D, E, ...), from what ``ctx`` says was measured."""

    async def aclose(self) -> None:
        """Release what the source holds (HTTP clients); sources that hold nothing need not."""


class Fallback(CandidateSource):
    """``primary`` while it gives real kernels, else ``fallback`` for the same generation.

    A model that is down, unauthorized or answers without a kernel does not leave a
    generation empty: its no-kernel slots are kept (they say why) and the library's
    candidates are added beside them.
    """

    def __init__(self, primary: CandidateSource, fallback: CandidateSource) -> None:
        self.primary, self.fallback = primary, fallback

    @property
    def label(self) -> str:  # type: ignore[override]
        return self.primary.label if self.primary.available else self.fallback.label

    @property
    def note(self) -> str:  # type: ignore[override]
        return self.fallback.note

    @property
    def exhausted(self) -> str:  # type: ignore[override]
        return self.fallback.exhausted

    async def propose(self, ctx: GenerationContext, strategies: Sequence[str] = STRATEGIES) -> list[Candidate]:
        first = await self.primary.propose(ctx, strategies) if self.primary.available else []
        if any(c.source for c in first):
            return first
        return first + _beside(first, await self.fallback.propose(ctx, strategies))

    async def evolve(self, ctx: GenerationContext, letter: str) -> list[Candidate]:
        first = await self.primary.evolve(ctx, letter) if self.primary.available else []
        if any(c.source for c in first):
            return first
        return first + _beside(first, await self.fallback.evolve(ctx, letter))

    async def aclose(self) -> None:
        await self.primary.aclose()
        await self.fallback.aclose()


def _beside(kept: list[Candidate], added: list[Candidate]) -> list[Candidate]:
    """The fallback's candidates with ids and names of their own: the model's no-kernel slot
    ``g1-A`` (and why it had none) stays in the report, the library's A beside it is
    ``g1-A-lib`` (it replaced the slot's result on every surface, and was finished twice)."""
    taken = {c.id for c in kept} | {c.name for c in kept}
    return [c.model_copy(update={"id": f"{c.id}-lib", "name": f"{c.name} (library)"})
            if c.id in taken or c.name in taken else c for c in added]


class UserKernels(CandidateSource):
    """The user's own kernels, measured once, in the first generation beside the others."""

    label = "user"

    def __init__(self, kernels: Sequence[Candidate]) -> None:
        self.kernels = list(kernels)

    async def propose(self, ctx: GenerationContext, strategies: Sequence[str] = STRATEGIES) -> list[Candidate]:
        return list(self.kernels)

    async def evolve(self, ctx: GenerationContext, letter: str) -> list[Candidate]:
        return []


__all__ = ["CandidateSource", "Fallback", "STRATEGIES", "UserKernels"]

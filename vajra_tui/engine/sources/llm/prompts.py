"""Chat messages for the kernel-writing model.

The model writes only the kernel body under Vajra's contract; the engine owns
bindings, sizes and dispatch. Generation 1 states that contract in full, with the
workload's grid, the baseline's numbers and the adapter's ceilings. Later
generations continue the winner's own conversation (see :mod:`.feedback`), so a
line number in the feedback points at text the model has already seen.

This module is the top of the three: the request's pieces (system prompt, briefs,
the contract's sections) are in :mod:`.prompt_parts`, which both it and
:mod:`.feedback` build on, so neither of those two imports the other back.
"""

from __future__ import annotations

from vajra_tui.engine.candidate import GenerationContext
from vajra_tui.engine.workloads.base import Workload
from vajra_tui.engine.sources.llm.feedback import evolution_messages, strategy_brief
# the request's pieces live in prompt_parts.py (feedback.py builds on them too); callers import them from here
from vajra_tui.engine.sources.llm.prompt_parts import (  # noqa: F401 - re-exported
    FEATURE_DIRECTIVES, REPLY_FORMAT, STRATEGY_BRIEFS, SYSTEM_PROMPT, adapter_text, baseline_text, bound_text,
    browser_text, contract_text, duration, features_text, fence, grid_text, grounding_text, num, numbered, numbers,
    system_prompt, tile_text, verification_text, workload_text,
)


def first_prompt(ctx: GenerationContext, strategy: str, grounding: list[dict] | None,
                 workload: Workload | None = None) -> str:
    """The generation-1 request: the full contract, the baseline and one strategy brief."""
    sections = [
        contract_text(ctx, workload),
        grounding_text(grounding, "Reference material (cite nothing, just use it):"),
        strategy_brief(strategy, ctx),
        REPLY_FORMAT,
    ]
    return "\n\n".join(s for s in sections if s)


def build_messages(
    ctx: GenerationContext, strategy: str, grounding: list[dict] | None = None,
    workload: Workload | None = None,
) -> list[dict[str, str]]:
    """The request for one strategy: a fresh conversation in generation 1, else the lineage's.

    ``workload``, when the source has it, adds what the context's WorkloadInfo does not
    hold: uniform values, fills, the entry points, an explicit grid and the passes."""
    if ctx.generation >= 2:
        return evolution_messages(ctx, strategy, grounding, workload)
    return [{"role": "system", "content": system_prompt(ctx, workload)},
            {"role": "user", "content": first_prompt(ctx, strategy, grounding, workload)}]

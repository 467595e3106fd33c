"""Chat messages for the kernel-writing model.

The model writes only the kernel body under Vajra's contract; the engine owns
bindings, sizes and dispatch. Keeping the model's scope narrow is what makes
its output stitchable and comparable across variants.
"""

from __future__ import annotations

from ..candidate import GenerationContext
from ..events import CandidateResult

SYSTEM_PROMPT = """\
You are a GPU performance engineer writing WGSL compute kernels for WebGPU.
You write ONLY the kernel body under Vajra's contract:
- Exactly one entry point: `@compute @workgroup_size(X, Y, Z) fn main(...)`, named `main`.
- Helper functions, `const` values and `var<workgroup>` arrays are allowed.
- Optionally start with a header line `// tile: AxB` saying how many output elements
  along x and y ONE workgroup produces (default: one element per invocation).
  The engine sizes the dispatch grid from it.
- Bindings and size constants come from a prelude the engine stitches in front of
  your code. Do NOT redeclare the size constants. You may redeclare a binding with a
  different element type (for example `array<vec4<f32>>`) at the same @group/@binding,
  but input buffers must stay `var<storage, read>`.
- Every `workgroupBarrier()` must be reached in uniform control flow: never inside a
  branch or loop whose condition depends on the invocation id; guard loads and stores
  instead of returning early.
- Bounds-check every global access: sizes need not be multiples of your tile.
- No `enable` directives the adapter does not list among its features.
Answer with exactly one ```wgsl fenced code block containing the kernel body, and
nothing else after it."""

STRATEGY_BRIEFS: dict[str, str] = {
    "A": "Strategy A - workgroup geometry: tune @workgroup_size and how many outputs each "
    "invocation computes (register blocking) for occupancy and coalesced access. "
    "No shared memory.",
    "B": "Strategy B - shared workgroup memory tiling: stage tiles of the inputs in "
    "`var<workgroup>` arrays, synchronise with workgroupBarrier() in uniform control "
    "flow, and reuse each loaded element many times.",
    "C": "Strategy C - vectorized math: load and store vec4<f32> (redeclare bindings as "
    "array<vec4<f32>> where the layout allows, keep inputs `read`), accumulate with "
    "fma(), and keep the inner loop free of scalar index math.",
    "D": "Strategy D - evolve the current winner: keep what made it fast and fix what "
    "the numbers say is its bottleneck.",
}

_LIMIT_KEYS = (
    "max-compute-workgroup-storage-size",
    "max-compute-invocations-per-workgroup",
    "max-compute-workgroups-per-dimension",
    "max-compute-workgroup-size-x",
    "max-compute-workgroup-size-y",
    "max-compute-workgroup-size-z",
)

REPLY_FORMAT = "Reply with exactly one ```wgsl fenced block holding the kernel body."


def _fence(code: str) -> str:
    return f"```wgsl\n{code.strip()}\n```"


def _adapter(ctx: GenerationContext) -> str:
    d = ctx.device
    lines = [f"Adapter: {d.name} ({d.backend or 'unknown backend'})"]
    for key in _LIMIT_KEYS:
        if key in d.limits:
            lines.append(f"- {key}: {d.limits[key]}")
    lines.append(f"- subgroups: {'available' if d.subgroups else 'NOT available'}")
    if d.features:
        lines.append(f"- features: {', '.join(sorted(d.features))}")
    return "\n".join(lines)


def _workload(ctx: GenerationContext) -> str:
    w = ctx.workload
    sizes = ", ".join(f"{k}={v}" for k, v in w.size.items())
    return (
        f"Workload: {w.name} ({sizes}); {w.flops:.3g} FLOP, at least {w.min_bytes:.3g} bytes "
        f"moved; output grid {w.output_grid}; tolerance atol={w.atol:g} rtol={w.rtol:g}."
    )


def _grounding(snippets: list[dict] | None, title: str) -> str:
    if not snippets:
        return ""
    parts = [title]
    for s in snippets:
        parts.append(f"- {s.get('title', '')} <{s.get('url', '')}>\n  {s.get('content', '')}")
    return "\n".join(parts)


def _num(v: float | None, fmt: str = ".3g") -> str:
    return "n/a" if v is None else format(v, fmt)


def _numbers(r: CandidateResult) -> str:
    return (
        f"{_num(r.gflops)} GFLOP/s, {_num(r.gbps)} GB/s, {_num(r.pct_of_roofline, '.1f')}% of "
        f"roofline, median {_num(r.median_ms, '.4g')} ms (IQR {_num(r.iqr_ms, '.3g')} ms)"
    )


def _graveyard(results: list[CandidateResult]) -> str:
    dead = [r for r in results if r.status not in ("verified",)]
    if not dead:
        return ""
    lines = ["Failed variants (do not repeat these mistakes):"]
    for r in dead:
        lines.append(f"- {r.name} [{r.strategy}] {r.status}: {r.reason}".rstrip(": "))
        for d in r.diagnostics:
            lines.append(f"    {d.line}:{d.column} {d.message}")
        if r.max_rel_error is not None or r.worst_index is not None:
            lines.append(
                f"    verification: max_rel_error={_num(r.max_rel_error)} "
                f"worst_index={r.worst_index} reason={r.reason or 'mismatch'}"
            )
    return "\n".join(lines)


def first_prompt(ctx: GenerationContext, strategy: str, grounding: list[dict] | None) -> str:
    """The generation-1 request: baseline + one strategy brief."""
    sections = [
        _workload(ctx),
        "Prelude the engine stitches in front of your code (do not repeat it):\n"
        + _fence(ctx.prelude),
        "Baseline kernel (correct, slow):\n" + _fence(ctx.baseline_source),
        STRATEGY_BRIEFS.get(strategy, f"Strategy {strategy}."),
        _adapter(ctx),
        _grounding(grounding, "Reference material (cite nothing, just use it):"),
        REPLY_FORMAT,
    ]
    return "\n\n".join(s for s in sections if s)


def evolution_prompt(ctx: GenerationContext, strategy: str, grounding: list[dict] | None) -> str:
    """A generation >= 2 request: the winner, its rivals' numbers and the graveyard."""
    w = ctx.winner
    others = [r for r in ctx.results if r.status == "verified" and (w is None or r.id != w.id)]
    sections = [
        _workload(ctx),
        "Prelude the engine stitches in front of your code (do not repeat it):\n"
        + _fence(ctx.prelude),
    ]
    if w is not None:
        sections.append(
            f"Current winner {w.name} [{w.strategy}]: {_numbers(w)}.\n" + _fence(w.source)
        )
    else:
        sections.append("No variant verified yet. Baseline kernel:\n" + _fence(ctx.baseline_source))
    if others:
        sections.append(
            "Other verified variants:\n"
            + "\n".join(f"- {r.name} [{r.strategy}]: {_numbers(r)}" for r in others)
        )
    sections += [
        _graveyard(ctx.results),
        _grounding(grounding, "Search results on the compiler messages and topics above:"),
        STRATEGY_BRIEFS.get(strategy, f"Strategy {strategy}."),
        "Write a faster variant than the winner. " + _adapter(ctx),
        REPLY_FORMAT,
    ]
    return "\n\n".join(s for s in sections if s)


def build_messages(
    ctx: GenerationContext, strategy: str, grounding: list[dict] | None = None
) -> list[dict[str, str]]:
    """System + user messages for one strategy in the context's generation."""
    if ctx.generation >= 2:
        user = evolution_prompt(ctx, strategy, grounding)
    else:
        user = first_prompt(ctx, strategy, grounding)
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]

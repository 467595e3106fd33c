"""Generation 2 and later: continue the winner's conversation with what was measured.

A request for an evolved variant is the winner's own conversation (the system and
user turns that produced it), its reply as the assistant turn, and one new user
turn with the feedback: the winner's numbers, its sanitizer rewrites and browser
verdict, every failure with the compiler's message and the source line it points
at, the verification failures' worst elements, over-dispatch findings and
duplicates. A winner no model wrote (the library's, a user's, the baseline) starts
a fresh conversation that shows its source with line numbers.
"""

from __future__ import annotations

from vajra_tui.engine.candidate import Candidate, GenerationContext
from vajra_tui.engine.events import CandidateResult, Diagnostic
from vajra_tui.engine.gpu.loop_limit import MODEL_RULE, applies_to
from vajra_tui.engine.sources.llm import prompt_parts as p
from vajra_tui.engine.sources.llm.extract import strip_think
from vajra_tui.engine.workloads.base import Workload

try:
    from vajra_tui.engine.wgsl.diagnostics import format_for_model
except ImportError:  # pragma: no cover - until wgsl/diagnostics.py provides it
    def format_for_model(diags: list[Diagnostic], original_body: str) -> str:
        body = original_body.splitlines()
        rows = []
        for d in diags:
            rows.append(f"line {d.line}:{d.column}: {d.message}")
            text = body[d.line - 1].rstrip() if 0 < d.line <= len(body) else d.source_line
            if text:
                rows.append(f"{d.line:>5} | {text}")
            rows += [f"  note: {n}" for n in d.notes]
        return "\n".join(rows)

# What an evolved generation looks at in particular, in turn (D, E, F, ...).
EVOLUTION_FOCUS = (
    "how many outputs each invocation computes (register blocking), so every loaded value "
    "feeds several independent fma() accumulators",
    "the memory access pattern: consecutive invocations on consecutive addresses, vec4 loads "
    "and stores where the layout allows, every input element read once per workgroup",
    "the workgroup shape and size (occupancy), and how many outputs one workgroup produces",
    "staging reused data in var<workgroup> memory with as few barriers per element as possible",
    "the inner loop's instruction count: hoist index math, unroll by a constant, use fma()",
)

MAX_FAILURES = 8  # reported in full; older ones get one line each
MAX_DIAGNOSTICS = 3


def _indent(text: str, pad: str = "    ") -> str:
    return "\n".join(pad + line if line else line for line in text.splitlines())


def _source_of(ctx: GenerationContext, r: CandidateResult) -> str:
    """The kernel as its author wrote it: diagnostics are located in that text."""
    c = ctx.candidates.get(r.id)
    return c.source if c is not None and c.source else r.source


def _coordinates(ctx: GenerationContext, index: int) -> str:
    gx, gy = (list(ctx.workload.output_grid) + [1, 1])[:2]
    if gx <= 0 or index >= gx * gy:
        return ""
    return f"(x={index % gx}, y={index // gx}) of the {gx}x{gy} output grid"


def _verification(ctx: GenerationContext, r: CandidateResult) -> str:
    rows = []
    if r.worst_index is not None:
        where = _coordinates(ctx, r.worst_index)
        rows.append(f"worst element {r.worst_index}" + (f" = {where}" if where else ""))
    if r.max_rel_error is not None:
        rows.append(f"max relative error {p.num(r.max_rel_error)}")
    return "; ".join(rows)


def failure_text(ctx: GenerationContext, r: CandidateResult, full: bool = True) -> str:
    head = f"- {r.name} [{r.strategy}] {r.status}: {r.reason or 'no reason given'}"
    if not full:
        return head
    rows = [head]
    if r.diagnostics:
        shown = r.diagnostics[:MAX_DIAGNOSTICS]
        rows.append(_indent(format_for_model(shown, _source_of(ctx, r))))
        if len(r.diagnostics) > len(shown):
            rows.append(f"    ({len(r.diagnostics) - len(shown)} more messages)")
    if r.status == "rejected":
        detail = _verification(ctx, r)
        if detail:
            rows.append(f"    verification: {detail}")
    return "\n".join(rows)


def _declared_tile(ctx: GenerationContext, r: CandidateResult) -> tuple[int, int] | None:
    from vajra_tui.engine.admission.contract import tile_of

    wg = tuple((list(r.workgroup_size) + [1, 1, 1])[:3])
    try:
        return tile_of(_source_of(ctx, r), dict(ctx.workload.size), wg)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 - a broken header says nothing more here
        return None


def over_dispatch_text(ctx: GenerationContext, r: CandidateResult) -> str:
    fx, fy = (list(r.over_dispatch) + [1, 1])[:2]
    smaller = " and ".join(f"{f}x smaller along {axis}" for axis, f in (("x", fx), ("y", fy)) if f > 1)
    text = (f"- {r.name} covered its output {fx * fy}x over: it still verified on a grid {smaller}, "
            "so its tile header was missing or too small")
    tile = _declared_tile(ctx, r)
    if tile is not None:
        text += (f" (planned from a tile of {tile[0]}x{tile[1]}; each workgroup really computes "
                 f"{tile[0] * fx}x{tile[1] * fy}: declare `// tile: {tile[0] * fx}x{tile[1] * fy}`)")
    return text + ". Vajra timed it on the grid it needs."


def winner_text(ctx: GenerationContext, own: bool) -> str:
    w, b = ctx.winner, ctx.baseline
    base = f"the baseline's {p.duration(b.median_ms)}" if b and b.median_ms else "the baseline"
    if w is None:
        return (f"Nothing beat the baseline: no candidate has verified yet, so the baseline "
                f"({p.numbers(b) if b and b.median_ms else 'see above'}) is still the only correct "
                "kernel.")
    who = ("Your kernel above" + _which(ctx.candidates.get(w.id)) if own else
           f"The fastest verified kernel so far, {w.name} [{w.strategy}] ({w.origin or 'unknown origin'}),")
    rows = [f"{who} verified: {p.numbers(w)}."]
    if w.speedup is not None and w.median_ms:
        rows.append(f"The baseline took {p.duration(w.median_ms * w.speedup)} in the same timing batch.")
    if nothing_beat(ctx):
        rows.insert(0, f"Nothing beat the baseline: the fastest verified kernel, {w.name}, is no "
                    f"faster than {base}.")
    return " ".join(rows)


def rewrites_text(r: CandidateResult) -> str:
    if not r.rewrites:
        return ""
    diffs = "\n".join(p.fence(d, "diff") for d in r.rewrites)
    return (f"Vajra's sanitizer rewrote {r.name} before compiling it (browsers reject a barrier "
            f"after a non-uniform early return); write it this way yourself:\n{diffs}")


def browser_verdict(r: CandidateResult) -> str:
    rows = []
    if r.browser_invalid:
        rows.append(f"{r.name} is not browser-valid: {r.browser_invalid}.")
    if r.browser == "browser-valid":
        rows.append(f"Browser check: Tint accepts {r.name}.")
    elif r.browser == "tint-rejected":
        rows.append(f"Browser check: Tint rejects {r.name}:")
        rows += [f"    line {d.line}:{d.column}: {d.message}" for d in r.browser_diagnostics]
    elif r.browser:
        rows.append(f"Browser check: {r.browser}.")
    return "\n".join(rows)


def feedback_text(ctx: GenerationContext, strategy: str, grounding: list[dict] | None,
                  own: bool) -> str:
    """The new user turn: what the previous generations measured, and what to write next."""
    w = ctx.winner
    measured = [r for r in ctx.results if r.id != "baseline"]
    sections = [f"Measured so far (generation {ctx.generation} starts now):", winner_text(ctx, own)]
    if w is not None:
        sections += [rewrites_text(w), browser_verdict(w)]
    others = [r for r in measured if r.status == "verified" and (w is None or r.id != w.id)]
    others.sort(key=lambda r: -(r.speedup or 0.0) if r.speedup else (r.median_ms or float("inf")))
    if others:
        sections.append("Other verified kernels:\n" + "\n".join(
            f"- {r.name} [{r.strategy}]: {p.numbers(r)}" for r in others[:5]))
    over = [r for r in measured if r.over_dispatch and list(r.over_dispatch) != [1, 1]]
    if over:
        sections.append("Over-dispatch:\n" + "\n".join(over_dispatch_text(ctx, r) for r in over))
    dups = [r for r in measured if r.status == "duplicate"]
    if dups:
        sections.append("Duplicates (not measured again; propose something different):\n" + "\n".join(
            f"- {r.name} was the same kernel as {r.duplicate_of or 'an earlier one'}" for r in dups))
    dead = [r for r in measured if r.status not in ("verified", "duplicate")]
    if dead:
        recent = sorted(dead, key=lambda r: -r.generation)
        rows = [failure_text(ctx, r, full=i < MAX_FAILURES) for i, r in enumerate(recent)]
        sections.append("Failed kernels (line numbers refer to each kernel's own source, quoted "
                        "below; do not repeat these mistakes):\n" + "\n".join(rows + _loop_limit(ctx, dead)))
    sections.append(p.grounding_text(grounding, "Search results on the compiler messages above:"))
    sections.append(strategy_brief(strategy, ctx))
    if nothing_beat(ctx):
        b = ctx.baseline
        target = f" ({p.duration(b.median_ms)})" if b and b.median_ms else ""
        sections.append(f"Nothing beat the baseline yet: write a kernel that is faster than the "
                        f"baseline{target}, and correct first of all.")
    elif w is not None:
        sections.append(f"Write a variant that is faster than {w.name} ({p.duration(w.median_ms)}).")
    sections.append(p.REPLY_FORMAT)
    return "\n\n".join(s for s in sections if s)


def _loop_limit(ctx: GenerationContext, dead: list[CandidateResult]) -> list[str]:
    """On llvmpipe a kernel that loops too long is cut short and fails verification with no
    compiler message (gpu/loop_limit.py): the model is told the rule, or it cannot guess it."""
    if not applies_to(ctx.device) or not any(r.status == "rejected" for r in dead):
        return []
    return [f"(These ran on llvmpipe. {MODEL_RULE})"]


def _regime_of(ctx: GenerationContext) -> str:
    w, cal = ctx.winner, ctx.calibration
    if w is not None and w.regime:
        return w.regime
    if cal is None or not ctx.workload.min_bytes:
        return ""
    return "memory" if ctx.workload.flops / ctx.workload.min_bytes < cal.fma_gflops / cal.copy_gbps \
        else "compute"


def _which(c: Candidate | None) -> str:
    """Which of several kernels in the reply was measured."""
    if c is None or c.reply_kernels <= 1:
        return ""
    label = f", the one labelled {c.reply_label}" if c.reply_label else ""
    return f" (of the {c.reply_kernels} kernels in your reply, Vajra took the one for slot {c.strategy}{label})"


def nothing_beat(ctx: GenerationContext) -> bool:
    """No verified candidate is faster than the baseline (or none verified at all)."""
    w = ctx.winner
    return w is None or ctx.baseline_won or (w.speedup is not None and w.speedup <= 1.0)


def evolution_brief(strategy: str, ctx: GenerationContext | None = None) -> str:
    """The full brief of an evolved generation (D and later), never a bare letter."""
    index = max(0, ord(strategy[:1].upper() or "D") - ord("D"))
    focus = EVOLUTION_FOCUS[index % len(EVOLUTION_FOCUS)]
    gen = f" (generation {ctx.generation})" if ctx is not None else ""
    if ctx is not None and nothing_beat(ctx):
        lines = [f"Strategy {strategy}{gen} - nothing has beaten the baseline yet: find what makes "
                 "the best attempt slower than the baseline (too little work per workgroup, too "
                 "many barriers, scattered memory access) and fix it, or take another approach; "
                 "change one or two things at a time, so the next measurement tells which helped."]
    else:
        lines = [f"Strategy {strategy}{gen} - evolve the best kernel so far: keep what made it "
                 "fast and change what its numbers say limits it, one or two ideas at a time, so "
                 "the next measurement tells which one helped."]
    regime = _regime_of(ctx) if ctx is not None else ""
    w = ctx.winner if ctx is not None else None
    pct = f" at {w.pct_of_roofline:.1f}% of its roofline" if w and w.pct_of_roofline is not None else ""
    if regime == "memory":
        lines.append(f"It is memory-bound{pct}: the time goes to moving bytes. Read each input "
                     "element once per workgroup, load and store vec4 on contiguous data, keep "
                     "consecutive invocations on consecutive addresses, write each output once.")
    elif regime == "compute":
        lines.append(f"It is compute-bound{pct}: give every invocation several independent "
                     "accumulators (a small block of outputs), reuse each loaded value from "
                     "registers or workgroup memory many times, use fma(), keep index math out "
                     "of the inner loop.")
    cal = ctx.calibration if ctx is not None else None
    if w is not None and cal is not None and w.median_ms and w.median_ms < 3 * cal.launch_floor_ms:
        lines.append(f"Its median is within 3x of the launch floor ({p.duration(cal.launch_floor_ms)}): "
                     "overhead per workgroup matters more than arithmetic now.")
    lines.append(f"This generation, look in particular at {focus}.")
    lines.append("Stay correct at every size: bounds checks, `let tile = vajra_tile(workgroup_id);`, "
                 "no work when `tile.y >= TILES_Y`, every output element written.")
    return " ".join(lines)


def strategy_brief(strategy: str, ctx: GenerationContext | None = None) -> str:
    """A/B/C's brief, or the full brief of an evolved generation (D and later)."""
    if strategy in p.STRATEGY_BRIEFS:
        return p.STRATEGY_BRIEFS[strategy]
    return evolution_brief(strategy, ctx)


def _conversation(c: Candidate | None) -> list[dict[str, str]] | None:
    """The winner's conversation with its reply appended, if a model wrote it."""
    if c is None or not c.messages or not c.raw_reply.strip():
        return None
    answer = strip_think(c.raw_reply)[0].strip() or c.raw_reply
    return [dict(m) for m in c.messages] + [{"role": "assistant", "content": answer}]


def evolution_messages(ctx: GenerationContext, strategy: str, grounding: list[dict] | None,
                       workload: Workload | None = None) -> list[dict[str, str]]:
    """The winner's own conversation and the feedback; a winner no model wrote starts afresh
    with the full contract (``workload``: as in generation 1)."""
    w = ctx.winner
    history = _conversation(ctx.candidates.get(w.id)) if w is not None else None
    if history is not None:
        return history + [{"role": "user", "content": feedback_text(ctx, strategy, grounding, True)}]
    if w is not None:
        src = _source_of(ctx, w)
        shown = (f"The best kernel so far, {w.name} [{w.strategy}] ({w.origin or 'unknown origin'}), "
                 "with line numbers (they are not part of the code):\n" + p.fence(p.numbered(src), "text"))
    else:
        shown = ("No candidate has verified yet. The baseline with line numbers (they are not part "
                 "of the code):\n" + p.fence(p.numbered(ctx.baseline_source), "text"))
    user = "\n\n".join([p.contract_text(ctx, workload), shown, feedback_text(ctx, strategy, grounding, False)])
    return [{"role": "system", "content": p.system_prompt(ctx, workload)}, {"role": "user", "content": user}]

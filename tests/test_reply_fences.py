"""Replies as a held-out check wrote them, the way models write them: a fence mentioned in a
WGSL comment, a ```` fence holding ``` lines, and HTML-escaped code. Each lost or cut the kernel
a person would have copied out whole; and a model's failed slot vanished from the report when
the library filled in under the same id.
"""

from __future__ import annotations

import asyncio
from typing import Sequence

from vajra_tui.engine.candidate import Candidate, GenerationContext
from vajra_tui.engine.sources.base import STRATEGIES, CandidateSource, Fallback
from vajra_tui.engine.sources.llm.extract import extract_kernels

KERNEL = """// tile: COLS x 64
@compute @workgroup_size(1, 64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wg.y * 64u + lid.y;
    if (row >= ROWS) { return; }
    var s = 0.0; // running sum (the ```exp``` of each value)
    for (var c = 0u; c < COLS; c++) { s += exp(X[row * COLS + c]); }
    for (var c = 0u; c < COLS; c++) { Y[row * COLS + c] = exp(X[row * COLS + c]) / s; }
}"""


def _only(reply: str) -> str:
    found = [k for k in extract_kernels(reply) if k.complete]
    assert len(found) == 1, found
    return found[0].source.strip()


def test_a_fence_mentioned_in_a_comment_closes_nothing():
    """It cut `main` at the comment: 'this { is never closed'."""
    assert _only(f"Here it is:\n\n```wgsl\n{KERNEL}\n```\n") == KERNEL


def test_a_comment_line_about_fences_keeps_the_lines_above_it():
    """The `// tile:` line above such a comment was lost, and the grid planned without it."""
    kernel = KERNEL.replace("@compute", "// (paste between ``` fences)\n@compute")
    assert _only(f"```wgsl\n{kernel}\n```") == kernel


def test_a_four_backtick_fence_holds_three_backtick_lines():
    kernel = KERNEL.replace("@compute", "// ```\n@compute")
    assert _only(f"````wgsl\n{kernel}\n````\nDone.") == kernel


def test_a_fence_glued_to_the_last_brace_still_closes():
    assert _only(f"```wgsl\n{KERNEL}```\nThat is all.") == KERNEL


def test_html_escaped_code_is_unescaped():
    escaped = KERNEL.replace("<", "&lt;").replace(">", "&gt;") + "\n// a &amp;&amp; b"
    assert _only(f"```wgsl\n{escaped}\n```") == KERNEL + "\n// a && b"


class _Said(CandidateSource):
    """A source whose slots are fixed: the model's (no kernel, and why) or the library's."""

    def __init__(self, label: str, source: str, reason: str = "") -> None:
        self.label, self.source, self.reason = label, source, reason

    async def propose(self, ctx: GenerationContext, strategies: Sequence[str] = STRATEGIES) -> list[Candidate]:
        return [Candidate(id=f"g1-{s}", name=s, strategy=s, origin=self.label, source=self.source,
                          no_kernel_reason=self.reason) for s in strategies]

    async def evolve(self, ctx: GenerationContext, letter: str) -> list[Candidate]:
        return await self.propose(ctx, (letter,))


def test_the_librarys_stand_ins_do_not_take_the_models_slots_ids():
    model = _Said("nemotron", "", reason="no kernel in response (finish_reason=tool_calls)")
    got = asyncio.run(Fallback(model, _Said("library", "// kernel")).propose(None, ("A", "B")))  # type: ignore[arg-type]
    assert [(c.id, c.name) for c in got] == [("g1-A", "A"), ("g1-B", "B"),
                                             ("g1-A-lib", "A (library)"), ("g1-B-lib", "B (library)")]
    assert got[0].no_kernel_reason.startswith("no kernel in response")


def test_a_helper_given_in_a_later_fence_goes_after_the_kernel():
    """"...and the helper it calls:" after the kernel's fence; the helper had been lost."""
    kernel = KERNEL.replace("exp(X[row * COLS + c])", "ex(row, c)")
    helper = "fn ex(row: u32, c: u32) -> f32 {\n    return exp(X[row * COLS + c]);\n}"
    bindings = "@group(0) @binding(0) var<storage, read> X: array<f32>;"
    reply = f"```wgsl\n{kernel}\n```\nAnd the helper it calls:\n```wgsl\n{bindings}\n\n{helper}\n```\n"
    got = _only(reply)
    assert got.startswith(kernel) and got.endswith(helper) and "@binding" not in got

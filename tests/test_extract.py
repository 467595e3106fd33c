"""Kernel extraction from model replies, and streaming think-tag splitting."""

from __future__ import annotations

from vajra_tui.engine.sources.llm.extract import ThinkSplitter, extract_kernel, strip_think

KERNEL = """// tile: 64x1
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x < N) { out[gid.x] = a[gid.x]; }
}"""


def test_wgsl_fence() -> None:
    src, reasoning = extract_kernel(f"Sure!\n```wgsl\n{KERNEL}\n```\nDone.")
    assert src.strip() == KERNEL
    assert reasoning == ""


def test_picks_block_with_compute() -> None:
    reply = f"Helper:\n```wgsl\nfn helper() -> f32 {{ return 1.0; }}\n```\nKernel:\n```\n{KERNEL}\n```"
    src, _ = extract_kernel(reply)
    assert "@compute" in src and "helper" not in src


def test_plain_fence_and_other_language() -> None:
    src, _ = extract_kernel(f"```rust\nfn x() {{}}\n```\n```\n{KERNEL}\n```")
    assert src.strip() == KERNEL


def test_unfenced_reply() -> None:
    reply = f"Here is my kernel.\n\n{KERNEL}\n\nThis should be fast because ..."
    src, _ = extract_kernel(reply)
    assert src.strip() == KERNEL


def test_unfenced_with_workgroup_var_and_const() -> None:
    body = "const TS: u32 = 16u;\nvar<workgroup> tile: array<f32, 256>;\n" + KERNEL
    src, _ = extract_kernel("Kernel follows:\n" + body + "\nThanks.")
    assert src.startswith("const TS") and src.rstrip().endswith("}")


def test_no_compute_is_empty() -> None:
    assert extract_kernel("```wgsl\nfn helper() {}\n```")[0] == ""
    assert extract_kernel("I cannot do that.")[0] == ""


def test_think_block_stripped() -> None:
    reply = f"<think>Let me consider @compute tiling ```wgsl\n{KERNEL}\n```</think>\nNo kernel here."
    src, reasoning = extract_kernel(reply)
    assert src == ""
    assert "tiling" in reasoning
    src, reasoning = extract_kernel(f"<think>plan: tile 16x16</think>\n```wgsl\n{KERNEL}\n```")
    assert src.strip() == KERNEL and reasoning == "plan: tile 16x16"


def test_unterminated_think() -> None:
    text, reasoning = strip_think("<think>still thinking about @compute")
    assert text == "" and "still thinking" in reasoning
    assert extract_kernel("<think>still thinking about\n" + KERNEL)[0] == ""


def test_lone_closing_think() -> None:
    text, reasoning = strip_think("reasoning first</think>\nanswer")
    assert reasoning == "reasoning first" and text.strip() == "answer"


def test_unclosed_fence_truncated_kernel() -> None:
    cut = "```wgsl\n" + KERNEL[: len(KERNEL) // 2]
    assert extract_kernel(cut)[0] == ""


def test_think_splitter_across_chunks() -> None:
    reply = "<think>abc def</think>```wgsl\ncode\n```<think>more</think>tail"
    for size in (1, 2, 3, 5, 7, 100):
        sp = ThinkSplitter()
        parts: list[tuple[str, str]] = []
        for i in range(0, len(reply), size):
            parts += sp.feed(reply[i : i + size])
        parts += sp.flush()
        reasoning = "".join(t for k, t in parts if k == "reasoning")
        content = "".join(t for k, t in parts if k == "content")
        assert reasoning == "abc defmore", size
        assert content == "```wgsl\ncode\n```tail", size


def test_think_splitter_lt_not_tag() -> None:
    sp = ThinkSplitter()
    parts = sp.feed("if (a <") + sp.feed(" b) {}") + sp.flush()
    assert "".join(t for _, t in parts) == "if (a < b) {}"
    assert all(k == "content" for k, _ in parts)


# ---- slot-aware extraction: the reply corpus ---------------------------------------------

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from vajra_tui.engine.admission.contract import stitch  # noqa: E402
from vajra_tui.engine.sources.llm.extract import Extracted, extract_for, extract_kernels  # noqa: E402
from vajra_tui.engine.workloads import get_workload  # noqa: E402

REPLIES = Path(__file__).parent / "replies"
MANIFEST: dict[str, dict] = json.loads((REPLIES / "manifest.json").read_text())["replies"]


def _reply(name: str) -> str:
    return (REPLIES / name).read_bytes().decode()  # bytes: keep the CRLF files' CRLF


def test_corpus_manifest_covers_every_reply() -> None:
    files = {p.name for p in REPLIES.glob("*.md") if p.name != "README.md"}
    assert files == set(MANIFEST)
    kinds = [m["expect"] for m in MANIFEST.values()]
    assert len(kinds) >= 24
    assert kinds.count("correct") >= 12 and kinds.count("broken") >= 8
    assert kinds.count("truncated") >= 1 and kinds.count("no_kernel") >= 1
    assert {m["workload"] for m in MANIFEST.values()} == {"sgemm", "softmax", "conv1d", "sobel"}
    for name, m in MANIFEST.items():
        assert m["strategy"] in "ABCD" and get_workload(m["workload"]).size(m["size"]), name
        if m["expect"] == "correct":
            assert len(m["tile"]) == 2 and len(m["grid"]) == 2, name
        if m["expect"] == "broken":
            assert m["error_line"] >= 1 and m["error_substring"], name
    assert all(b"\r\n" in (REPLIES / n).read_bytes() for n in MANIFEST if "crlf" in n)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_corpus_extract_for_picks_the_slot_kernel(name: str) -> None:
    m = MANIFEST[name]
    reply = _reply(name)
    got = extract_for(reply, m["strategy"])
    assert got.label == m.get("expected_label")
    assert got.candidates == m["candidates"]
    if m["expect"] in ("truncated", "no_kernel"):
        assert got.source == "" and not got.complete
        return
    assert got.complete and m["expected_contains"] in got.source
    assert "\r" not in got.source and got.source.endswith("}\n")
    # `line` is where the kernel's own text starts (a borrowed helper may precede it);
    # for a kernel inside a JSON string, the line of that string
    at = reply.replace("\r\n", "\n").split("\n")[got.line - 1]
    first = json.dumps(got.source.splitlines()[0])[1:-1]
    assert (at.strip() and at.strip() in got.source) or first in at, (got.line, at)
    if m["expect"] == "broken":
        assert len(got.source.splitlines()) >= m["error_line"]


@pytest.mark.parametrize("name", sorted(n for n, m in MANIFEST.items() if m["expect"] == "correct"))
def test_corpus_correct_kernels_plan_the_expected_grid(name: str) -> None:
    m = MANIFEST[name]
    workload = get_workload(m["workload"])
    st = stitch(workload, workload.size(m["size"]), extract_for(_reply(name), m["strategy"]).source)
    assert list(st.tile) == m["tile"] and list(st.dispatch[:2]) == m["grid"]


def test_corpus_reasoning_field_is_separate_text() -> None:
    # `reasoning` in the manifest arrived as reasoning_content: the reply alone must suffice.
    for name, m in MANIFEST.items():
        if "reasoning" in m:
            assert m["expected_contains"] in extract_for(_reply(name), m["strategy"]).source


# ---- slot-aware extraction: one test per reply shape -----------------------------------------


def _k(marker: str, tile: str = "64") -> str:
    return (f"// tile: {tile}\n@compute @workgroup_size(64)\n"
            "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
            f"    let {marker} = gid.x;\n    if ({marker} < N) {{ Y[{marker}] = X[{marker}]; }}\n}}")


def _fence(code: str, lang: str = "wgsl") -> str:
    return f"```{lang}\n{code}\n```"


def _pick(reply: str, slot: str) -> str:
    got = extract_for(reply, slot)
    return next((m for m in ("aa", "bb", "cc", "dd", "zz") if f"let {m} " in got.source), "")


def test_markdown_heading_variants() -> None:
    reply = (f"I'll analyze the bottleneck.\n\n### Variant A: geometry\n{_fence(_k('aa'))}\n\n"
             f"### Variant B — shared tiles\n{_fence(_k('bb'))}\n\n### Variant C (vec4)\n{_fence(_k('cc'))}\n")
    assert [_pick(reply, s) for s in "ABC"] == ["aa", "bb", "cc"]
    got = extract_for(reply, "B")
    assert got.label == "B" and got.candidates == 3 and got.complete
    assert reply.split("\n")[got.line - 1] == "// tile: 64"


def test_strategy_lines_bold_and_letter_headings() -> None:
    reply = (f"Strategy A: registers.\n{_fence(_k('aa'))}\nStrategy B: tiles.\n{_fence(_k('bb'))}\n"
             f"**Variant C (vectorized)**\n{_fence(_k('cc'))}\n")
    assert [_pick(reply, s) for s in "ABC"] == ["aa", "bb", "cc"]
    reply = f"## B. Shared memory\n{_fence(_k('bb'))}\n## C) vec4\n{_fence(_k('cc'))}\n"
    assert _pick(reply, "B") == "bb" and _pick(reply, "C") == "cc"


def test_label_in_prose_and_heading_sections() -> None:
    reply = f"Here is the Strategy C kernel you asked for.\n\n{_fence(_k('cc'))}\n"
    assert extract_for(reply, "C").label == "C"
    # a heading scopes the section: the full kernel after a fragment inherits it
    reply = (f"# Variant B\nIdea:\n```wgsl\n@compute @workgroup_size(64)\nfn main() {{\n  ...\n}}\n```\n"
             f"Full kernel:\n{_fence(_k('bb'))}\n")
    got = extract_for(reply, "B")
    assert got.label == "B" and "let bb" in got.source and got.candidates == 1


def test_article_a_is_not_a_label() -> None:
    reply = f"Approach: A shared-memory tile per workgroup.\n{_fence(_k('zz'))}\n"
    assert extract_for(reply, "B").label is None
    reply = f"Approach: A shared-memory tile per workgroup:\n{_fence(_k('zz'))}\n"
    assert extract_for(reply, "B").label == "B"  # the keyword "shared", not the article


def test_comments_split_one_fence_into_kernels() -> None:
    code = ("const WG: u32 = 64u;\nfn twice(v: f32) -> f32 { return v * 2.0; }\n\n"
            "// Variant A: register blocking\n" + _k("aa") + "\n\n"
            "// Strategy B: shared tiles\nvar<workgroup> t: array<f32, 64>;\n" + _k("bb", "128") + "\n\n"
            "// ---- Variant C ----\n@group(0) @binding(1) var<storage, read_write> Y: array<vec4<f32>>;\n"
            + _k("cc").replace("X[cc]", "vec4<f32>(twice(X[cc]))") + "\n")
    reply = "Three variants in one file:\n\n" + _fence(code) + "\n"
    kernels = extract_kernels(reply)
    assert [k.label for k in kernels] == ["A", "B", "C"] and all(k.complete for k in kernels)
    a, b, c = (k.source for k in kernels)
    assert a.startswith("const WG") and "fn twice" in a and "var<workgroup>" not in a
    assert b.startswith("// Strategy B") and "// tile: 128" in b and "fn twice" not in b
    assert "fn twice" in c and "var<workgroup>" not in c and "array<vec4<f32>>" in c
    assert "array<vec4<f32>>" not in a + b  # a binding redeclaration is never borrowed
    assert reply.split("\n")[kernels[1].line - 1] == "// Strategy B: shared tiles"
    assert _pick(reply, "B") == "bb"


def test_several_mains_without_labels_prefer_the_last() -> None:
    reply = "Draft, then the fixed one:\n" + _fence(_k("aa") + "\n\n" + _k("zz")) + "\n"
    assert _pick(reply, "B") == "zz" and extract_for(reply, "B").candidates == 2


def test_keywords_when_there_are_no_letters() -> None:
    reply = (f"1. **Register blocking**\n{_fence(_k('aa'))}\n2. **Shared-memory tiling**\n{_fence(_k('bb'))}\n"
             f"3. **Vectorized loads**\n{_fence(_k('cc'))}\n")
    assert [_pick(reply, s) for s in "ABC"] == ["aa", "bb", "cc"]
    assert extract_for(reply, "B").label == "B"
    negated = f"### Register geometry (no shared memory)\n{_fence(_k('aa'))}\n"
    assert extract_for(negated, "A").label == "A"


def test_unlabelled_prefers_last_complete() -> None:
    reply = f"First try:\n{_fence(_k('aa'))}\nBetter:\n{_fence(_k('zz'))}\nDone."
    for slot in "ABCD":
        got = extract_for(reply, slot)
        assert "let zz" in got.source and got.label is None and got.candidates == 2


def test_other_letter_is_a_fallback_that_says_so() -> None:
    reply = f"### Variant A\n{_fence(_k('aa'))}\n"
    got = extract_for(reply, "C")
    assert "let aa" in got.source and got.label == "A"
    reply = f"### Variant B (the winner)\n{_fence(_k('bb'))}\n### Variant D\n{_fence(_k('dd'))}\n"
    assert _pick(reply, "D") == "dd" and _pick(reply, "B") == "bb"


def test_fragments_never_hide_the_full_kernel() -> None:
    snippet = "```wgsl\n@compute @workgroup_size(16, 16)\nfn main(@builtin(local_invocation_id) lid: vec3<u32>) {\n```"
    dots = "```wgsl\n@compute @workgroup_size(64)\nfn main(...) {\n    // ... as before\n}\n```"
    for frag in (snippet, dots):
        reply = f"The shape:\n{frag}\nComplete:\n{_fence(_k('zz'))}\n"
        got = extract_for(reply, "A")
        assert "let zz" in got.source and got.candidates == 1
        assert [k.complete for k in extract_kernels(reply)] == [False, True]


def test_json_fenced_list_with_sibling_labels() -> None:
    doc = [{"variant": "A", "wgsl": _k("aa")}, {"variant": "B", "name": "tiled", "wgsl": _k("bb")}]
    reply = "Here you go:\n```json\n" + json.dumps(doc, indent=2) + "\n```\n"
    assert _pick(reply, "A") == "aa" and _pick(reply, "B") == "bb"
    got = extract_for(reply, "B")
    assert got.source == _k("bb") + "\n" and '"wgsl": "// tile: 64' in reply.split("\n")[got.line - 1]


def test_json_bare_object_and_key_labels() -> None:
    reply = "Result:\n" + json.dumps({"strategy": "C", "code": _k("cc")}) + "\nThanks"
    assert extract_for(reply, "C").label == "C" and _pick(reply, "C") == "cc"
    reply = "```\n" + json.dumps({"A": _k("aa"), "variant_b": _k("bb")}, indent=1) + "\n```"
    assert _pick(reply, "A") == "aa" and _pick(reply, "B") == "bb"
    crlf = json.dumps({"variant": "B", "wgsl": _k("bb").replace("\n", "\r\n")})
    assert extract_for(crlf, "B").source == _k("bb") + "\n"


def test_unfenced_after_think_and_after_prose() -> None:
    reply = f"<think>\nplan it\n```wgsl\n{_k('aa')}\n```\n</think>\nHere:\n\n{_k('zz')}\n\nIt is fast."
    got = extract_for(reply, "B")
    assert "let zz" in got.source and got.reasoning.startswith("plan it") and got.candidates == 1
    assert reply.split("\n")[got.line - 1] == "// tile: 64"  # think lines still count
    got = extract_for("reasoning only</think>\n" + _k("zz"), "A")
    assert got.line == 2 and got.reasoning == "reasoning only"
    got = extract_for(f"Kernel:\n// Variant C, one row per lane\n{_k('cc')}\nThat's it.", "C")
    assert got.source.startswith("// Variant C") and got.label == "C"


def test_line_endings_normalised() -> None:
    for eol in ("\r\n", "\r"):
        reply = f"### Variant B\n{_fence(_k('bb'))}\n".replace("\n", eol)
        got = extract_for(reply, "B")
        assert got.source == _k("bb") + "\n" and got.line == 3


def test_glued_and_oddly_labelled_fences() -> None:
    glued = f"Here:\n```wgsl\n{_k('zz')}```\nExplanation follows."
    assert extract_for(glued, "A").source == _k("zz") + "\n"
    for lang in ("WGSL", "rust", "glsl", "c", 'wgsl title="kernel.wgsl"', "{.wgsl}", ""):
        assert extract_for(f"Code:\n```{lang}\n{_k('zz')}\n```\n", "A").source == _k("zz") + "\n", lang
    assert extract_for(f"~~~wgsl\n{_k('zz')}\n~~~", "A").source == _k("zz") + "\n"
    assert extract_for(f"```\nwgsl\n{_k('zz')}\n```", "A").source == _k("zz") + "\n"
    listed = "1. The kernel:\n\n   ```wgsl\n   " + _k("zz").replace("\n", "\n   ") + "\n   ```\n"
    assert extract_for(listed, "A").source == _k("zz") + "\n"
    indented = "Kernel:\n\n    " + _k("zz").replace("\n", "\n    ") + "\n\nDone."
    assert extract_for(indented, "A").source == _k("zz") + "\n"


def test_truncated_reply() -> None:
    cut = "### Variant A\n```wgsl\n" + _k("aa") + "\n```\n### Variant C\n```wgsl\n" + _k("cc")[:90]
    got = extract_for(cut, "C")
    assert got == Extracted("", "", "C", 12, False, 1)  # line: the cut kernel, for diagnostics
    assert "let aa" in extract_for(cut, "A").source
    only = "```wgsl\n" + _k("zz")[:-3]
    assert extract_for(only, "B") == Extracted("", "", None, 2, False, 0)
    # an unlabelled complete kernel before an unlabelled cut-off one still serves
    assert _pick(f"{_fence(_k('zz'))}\nImproved:\n```wgsl\n{_k('aa')[:80]}", "B") == "zz"


def test_unclosed_fence_stops_at_prose() -> None:
    reply = f"```wgsl\n{_k('zz')}\n\nThis kernel reads {{X}} once.\n## Notes\n- fast"
    got = extract_for(reply, "A")
    assert got.source == _k("zz") + "\n" and got.complete


def test_syntax_errors_still_reach_the_compiler() -> None:
    broken = _k("zz").replace("Y[zz] = X[zz];", "Y[zz] = max(X[zz], 0.0;")
    got = extract_for(_fence(broken), "A")
    assert got.complete and got.source == broken + "\n"


def test_duplicates_count_once_and_no_kernel() -> None:
    reply = f"{_fence(_k('zz'))}\nSame again, final:\n{_fence(_k('zz'))}"
    assert extract_for(reply, "A").candidates == 1
    assert extract_for("I can't help with that.", "A") == Extracted("", "", None, 0, False, 0)
    assert extract_kernels("```wgsl\nfn helper() {}\n```") == []


# ---- a user's workload names its own entry points ------------------------------------

from vajra_tui.engine.sources.llm.extract import MAX_KERNELS, extract_for, extract_kernels  # noqa: E402

NAMED = KERNEL.replace("fn main", "fn scale_rows")


def test_a_kernel_whose_entry_point_is_the_workloads_is_found_and_variants_are_split() -> None:
    reply = (f"## Variant A\n```wgsl\n{NAMED}\n```\n## Variant B\n```wgsl\n"
             f"// Variant B\n{NAMED.replace('64', '128')}\n```\n")
    a = extract_for(reply, "A", ("scale_rows",))
    b = extract_for(reply, "B", ("scale_rows",))
    assert a.complete and a.source.strip() == NAMED and a.label == "A" and a.candidates == 2
    assert b.complete and "@workgroup_size(128)" in b.source and b.label == "B"
    # a built-in still wants `fn main`: the same reply holds no complete kernel for it
    assert not extract_for(reply, "A").complete
    # and a `fn main` reply is no kernel of a workload whose entry point is scale_rows
    assert not extract_for(f"```wgsl\n{KERNEL}\n```", "A", ("scale_rows",)).complete


def test_one_block_with_two_variants_of_a_named_entry_point_is_cut_in_two() -> None:
    block = f"// Variant A\n{NAMED}\n\n// Variant B\n{NAMED.replace('64', '32')}\n"
    kernels = extract_kernels(f"```wgsl\n{block}```\n", ("scale_rows",))
    assert [k.label for k in kernels] == ["A", "B"] and all(k.complete for k in kernels)
    assert "@workgroup_size(32)" in kernels[1].source and "@workgroup_size(32)" not in kernels[0].source


def test_the_entry_point_limit_counts_the_workloads_entry_points() -> None:
    reply = "```wgsl\n" + "\n".join([NAMED] * (MAX_KERNELS + 1)) + "\n```\n"
    got = extract_for(reply, "A", ("scale_rows",))
    assert not got.source and f"{MAX_KERNELS + 1} `fn scale_rows` entry points" in got.reason

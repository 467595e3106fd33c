"""Kernel extraction from model replies, and streaming think-tag splitting."""

from __future__ import annotations

from vajra_tui.engine.sources.extract import ThinkSplitter, extract_kernel, strip_think

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

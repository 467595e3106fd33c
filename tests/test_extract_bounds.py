"""Hostile model replies: extraction stays bounded and never raises.

Each reply below once made ``extract_for`` either raise (a line of 1000 ``[``: a
RecursionError in the JSON hint scan) or run for seconds to minutes (escaped quotes,
a label followed by 40,000 spaces, 10k code fences, 5000 ``fn main``). Each is built
here, timed, and must come back as a kernel or a no-kernel reason. The bounds are
loose on purpose (a loaded 2-core CI box): every case took 3-70 s before.
Through the real client, a reply that breaks the extractor must become that slot's
no-kernel candidate with a reason, and extraction must not run on the event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import pytest_asyncio

from llm_server import KERNEL, LLMServer, Scripted
from vajra_tui.engine.candidate import GenerationContext
from vajra_tui.engine.events import DeviceInfo, WorkloadInfo
from vajra_tui.engine.sources.llm import client as llm_client
from vajra_tui.engine.sources.llm import extract as llm_extract
from vajra_tui.engine.sources.llm.client import LLMSource
from vajra_tui.engine.sources.llm.extract import Extracted, extract_for, extract_kernel
from vajra_tui.settings import LLMSettings

BOUND_S = 2.0  # each case below took 3-70 s before the fix
KEY = "bounds-key-0a1b2c3d"
FENCED = f"Here is the kernel:\n```wgsl\n{KERNEL}```\n"


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """``fn``'s result and this thread's CPU seconds on it: the bound is about the scan's
    work, and wall time on a loaded 2-core CI machine also counted other processes (2.4 s)."""
    t0 = time.thread_time()
    got = fn()
    return got, time.thread_time() - t0


def assert_kernel(got: Extracted) -> None:
    assert got.complete and got.source.strip() == KERNEL.strip() and not got.reason


def assert_clean(got: Extracted) -> None:
    """A kernel, or no kernel with a one-line reason."""
    assert isinstance(got, Extracted)
    assert (got.complete and got.source) or (not got.source and got.reason and "\n" not in got.reason)


# ---- the JSON hint scan ----------------------------------------------------------


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_deeply_nested_brackets_keep_the_kernel(depth: int) -> None:
    reply = FENCED + "Some notes on the layout:\n" + "[" * depth + "\n" + "and more prose.\n" * 20
    got, took = timed(lambda: extract_for(reply, "A"))
    assert took < BOUND_S
    assert_kernel(got)


def test_deep_but_valid_json_document_is_not_walked_past_the_depth_limit() -> None:
    deep = "[" * 900 + '"x"' + "]" * 900
    reply = f'{{"variant": "B", "nest": {deep}, "code": "{KERNEL.replace(chr(10), chr(92) + "n")}"}}\n'
    got, took = timed(lambda: extract_for(reply, "B"))
    assert took < BOUND_S
    assert_kernel(got)


@pytest.mark.parametrize("lines", [5000])
def test_many_lines_opening_json_stay_linear(lines: int) -> None:
    reply = "[\n" * lines + FENCED
    got, took = timed(lambda: extract_for(reply, "A"))
    assert took < BOUND_S
    assert_kernel(got)


# ---- escaped quotes --------------------------------------------------------------


@pytest.mark.parametrize("kib", [16, 40])
def test_escaped_quotes(kib: int) -> None:
    reply = FENCED + '\\"' * (kib * 512) + "\n"
    got, took = timed(lambda: extract_for(reply, "A"))
    assert took < BOUND_S
    assert_kernel(got)


def test_escaped_quotes_in_a_json_fence() -> None:
    reply = "```json\n{\n" + '\\"' * 20480 + "\n```\n" + FENCED
    got, took = timed(lambda: extract_for(reply, "A"))
    assert took < BOUND_S
    assert_kernel(got)


def test_many_json_kernel_strings_without_braces_after_them() -> None:
    reply = '"@compute"' * 8000  # each one searched to the end of the reply for a label key
    got, took = timed(lambda: extract_for(reply, "A"))
    assert took < BOUND_S
    assert got.source == "" and not got.complete


# ---- labels followed by a sea of spaces ---------------------------------------------


@pytest.mark.parametrize("shape", ["### Variant{}\n", "Variant{}\n", "**Variant{}**\n",
                                   "1. Strategy{}\n", "Variant:{}b\n"])
def test_label_then_40k_spaces_per_slot(shape: str) -> None:
    reply = shape.format(" " * 40_000) + FENCED
    for slot in "ABCD":
        got, took = timed(lambda: extract_for(reply, slot))
        assert took < BOUND_S, slot
        assert_kernel(got)


def test_label_then_40k_spaces_in_a_json_key_and_a_comment() -> None:
    spaces = " " * 40_000
    code = KERNEL.replace("\n", "\\n")
    reply = f'{{"variant": "Variant{spaces}", "code": "{code}"}}\n```wgsl\n// Variant{spaces}\n{KERNEL}```\n'
    for slot in "AB":
        got, took = timed(lambda: extract_for(reply, slot))
        assert took < BOUND_S, slot
        assert_clean(got)


def test_negated_shared_memory_words_repeated() -> None:
    reply = "### " + "no shared " * 4000 + "\n" + FENCED
    got, took = timed(lambda: extract_for(reply, "B"))
    assert took < BOUND_S
    assert_kernel(got)


# ---- fences and kernels by the thousand -------------------------------------------


@pytest.mark.parametrize("fence", ["```\n", "```wgsl\n", "~~~\n"])
def test_10k_code_fences(fence: str) -> None:
    reply = "# Variant A\n" + FENCED + fence * 10_000
    got, took = timed(lambda: extract_for(reply, "A"))
    assert took < BOUND_S
    assert_clean(got)


def test_10k_fences_before_the_kernel() -> None:
    reply = "## Notes\n" + "```\n\n```\n" * 5000 + FENCED
    got, took = timed(lambda: extract_for(reply, "A"))
    assert took < BOUND_S
    assert_kernel(got)


def test_a_fence_opener_then_40k_spaces() -> None:
    got, took = timed(lambda: extract_for(FENCED + "```" + " " * 40_000 + "`", "A"))
    assert took < BOUND_S
    assert_kernel(got)


def test_slot_blind_extraction_of_a_fence_info_without_newline() -> None:
    (source, _), took = timed(lambda: extract_kernel(FENCED + "```wgsl" + "a" * 100_000 + "`"))
    assert took < BOUND_S
    assert source.strip() == KERNEL.strip()


@pytest.mark.parametrize("fenced", [True, False])
def test_5000_fn_main_is_refused_with_the_limit(fenced: bool) -> None:
    body = "@compute @workgroup_size(1)\nfn main() { let x = 1; }\n" * 5000
    reply = f"```wgsl\n{body}```\n" if fenced else body
    got, took = timed(lambda: extract_for(reply, "A"))
    assert took < BOUND_S
    assert got.source == "" and not got.complete
    assert str(llm_extract.MAX_KERNELS) in got.reason and "fn main" in got.reason


def test_many_attributes_with_an_unclosed_parenthesis() -> None:
    reply = "```wgsl\n" + "@a(;\n" * 8000 + KERNEL + "```\n"
    got, took = timed(lambda: extract_for(reply, "A"))
    assert took < BOUND_S
    assert_clean(got)


def test_many_think_blocks() -> None:
    reply = "<think>x</think>" * 20_000 + FENCED
    got, took = timed(lambda: extract_for(reply, "A"))
    assert took < BOUND_S
    assert_kernel(got)


def test_a_reply_past_the_size_limit_says_so() -> None:
    reply = FENCED + "x" * (llm_extract.MAX_REPLY_CHARS + 1)
    got, took = timed(lambda: extract_for(reply, "A"))
    assert took < BOUND_S
    assert got.source == "" and str(llm_extract.MAX_REPLY_CHARS) in got.reason
    assert_clean(got)


# ---- through the real client ---------------------------------------------------------


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer(chunk_size=4096, chunk_delay=0.0) as s:
        yield s


@pytest_asyncio.fixture
async def source(server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[LLMSource]:
    monkeypatch.setenv("NEBIUS_API_KEY", KEY)
    settings = LLMSettings(base_url=server.url, model="primary", fallback_model="fallback",
                           timeout_s=10.0, first_token_timeout_s=5.0, max_retries=0)
    src = LLMSource(settings, lambda event: None)
    yield src
    await src.aclose()


def make_ctx() -> GenerationContext:
    return GenerationContext(
        workload=WorkloadInfo(name="saxpy", size={"N": 1024}, flops=2048.0, min_bytes=12288.0,
                              output_grid=[1024, 1, 1], atol=1e-5),
        device=DeviceInfo(name="Test GPU", backend="vulkan", subgroups=True, limits={}),
        generation=1, prelude="const N: u32 = 1024u;",
        baseline_source="@compute @workgroup_size(64) fn main() {}",
    )


@pytest.mark.asyncio
async def test_a_reply_of_1000_brackets_is_a_no_kernel_candidate(server: LLMServer,
                                                                 source: LLMSource) -> None:
    server.script("primary", Scripted("[" * 1000))
    [cand] = await source.propose(make_ctx(), ["A"])
    assert cand.source == "" and cand.no_kernel_reason == "no kernel in response (prose, no code)"
    assert cand.raw_reply == "[" * 1000


@pytest.mark.asyncio
async def test_an_extraction_error_is_that_slots_no_kernel_reason(
        server: LLMServer, source: LLMSource, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(reply: str, strategy: str) -> Extracted:
        if strategy == "B":
            raise RecursionError("maximum recursion depth exceeded")
        return extract_for(reply, strategy)

    monkeypatch.setattr(llm_client, "extract_for", broken)
    server.script("primary", Scripted(f"<think>plan</think>{FENCED}"))
    a, b = await source.propose(make_ctx(), ["A", "B"])
    assert a.source.strip() == KERNEL.strip() and not a.no_kernel_reason
    assert b.source == "" and b.reasoning == "plan"
    assert b.no_kernel_reason.startswith("kernel extraction failed (RecursionError")
    assert "\n" not in b.no_kernel_reason


@pytest.mark.asyncio
async def test_a_limit_reason_reaches_the_candidate(server: LLMServer, source: LLMSource) -> None:
    body = "@compute @workgroup_size(1)\nfn main() { let x = 1; }\n" * 500
    server.script("primary", Scripted(f"```wgsl\n{body}```\n"))
    [cand] = await source.propose(make_ctx(), ["C"])
    assert cand.source == "" and str(llm_extract.MAX_KERNELS) in cand.no_kernel_reason


@pytest.mark.asyncio
async def test_extraction_runs_off_the_event_loop(server: LLMServer, source: LLMSource,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(reply: str, strategy: str) -> Extracted:
        time.sleep(0.8)  # stands in for a long CPU-bound scan
        return extract_for(reply, strategy)

    monkeypatch.setattr(llm_client, "extract_for", slow)
    server.script("primary", Scripted(FENCED))
    loop = asyncio.get_running_loop()
    gaps: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        last = loop.time()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = loop.time()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    [cand] = await source.propose(make_ctx(), ["A"])
    stop.set()
    await task
    assert cand.source.strip() == KERNEL.strip()
    assert max(gaps) < 0.5, f"the event loop stalled {max(gaps):.2f} s"

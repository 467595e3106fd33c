"""LLMSource against a loopback OpenAI-compatible server: streaming, failover, timeouts,
truncation, multi-variant replies and conversations continued across generations."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from vajra_tui.engine.candidate import GenerationContext
from vajra_tui.engine.events import (
    CandidateQueued,
    CandidateResult,
    DeviceInfo,
    Diagnostic,
    ModelFailover,
    Notice,
    StreamDelta,
    WorkloadInfo,
)
from vajra_tui.engine.sources.llm.extract import extract_for
from vajra_tui.engine.sources.llm.client import (MAX_SLOT_REPLY_CHARS, UNAUTHORIZED, LLMSource,
                                            reply_limit_reason)
from vajra_tui.settings import LLMSettings

try:
    from tests.llm_server import (KERNEL, KERNEL_REPLY, PROSE_REPLY, THINK_TEXT, Endless,
                                  LLMServer, Scripted)
except ImportError:  # tests/ is not a package: pytest puts it on sys.path
    from llm_server import KERNEL, KERNEL_REPLY, PROSE_REPLY, THINK_TEXT, Endless, LLMServer, Scripted

REPLIES = Path(__file__).parent / "replies"

KEY = "test-key-s3cr3t"


def make_ctx(generation: int = 1, **kw: Any) -> GenerationContext:
    return GenerationContext(
        workload=WorkloadInfo(name="saxpy", size={"N": 1 << 20}, flops=2e6, min_bytes=12e6,
                              output_grid=[1 << 20, 1, 1], atol=1e-5),
        device=DeviceInfo(name="Test GPU", backend="vulkan", subgroups=True,
                          limits={"max-compute-workgroup-storage-size": 32768,
                                  "max-compute-invocations-per-workgroup": 256,
                                  "max-compute-workgroups-per-dimension": 65535}),
        generation=generation,
        prelude="@group(0) @binding(0) var<storage, read> a: array<f32>;\nconst N: u32 = 1048576u;",
        baseline_source="@compute @workgroup_size(64) fn main() {}",
        **kw,
    )


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as s:
        yield s


@pytest.fixture
def events() -> list[Any]:
    return []


@pytest.fixture
def first_token_s() -> float:
    """Generous, so that a loaded CI machine does not turn a slow first token into a
    failover; the test that measures the deadline parametrizes it down."""
    return 3.0


@pytest_asyncio.fixture
async def source(server: LLMServer, events: list[Any], first_token_s: float,
                 monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[LLMSource]:
    monkeypatch.setenv("NEBIUS_API_KEY", KEY)
    settings = LLMSettings(base_url=server.url, model="primary", fallback_model="fallback",
                           timeout_s=8.0, first_token_timeout_s=first_token_s, max_retries=1)
    src = LLMSource(settings, events.append)
    yield src
    await src.aclose()


def of(events: list[Any], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


def assert_no_key(events: list[Any]) -> None:
    for e in events:
        assert KEY not in e.model_dump_json()


@pytest.mark.asyncio
async def test_three_concurrent_streams(server: LLMServer, source: LLMSource,
                                        events: list[Any]) -> None:
    cands = await source.propose(make_ctx(), ["A", "B", "C"])
    assert [c.id for c in cands] == ["g1-A", "g1-B", "g1-C"]
    assert [c.name for c in cands] == ["A", "B", "C"]
    for c in cands:
        assert c.source.strip() == KERNEL.strip()
        assert c.origin == "nemotron: primary" and c.raw_reply == KERNEL_REPLY
        assert c.no_kernel_reason == ""
    queued = of(events, CandidateQueued)
    assert [q.id for q in queued] == ["g1-A", "g1-B", "g1-C"]
    assert all(q.origin == "nemotron: primary" for q in queued)
    deltas = [d for d in of(events, StreamDelta) if d.kind == "content"]
    for cid in ("g1-A", "g1-B", "g1-C"):
        assert "".join(d.text for d in deltas if d.id == cid) == KERNEL_REPLY
    switches = sum(1 for x, y in zip(deltas, deltas[1:]) if x.id != y.id)
    assert switches > 5, "streams were not interleaved"
    assert server.max_active == 3
    assert all(h == f"Bearer {KEY}" for h in server.auth_headers)
    assert not of(events, Notice)
    assert_no_key(events)


@pytest.mark.asyncio
@pytest.mark.parametrize("mode,attempts,reason", [("503", 2, "503"), ("404", 1, "404")])
async def test_failover(server: LLMServer, source: LLMSource, events: list[Any],
                        mode: str, attempts: int, reason: str) -> None:
    server.script("primary", mode)
    [cand] = await source.propose(make_ctx(), ["A"])
    assert cand.source.strip() == KERNEL.strip()
    assert cand.origin == "nemotron: fallback"
    [fo] = of(events, ModelFailover)
    assert (fo.id, fo.from_model, fo.to_model) == ("g1-A", "primary", "fallback")
    assert reason in fo.reason
    assert len(server.requests_for("primary")) == attempts  # 5xx retried, 404 not
    assert len(server.requests_for("fallback")) == 1
    assert not of(events, Notice)


@pytest.mark.asyncio
async def test_429_retried_on_primary(server: LLMServer, source: LLMSource,
                                      events: list[Any]) -> None:
    server.script("primary", "429", "kernel")
    [cand] = await source.propose(make_ctx(), ["B"])
    assert cand.origin == "nemotron: primary" and cand.source
    assert len(server.requests_for("primary")) == 2
    assert not of(events, ModelFailover)


@pytest.mark.asyncio
async def test_401_stops_asking(server: LLMServer, source: LLMSource,
                                events: list[Any]) -> None:
    server.script("primary", "401")
    cands = await source.propose(make_ctx(), ["A", "B", "C"])
    assert all(c.source == "" and c.no_kernel_reason == UNAUTHORIZED for c in cands)
    [notice] = of(events, Notice)
    assert notice.level == "error" and "401" in notice.message
    assert "$NEBIUS_API_KEY" in notice.message
    assert not of(events, ModelFailover) and not server.requests_for("fallback")
    seen = len(server.requests)
    assert seen <= 3
    later = await source.propose(make_ctx(2), ["A", "B"])
    assert len(server.requests) == seen, "asked again after a 401"
    assert all(c.no_kernel_reason == UNAUTHORIZED for c in later)
    assert not source.available
    assert_no_key(events)  # the server echoed the bearer token in its 401 body


@pytest.mark.asyncio
async def test_stream_cut_off_then_fallback(server: LLMServer, source: LLMSource,
                                            events: list[Any]) -> None:
    server.script("primary", "cut")
    [cand] = await source.propose(make_ctx(), ["A"])
    assert cand.origin == "nemotron: fallback" and cand.source
    [fo] = of(events, ModelFailover)
    assert "cut off" in fo.reason


@pytest.mark.asyncio
async def test_stream_cut_off_on_both(server: LLMServer, source: LLMSource,
                                      events: list[Any]) -> None:
    server.script("primary", "cut")
    server.script("fallback", "cut")
    [cand] = await source.propose(make_ctx(), ["C"])
    assert cand.source == ""
    assert "cut off" in cand.no_kernel_reason
    assert cand.raw_reply and KERNEL_REPLY.startswith(cand.raw_reply)
    assert len(cand.raw_reply) < len(KERNEL_REPLY)
    [notice] = of(events, Notice)
    assert notice.level == "warning" and "library variants" in notice.message


@pytest.mark.asyncio
async def test_prose_without_code(server: LLMServer, source: LLMSource,
                                  events: list[Any]) -> None:
    server.script("primary", "prose")
    [cand] = await source.propose(make_ctx(), ["A"])
    assert cand.source == "" and cand.no_kernel_reason.startswith(
        "no kernel in response (the model declined: 'I cannot write that kernel")
    assert cand.raw_reply == PROSE_REPLY
    assert not of(events, ModelFailover)


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["think", "reasoning_field"])
async def test_reasoning_stream(server: LLMServer, source: LLMSource,
                                events: list[Any], mode: str) -> None:
    server.script("primary", mode)
    [cand] = await source.propose(make_ctx(), ["B"])
    deltas = of(events, StreamDelta)
    reasoning = "".join(d.text for d in deltas if d.kind == "reasoning")
    content = "".join(d.text for d in deltas if d.kind == "content")
    assert reasoning == THINK_TEXT
    assert THINK_TEXT not in content and "<think>" not in content
    assert cand.reasoning == THINK_TEXT
    assert cand.source.strip() == KERNEL.strip() and "think" not in cand.source


@pytest.mark.asyncio
@pytest.mark.parametrize("first_token_s", [0.5])
async def test_never_answers_times_out(server: LLMServer, source: LLMSource,
                                       events: list[Any]) -> None:
    server.script("primary", "hang")
    server.script("fallback", "hang")
    t0 = time.monotonic()
    [cand] = await source.propose(make_ctx(), ["A"])
    assert time.monotonic() - t0 < 3.0
    assert cand.source == "" and "timeout" in cand.no_kernel_reason
    [fo] = of(events, ModelFailover)
    assert "timeout" in fo.reason
    [notice] = of(events, Notice)
    assert notice.level == "warning"


@pytest.mark.asyncio
async def test_both_models_fail(server: LLMServer, source: LLMSource,
                                events: list[Any]) -> None:
    server.script("primary", "503")
    server.script("fallback", "404")
    cands = await source.propose(make_ctx(), ["A", "B"])
    assert all(c.source == "" and c.no_kernel_reason for c in cands)
    notices = of(events, Notice)
    assert len(notices) == 1 and notices[0].level == "warning"
    assert notices[0].message.startswith("Nemotron unavailable (")
    assert notices[0].message.endswith("continuing with library variants")
    assert len(of(events, ModelFailover)) == 2
    assert_no_key(events)


@pytest.mark.asyncio
async def test_grounding_reaches_prompt(server: LLMServer, source: LLMSource) -> None:
    url = "https://gpuweb.github.io/gpuweb/wgsl/#sync-builtin-functions"
    grounding = [{"title": "WGSL barriers", "url": url, "content": "uniform control flow"}]
    await source.propose(make_ctx(), ["B"], grounding=grounding, name_prefix="N")
    [req] = server.requests
    user = req["messages"][-1]["content"]
    assert url in user and "var<workgroup>" in user
    assert req["messages"][0]["role"] == "system" and "main" in req["messages"][0]["content"]
    assert req["stream"] is True


def test_not_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEBIUS_API_KEY", raising=False)
    assert not LLMSource(LLMSettings(), lambda e: None).configured


# ---- truncation: finish_reason == "length" -------------------------------------

CUT_REPLY = KERNEL_REPLY[: KERNEL_REPLY.index("out[i]")]  # the kernel's braces never close


@pytest.mark.asyncio
async def test_cut_reply_asks_once_more_for_a_shorter_answer(
        server: LLMServer, source: LLMSource, events: list[Any]) -> None:
    server.script("primary", Scripted(CUT_REPLY, reasoning=THINK_TEXT, finish_reason="length"),
                  Scripted(f"```wgsl\n{KERNEL}```\n"))
    [cand] = await source.propose(make_ctx(), ["A"])
    assert cand.source.strip() == KERNEL.strip() and cand.no_kernel_reason == ""
    first, again = server.messages("primary")
    assert again[: len(first)] == first
    assert [m["role"] for m in again[len(first):]] == ["assistant", "user"]
    assert again[len(first)]["content"] == CUT_REPLY.strip()
    ask = again[-1]["content"]
    assert "cut off at the token limit (max_tokens=4096)" in ask and "only the kernel" in ask
    assert cand.messages == again  # the lineage holds the exchange that produced its reply
    assert cand.finish_reason == "stop" and THINK_TEXT in cand.reasoning
    assert any("cut off at the token limit" in n.message for n in of(events, Notice))
    assert not of(events, ModelFailover)


@pytest.mark.asyncio
async def test_reply_that_stays_cut_is_reported_as_cut_off(
        server: LLMServer, source: LLMSource) -> None:
    text = (REPLIES / "sgemm_truncated.md").read_text()
    server.chunk_size, server.chunk_delay = 400, 0.0  # a long reply, streamed quickly
    server.script("primary", Scripted(text, finish_reason="length"))
    [cand] = await source.propose(make_ctx(), ["B"])
    assert len(server.requests_for("primary")) == 2  # one re-ask, not more
    assert not server.requests_for("fallback")
    assert cand.source == ""
    assert cand.no_kernel_reason == "reply cut off at the token limit (max_tokens=4096)"
    assert cand.raw_reply == text and cand.finish_reason == "length"


@pytest.mark.asyncio
async def test_cut_reply_with_a_complete_kernel_is_kept(
        server: LLMServer, source: LLMSource) -> None:
    server.script("primary", Scripted(KERNEL_REPLY + "Next I would unroll the loop and",
                                      finish_reason="length"))
    [cand] = await source.propose(make_ctx(), ["C"])
    assert cand.source.strip() == KERNEL.strip()
    assert len(server.requests) == 1


# ---- which kernel a slot gets ----------------------------------------------------


@pytest.mark.asyncio
async def test_slot_gets_its_own_variant_from_a_multi_variant_reply(
        server: LLMServer, source: LLMSource) -> None:
    text = (REPLIES / "sgemm_multi_variant.md").read_text()
    server.chunk_size, server.chunk_delay = 400, 0.0
    server.script("primary", Scripted(text))
    a, b = await source.propose(make_ctx(), ["A", "B"])
    assert b.source == extract_for(text, "B").source
    assert "var<workgroup> As" in b.source and "const TS: u32 = 32u;" in b.source
    assert a.source == extract_for(text, "A").source and "acc00" in a.source
    assert a.source != b.source and b.raw_reply == text
    assert b.reply_label == "B" and b.reply_kernels >= 3


# ---- retries and conversations ------------------------------------------------------


@pytest.mark.asyncio
async def test_client_retry_honours_retry_after(server: LLMServer, source: LLMSource,
                                                events: list[Any]) -> None:
    server.retry_after_ms = 250
    server.script("primary", "429", "kernel")
    t0 = time.monotonic()
    [cand] = await source.propose(make_ctx(), ["A"])
    assert time.monotonic() - t0 >= 0.25
    assert cand.source and len(server.requests_for("primary")) == 2
    assert not of(events, ModelFailover)


@pytest.mark.asyncio
async def test_generation_two_continues_the_winners_conversation(
        server: LLMServer, source: LLMSource) -> None:
    server.script("primary", Scripted(KERNEL_REPLY, reasoning=THINK_TEXT))
    [b] = await source.propose(make_ctx(), ["B"])
    winner = CandidateResult(id=b.id, name="B", strategy="B", status="verified", source=b.source,
                             median_ms=0.42, speedup=2.5, regime="memory", pct_of_roofline=40.0)
    broken = CandidateResult(
        id="g1-C", name="C", strategy="C", status="compile_error", reason="2:3: bad",
        diagnostics=[Diagnostic(line=2, column=3, message="expected ';'", source_line="  let x = 1")])
    ctx = make_ctx(2, winner=winner, results=[winner, broken], candidates={b.id: b})
    [d] = await source.propose(ctx, ["D"])
    first, second = server.messages("primary")
    assert second[:2] == first
    assert second[2] == {"role": "assistant", "content": KERNEL_REPLY.strip()}
    feedback = second[3]["content"]
    assert second[3]["role"] == "user" and len(second) == 4
    assert "2.50x the baseline" in feedback and "memory-bound" in feedback
    assert "line 2:3: expected ';'" in feedback and "let x = 1" in feedback
    assert "Strategy D (generation 2)" in feedback
    assert d.messages == second and d.source


# ---- a server that never stops streaming ---------------------------------------------


@pytest_asyncio.fixture
async def endless_source(server: LLMServer, events: list[Any],
                         monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[LLMSource]:
    """A source whose deadlines (20 s) are far beyond what a bounded slot needs: an
    endless stream must end at the reply limit, not at a timeout."""
    monkeypatch.setenv("NEBIUS_API_KEY", KEY)
    server.chunk_size, server.chunk_delay = 4096, 0.001  # megabytes a second
    settings = LLMSettings(base_url=server.url, model="primary", fallback_model="fallback",
                           timeout_s=20.0, first_token_timeout_s=5.0, max_retries=1)
    src = LLMSource(settings, events.append)
    yield src
    await src.aclose()


def recorded_chars(events: list[Any], cid: str) -> int:
    return sum(len(d.text) for d in of(events, StreamDelta) if d.id == cid)


@pytest.mark.asyncio
@pytest.mark.parametrize("reasoning", [False, True])
async def test_endless_stream_is_closed_at_the_reply_limit(
        server: LLMServer, endless_source: LLMSource, events: list[Any], reasoning: bool) -> None:
    server.script("primary", Endless(reasoning=reasoning))
    server.script("fallback", Endless(reasoning=reasoning))
    t0 = time.monotonic()
    [cand] = await endless_source.propose(make_ctx(), ["A"])
    assert time.monotonic() - t0 < 8.0
    assert cand.source == ""
    assert cand.no_kernel_reason == reply_limit_reason()
    assert str(MAX_SLOT_REPLY_CHARS) in cand.no_kernel_reason
    assert "\n" not in cand.no_kernel_reason
    assert recorded_chars(events, "g1-A") <= MAX_SLOT_REPLY_CHARS
    recorded = sum(len(e.model_dump_json()) for e in events)
    assert recorded < 3 * MAX_SLOT_REPLY_CHARS
    assert not server.requests_for("fallback")  # failing over would only stream more
    assert len(server.requests_for("primary")) == 1  # no re-ask either
    assert not of(events, ModelFailover)


@pytest.mark.asyncio
async def test_endless_stream_keeps_a_kernel_it_already_holds(
        server: LLMServer, endless_source: LLMSource, events: list[Any]) -> None:
    server.script("primary", Endless(prefix=KERNEL_REPLY))
    [cand] = await endless_source.propose(make_ctx(), ["A"])
    assert cand.source.strip() == KERNEL.strip() and cand.no_kernel_reason == ""
    assert recorded_chars(events, "g1-A") <= MAX_SLOT_REPLY_CHARS
    assert len(server.requests) == 1


@pytest.mark.asyncio
async def test_three_endless_slots_each_end_promptly(
        server: LLMServer, endless_source: LLMSource, events: list[Any]) -> None:
    server.script("primary", Endless())
    t0 = time.monotonic()
    cands = await endless_source.propose(make_ctx(), ["A", "B", "C"])
    assert time.monotonic() - t0 < 12.0
    assert all(c.no_kernel_reason == reply_limit_reason() for c in cands)
    for c in cands:
        assert recorded_chars(events, c.id) <= MAX_SLOT_REPLY_CHARS


# ---- a user's workload with its own entry point, groups and uniform, on the real engine ----

SCALE_WORKLOAD = '''
import numpy as np
from vajra_tui import Binding, Workload

BASELINE = """@compute @workgroup_size(1)
fn scale_rows(@builtin(workgroup_id) wid: vec3<u32>) {
    for (var c = 0u; c < params.cols; c++) {
        B[wid.x * params.cols + c] = params.alpha * A[wid.x * params.cols + c];
    }
}
"""

WORKLOAD = Workload(
    name="scale_rows_llm", summary="B = alpha * A, row by row", dims=("ROWS", "COLS"),
    presets={"seed": {"ROWS": 8, "COLS": 48}},
    bindings=(Binding(0, "A", "read", group=1), Binding(2, "B", "read_write", group=1),
              Binding(3, "params", "uniform", struct="Params",
                      fields=(("rows", "u32"), ("cols", "u32"), ("alpha", "f32")),
                      values=lambda s, p: {"rows": s["ROWS"], "cols": s["COLS"], "alpha": 2.5})),
    buffer_len=lambda s: {"A": s["ROWS"] * s["COLS"], "B": s["ROWS"] * s["COLS"]},
    make_inputs=lambda s, rng: {"A": rng.standard_normal(s["ROWS"] * s["COLS"]).astype(np.float32)},
    reference=lambda s, i: 2.5 * i["A"].astype(np.float64), flops=lambda s: s["ROWS"] * s["COLS"],
    baseline=BASELINE, atol=1e-6, entry="scale_rows", grid=lambda s, p: (s["ROWS"], 1, 1))
'''

SCALE_REPLY = """Sixty-four invocations per row, striding over its columns:
```wgsl
@compute @workgroup_size(64)
fn scale_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = wid.x * params.cols;
    for (var c = lid.x; c < params.cols; c += 64u) {
        B[row + c] = params.alpha * A[row + c];
    }
}
```
"""


@pytest.mark.asyncio
async def test_a_reply_defining_the_workloads_entry_point_verifies_on_the_real_engine(
        gpu, server: LLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vajra_tui.engine.session import Session
    from vajra_tui.engine.tune import Tuner
    from vajra_tui.engine.workloads.loader import load_file
    from vajra_tui.settings import TimingSettings

    monkeypatch.setenv("NEBIUS_API_KEY", KEY)
    path = tmp_path / "scale_rows.py"
    path.write_text(SCALE_WORKLOAD)
    workload = load_file(path)
    events: list[Any] = []
    session = Session(workload, workload.size("seed"), gpu, events.append, TimingSettings(warmup=0, reps=2))
    await session.start()
    await session.run_baseline(time=True)
    server.reply("scale", SCALE_REPLY)
    llm = LLMSource(LLMSettings(base_url=server.url, model="scale", fallback_model="", timeout_s=20.0,
                                first_token_timeout_s=10.0), session.emit, workload=workload)
    try:
        [cand] = await llm.propose(Tuner(session, llm).context(), ["A"])
    finally:
        await llm.aclose()
    assert "fn scale_rows" in cand.source and "c += 64u" in cand.source and not cand.no_kernel_reason
    prompt = server.messages("scale")[0]
    assert "fn scale_rows(...)`, named `scale_rows`" in prompt[0]["content"]
    for needle in ("@group(1) @binding(2) B: array<f32>", "rows=8, cols=48, alpha=2.5",
                   "@group(0) @binding(3) var<uniform> params: Params;", "(8, 1, 1) workgroups"):
        assert needle in prompt[1]["content"], needle
    [result] = await session.evaluate([cand], generation=1)
    assert result.status == "verified", result.reason

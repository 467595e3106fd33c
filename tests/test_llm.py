"""NemotronSource against a loopback OpenAI-compatible server: streaming, failover, timeouts."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
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
from vajra_tui.engine.sources.llm import UNAUTHORIZED, NemotronSource
from vajra_tui.engine.sources.prompts import build_messages
from vajra_tui.settings import LLMSettings

try:
    from tests.llm_server import KERNEL, KERNEL_REPLY, PROSE_REPLY, THINK_TEXT, LLMServer
except ImportError:  # tests/ is not a package: pytest puts it on sys.path
    from llm_server import KERNEL, KERNEL_REPLY, PROSE_REPLY, THINK_TEXT, LLMServer

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


@pytest_asyncio.fixture
async def source(server: LLMServer, events: list[Any],
                 monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[NemotronSource]:
    monkeypatch.setenv("NEBIUS_API_KEY", KEY)
    settings = LLMSettings(base_url=server.url, model="primary", fallback_model="fallback",
                           timeout_s=5.0, first_token_timeout_s=0.5, max_retries=1)
    src = NemotronSource(settings, events.append)
    src.backoff_s = 0.01
    yield src
    await src.aclose()


def of(events: list[Any], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


def assert_no_key(events: list[Any]) -> None:
    for e in events:
        assert KEY not in e.model_dump_json()


@pytest.mark.asyncio
async def test_three_concurrent_streams(server: LLMServer, source: NemotronSource,
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
async def test_failover(server: LLMServer, source: NemotronSource, events: list[Any],
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
async def test_429_retried_on_primary(server: LLMServer, source: NemotronSource,
                                      events: list[Any]) -> None:
    server.script("primary", "429", "kernel")
    [cand] = await source.propose(make_ctx(), ["B"])
    assert cand.origin == "nemotron: primary" and cand.source
    assert len(server.requests_for("primary")) == 2
    assert not of(events, ModelFailover)


@pytest.mark.asyncio
async def test_401_stops_asking(server: LLMServer, source: NemotronSource,
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
async def test_stream_cut_off_then_fallback(server: LLMServer, source: NemotronSource,
                                            events: list[Any]) -> None:
    server.script("primary", "cut")
    [cand] = await source.propose(make_ctx(), ["A"])
    assert cand.origin == "nemotron: fallback" and cand.source
    [fo] = of(events, ModelFailover)
    assert "cut off" in fo.reason


@pytest.mark.asyncio
async def test_stream_cut_off_on_both(server: LLMServer, source: NemotronSource,
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
async def test_prose_without_code(server: LLMServer, source: NemotronSource,
                                  events: list[Any]) -> None:
    server.script("primary", "prose")
    [cand] = await source.propose(make_ctx(), ["A"])
    assert cand.source == "" and cand.no_kernel_reason == "no kernel in response"
    assert cand.raw_reply == PROSE_REPLY
    assert not of(events, ModelFailover)


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["think", "reasoning_field"])
async def test_reasoning_stream(server: LLMServer, source: NemotronSource,
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
async def test_never_answers_times_out(server: LLMServer, source: NemotronSource,
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
async def test_both_models_fail(server: LLMServer, source: NemotronSource,
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
async def test_grounding_reaches_prompt(server: LLMServer, source: NemotronSource) -> None:
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
    assert not NemotronSource(LLMSettings(), lambda e: None).configured


def test_first_prompt_contents() -> None:
    text = build_messages(make_ctx(), "C")[1]["content"]
    for needle in ("const N: u32", "@compute @workgroup_size(64) fn main() {}", "vec4",
                   "max-compute-workgroup-storage-size: 32768", "subgroups: available",
                   "```wgsl"):
        assert needle in text


def test_evolution_prompt_contents() -> None:
    winner = CandidateResult(id="g1-B", name="B", strategy="B", status="verified",
                             source="@compute @workgroup_size(256) fn main() { /*win*/ }",
                             gflops=123.4, gbps=456.7, pct_of_roofline=61.5, iqr_ms=0.012,
                             median_ms=0.842)
    other = CandidateResult(id="g1-A", name="A", strategy="A", status="verified",
                            gflops=80.5, median_ms=1.3)
    broken = CandidateResult(id="g1-C", name="C", strategy="C", status="compile_error",
                             reason="compile failed",
                             diagnostics=[Diagnostic(line=3, column=5,
                                                     message="unresolved identifier 'tile'")])
    wrong = CandidateResult(id="g1-D", name="D", strategy="D", status="rejected",
                            reason="mismatch", max_rel_error=0.25, worst_index=4095)
    ctx = make_ctx(2, winner=winner, results=[winner, other, broken, wrong])
    grounding = [{"title": "err", "url": "https://example.org/tile-error", "content": "x"}]
    text = build_messages(ctx, "D", grounding)[1]["content"]
    for needle in ("/*win*/", "123", "457", "61.5%", "0.842", "0.012", "80.5",
                   "3:5 unresolved identifier 'tile'", "max_rel_error=0.25",
                   "worst_index=4095", "https://example.org/tile-error"):
        assert needle in text, needle

"""Grounding against a loopback Tavily /search server: results, cache, failures."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from vajra_tui.engine.candidate import GenerationContext
from vajra_tui.engine.events import DeviceInfo, GroundingResult, WorkloadInfo
from vajra_tui.engine.sources.llm.client import LLMSource
from vajra_tui.engine.sources.llm.grounding import (CACHE_FILE, MAX_GROUNDING_CHARS, MAX_RESULTS,
                                                    SNIPPET_CHARS, Grounding)
from vajra_tui.engine.sources.llm.prompts import build_messages
from vajra_tui.settings import LLMSettings, TavilySettings

try:
    from tests.llm_server import LLMServer
    from tests.tavily_server import TavilyServer, result_url
except ImportError:  # tests/ is not a package: pytest puts it on sys.path
    from llm_server import LLMServer
    from tavily_server import TavilyServer, result_url

KEY = "tvly-test-s3cr3t"


@pytest.fixture
def tavily() -> Iterator[TavilyServer]:
    with TavilyServer() as s:
        yield s


@pytest.fixture
def events() -> list[Any]:
    return []


def _settings(server: TavilyServer, timeout_s: float = 3.0) -> TavilySettings:
    return TavilySettings(base_url=server.url, timeout_s=timeout_s, max_results=3)


@pytest_asyncio.fixture
async def grounding(tavily: TavilyServer, events: list[Any], tmp_path: Path,
                    monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Grounding]:
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    g = Grounding(_settings(tavily), events.append, cache_dir=tmp_path)
    yield g
    await g.aclose()


def grounding_events(events: list[Any]) -> list[GroundingResult]:
    return [e for e in events if isinstance(e, GroundingResult)]


def assert_no_key(events: list[Any]) -> None:
    for e in events:
        assert KEY not in e.model_dump_json()


@pytest.mark.asyncio
async def test_strategy_results(tavily: TavilyServer, grounding: Grounding,
                                events: list[Any]) -> None:
    assert grounding.enabled
    results = await grounding.for_strategy("sgemm", "B")
    assert len(results) == 3
    for r in results:
        assert set(r) == {"title", "url", "content"}
        assert r["url"].startswith("https://www.w3.org/TR/WGSL/")
        assert 0 < len(r["content"]) <= SNIPPET_CHARS
    [q] = tavily.queries
    assert "workgroupBarrier" in q and "var<workgroup>" in q and "sgemm" in q
    assert tavily.bodies[0]["max_results"] == 3
    assert tavily.auth_headers == [f"Bearer {KEY}"]
    [ev] = grounding_events(events)
    assert ev.query == q and ev.results == results and not ev.cached and not ev.error
    assert_no_key(events)


@pytest.mark.asyncio
async def test_strategy_queries_differ(tavily: TavilyServer, grounding: Grounding) -> None:
    await grounding.for_strategy("sgemm", "A")
    await grounding.for_strategy("sgemm", "C")
    assert "workgroup_size" in tavily.queries[0]
    assert "vec4<f32>" in tavily.queries[1]


@pytest.mark.asyncio
async def test_cache_hit_memory_and_file(tavily: TavilyServer, grounding: Grounding,
                                         events: list[Any], tmp_path: Path) -> None:
    first = await grounding.for_strategy("sgemm", "C")
    second = await grounding.for_strategy("sgemm", "C")
    assert first == second and len(tavily.queries) == 1
    assert [e.cached for e in grounding_events(events)] == [False, True]
    cache = json.loads((tmp_path / CACHE_FILE).read_text())
    assert list(cache.values()) == [first]
    assert [p.name for p in tmp_path.iterdir()] == [CACHE_FILE]  # no temp files left
    fresh = Grounding(grounding.settings, events.append, cache_dir=tmp_path)
    assert await fresh.for_strategy("sgemm", "C") == first
    assert len(tavily.queries) == 1
    assert grounding_events(events)[-1].cached


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["fail", "badjson"])
async def test_failing_server_never_raises(tavily: TavilyServer, grounding: Grounding,
                                           events: list[Any], mode: str) -> None:
    tavily.mode = mode
    assert await grounding.for_strategy("sgemm", "A") == []
    [ev] = grounding_events(events)
    assert ev.error and ev.results == []
    assert await grounding.for_errors(["error: unresolved identifier 'x'"]) == []
    assert len(tavily.queries) == 2  # failures are not cached
    tavily.mode = "ok"
    assert await grounding.for_strategy("sgemm", "A")  # retried after the failure
    assert_no_key(events)


@pytest.mark.asyncio
async def test_hanging_server_times_out(tavily: TavilyServer, events: list[Any],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    tavily.mode = "hang"
    g = Grounding(_settings(tavily, timeout_s=0.3), events.append)
    t0 = time.monotonic()
    assert await g.for_strategy("sgemm", "B") == []
    assert time.monotonic() - t0 < 2.0
    [ev] = grounding_events(events)
    assert "timeout" in ev.error.lower()
    await g.aclose()


@pytest.mark.asyncio
async def test_for_errors_exact_messages(tavily: TavilyServer, grounding: Grounding) -> None:
    msgs = ["unresolved identifier 'tile'", "workgroupBarrier must only be called from uniform "
            "control flow", "unresolved identifier 'tile'"]
    results = await grounding.for_errors(msgs)
    assert sorted(tavily.queries) == sorted(f"WGSL {m}" for m in msgs[:2])
    assert len(results) == 6 and len({r["url"] for r in results}) == 6


@pytest.mark.asyncio
async def test_results_reach_prompt(grounding: Grounding) -> None:
    results = await grounding.for_strategy("saxpy", "B")
    ctx = GenerationContext(
        workload=WorkloadInfo(name="saxpy", size={"N": 1024}, flops=2048, min_bytes=12288,
                              output_grid=[1024, 1, 1], atol=1e-5),
        device=DeviceInfo(name="Test GPU"),
    )
    text = build_messages(ctx, "B", results)[1]["content"]
    for r in results:
        assert r["url"] in text


def test_disabled_without_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    assert not Grounding(TavilySettings(), lambda e: None).enabled


@pytest.mark.asyncio
async def test_joined_strategy_results_stay_bounded(
        tavily: TavilyServer, events: list[Any], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three strategies' searches, each at its bound, join into one prompt within that bound."""
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    monkeypatch.setenv("NEBIUS_API_KEY", "llm-test-key")
    g = Grounding(TavilySettings(base_url=tavily.url, timeout_s=3.0, max_results=MAX_RESULTS),
                  events.append, cache_dir=tmp_path)
    with LLMServer(chunk_delay=0.0) as llm:
        src = LLMSource(LLMSettings(base_url=llm.url, model="m", fallback_model="",
                                    timeout_s=5.0, first_token_timeout_s=2.0), events.append, g)
        try:
            ctx = GenerationContext(
                workload=WorkloadInfo(name="saxpy", size={"N": 1024}, flops=2048,
                                      min_bytes=12288, output_grid=[1024, 1, 1], atol=1e-5),
                device=DeviceInfo(name="Test GPU"))
            cands = await src.propose(ctx, ["A", "B", "C"])
        finally:
            await src.aclose()
        prompts = [m[-1]["content"] for m in llm.messages()]
    assert len(cands) == 3 and len(prompts) == 3 and len(tavily.queries) == 3
    searched = [r for e in grounding_events(events) for r in e.results]
    assert sum(len(v) for r in searched for v in r.values()) > MAX_GROUNDING_CHARS  # the setup
    for prompt in prompts:
        shown = [r for r in searched if f"<{r['url']}>" in prompt]
        assert 0 < len(shown) <= MAX_RESULTS
        assert sum(len(v) for r in shown for v in r.values()) <= MAX_GROUNDING_CHARS
        for q in tavily.queries:  # taken in turns: every strategy's first result is there
            assert result_url(q, 0) in prompt

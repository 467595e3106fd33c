"""What a user is told when the model gives no kernel, and how often a dead server is asked.

Held-out checks of the model path found: a refusal, an empty reply and a reply of only
reasoning all read "no kernel in response"; a base_url that serves a web page showed
"JSONDecodeError: Expecting value: line 1 column 1 (char 0)"; and a server that was down
was asked again in every generation, each time paying the client's retries and deadlines.
All through the real openai client against the loopback server.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from vajra_tui.engine.candidate import Candidate, GenerationContext
from vajra_tui.engine.events import Notice
from vajra_tui.engine.sources.base import CandidateSource, Fallback
from vajra_tui.engine.sources.llm.client import LLMSource
from vajra_tui.settings import LLMSettings

try:
    from tests.llm_server import LLMServer, Scripted
    from tests.test_llm import make_ctx
except ImportError:  # tests/ is not a package: pytest puts it on sys.path
    from llm_server import LLMServer, Scripted
    from test_llm import make_ctx


@pytest.fixture
def server() -> Iterator[LLMServer]:
    with LLMServer() as s:
        yield s


def _settings(url: str, first_token_s: float = 3.0) -> LLMSettings:
    return LLMSettings(base_url=url, model="primary", fallback_model="fallback", timeout_s=8.0,
                       first_token_timeout_s=first_token_s, max_retries=0)


@pytest_asyncio.fixture
async def events_and_source(server: LLMServer, monkeypatch: pytest.MonkeyPatch
                            ) -> AsyncIterator[tuple[list[Any], LLMSource]]:
    monkeypatch.setenv("NEBIUS_API_KEY", "test-key")
    events: list[Any] = []
    source = LLMSource(_settings(server.url, first_token_s=0.5), events.append)
    yield events, source
    await source.aclose()


@pytest.mark.asyncio
@pytest.mark.parametrize("reply, reasoning, said", [
    ("I'm sorry, but I can't help with writing GPU kernels today.", "",
     "no kernel in response (the model declined: \"I'm sorry, but I can't help with writing GPU kernels today.\")"),
    ("", "", "no kernel in response (the reply was empty)"),
    ("", "The tile should be 16x16 so that each lane loads four values...",
     "no kernel in response (only reasoning, no answer after it)"),
    ("<think>Tiles of 16, then unroll.</think>", "", "no kernel in response (only reasoning, no answer after it)"),
    ("Use shared-memory tiles of 16x16 and unroll the inner loop by four.", "",
     "no kernel in response (prose, no code)"),
], ids=["declined", "empty", "reasoning-field", "think-only", "prose"])
async def test_a_reply_without_a_kernel_says_which_kind(server, events_and_source, reply, reasoning, said):
    events, source = events_and_source
    server.script("primary", Scripted(reply, reasoning))
    [cand] = await source.propose(make_ctx(), ["A"])
    assert cand.source == "" and cand.no_kernel_reason == said


@pytest.mark.asyncio
async def test_a_web_page_at_base_url_is_said_in_words(server, events_and_source):
    events, source = events_and_source
    server.script("primary", "badjson")
    [cand] = await source.propose(make_ctx(), ["A"])
    assert "not chat-completion JSON: is base_url an OpenAI-compatible /v1 endpoint?" in cand.no_kernel_reason
    assert "JSONDecodeError" not in cand.no_kernel_reason
    assert not server.requests_for("fallback")  # the same server would serve the fallback the same page


class _Library(CandidateSource):
    """Stands in for the offline library: one candidate a generation, counted."""

    label = "library"

    def __init__(self) -> None:
        self.asked = 0

    async def propose(self, ctx: GenerationContext, strategies=("A",)) -> list[Candidate]:
        self.asked += 1
        return [Candidate(id=f"g{ctx.generation}-A", name="A", strategy="A", generation=ctx.generation,
                          source="@compute @workgroup_size(1) fn main() {}")]

    async def evolve(self, ctx: GenerationContext, letter: str) -> list[Candidate]:
        return await self.propose(ctx, (letter,))


@pytest.mark.asyncio
async def test_a_server_that_never_answers_is_not_asked_every_generation(server, events_and_source):
    events, source = events_and_source
    server.script("primary", "hang")
    server.script("fallback", "hang")
    library = _Library()
    run = Fallback(source, library)
    first = await run.propose(make_ctx(1), ["A", "B"])
    asked = len(server.requests)
    assert asked == 4 and library.asked == 1  # two slots, each the primary then the fallback
    [notice] = [e for e in events if isinstance(e, Notice)]
    assert "unreachable at" in notice.message and "not asked again for 5 min" in notice.message
    assert any(c.no_kernel_reason.startswith("model request failed (timeout") for c in first)
    t0 = time.monotonic()
    later = await run.evolve(make_ctx(2), "D")
    assert time.monotonic() - t0 < 0.4  # no first-token deadline paid again
    assert len(server.requests) == asked and library.asked == 2
    assert [c.source for c in later] and run.label == "library"


@pytest.mark.asyncio
async def test_a_refused_connection_is_down_but_a_503_is_not(monkeypatch):
    """Nothing listening (connection refused) pauses the model; a server that answers 503 is
    alive and busy, and keeps being asked (the client retries it with backoff itself)."""
    monkeypatch.setenv("NEBIUS_API_KEY", "test-key")
    with LLMServer() as dead:
        url = dead.url
    source = LLMSource(_settings(url), [].append)
    await source.propose(make_ctx(), ["A"])
    assert not source.available
    await source.aclose()
    with LLMServer() as busy:
        busy.script("primary", "503")
        busy.script("fallback", "503")
        source = LLMSource(_settings(busy.url), [].append)
        await source.propose(make_ctx(), ["A"])
        assert source.available
        await source.aclose()

"""Real model replies, end to end: the loopback server streams each reply of the corpus
(`tests/replies/`) through the real openai client into LLMSource, and the real
engine on the local adapter judges the kernel the slot asked for.

A correct kernel is kept only if it verifies, is the variant its slot requested and
runs on the grid it needs. A broken one counts only if its first diagnostic names the
line of the model's own text where the mistake is, with the compiler's message.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from llm_server import LLMServer
from vajra_tui.engine.sources.base import Fallback
from vajra_tui.engine.sources.library import LibrarySource
from vajra_tui.engine.sources.llm.client import LLMSource
from vajra_tui.engine.session import Session
from vajra_tui.engine.tune import Tuner
from vajra_tui.engine.workloads import get_workload
from vajra_tui.settings import LLMSettings, TimingSettings

REPLIES = Path(__file__).parent / "replies"
MANIFEST: dict[str, dict[str, Any]] = json.loads((REPLIES / "manifest.json").read_text())["replies"]
KEY = "corpus-key-9f8e7d6c5b4a"


def _of(expect: str) -> list[str]:
    return [name for name, entry in MANIFEST.items() if entry["expect"] == expect]


@pytest.fixture(scope="module")
def server() -> Iterator[LLMServer]:
    with LLMServer(chunk_size=48, chunk_delay=0.0) as s:
        yield s


@pytest_asyncio.fixture
async def judge(gpu, server: LLMServer, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    """Stream one corpus reply for its slot and run what comes out through the engine."""
    monkeypatch.setenv("NEBIUS_API_KEY", KEY)
    sources: list[LLMSource] = []

    async def run(name: str) -> tuple[Any, Any, list[Any]]:
        entry = MANIFEST[name]
        model = f"corpus-{name}"
        server.reply(model, (REPLIES / name).read_bytes().decode("utf-8"),
                     reasoning=entry.get("reasoning", ""),
                     finish_reason=entry.get("finish_reason", "stop"))
        events: list[Any] = []
        workload = get_workload(entry["workload"])
        session = Session(workload, workload.size(entry["size"]), gpu, events.append,
                          TimingSettings(warmup=0, reps=2))
        # No calibration: what is judged here is the reply and its kernel, and neither reads the
        # ceilings (the prompt says none are known). Calibrating cost each case a copy check of
        # about 0.8 s of CPU on lavapipe, and a full calibration (5 s) whenever a loaded machine
        # moved the copy rate 15% off the cached one.
        await session.start(calibrate=False)
        await session.run_baseline(time=True)
        llm = LLMSource(LLMSettings(base_url=server.url, model=model, fallback_model="",
                                    timeout_s=20.0, first_token_timeout_s=10.0), session.emit)
        sources.append(llm)
        tuner = Tuner(session, Fallback(llm, LibrarySource(session.device)))
        tuner.generation = 2 if entry["strategy"] >= "D" else 1
        [candidate] = await llm.propose(tuner.context(), [entry["strategy"]])
        [result] = await session.evaluate([candidate], generation=tuner.generation)
        for e in events:
            assert KEY not in e.model_dump_json()
        return candidate, result, events

    yield run
    for llm in sources:
        await llm.aclose()


@pytest.mark.parametrize("name", _of("correct"))
async def test_every_correct_kernel_is_kept(judge, name: str) -> None:
    entry = MANIFEST[name]
    candidate, result, _ = await judge(name)
    assert result.status == "verified", f"{name}: {result.status} {result.reason}"
    assert entry["expected_contains"] in candidate.source, f"{name}: not the {entry['strategy']} variant"
    assert result.grid[:2] == entry["grid"], f"{name}: grid {result.grid} (over-dispatch {result.over_dispatch})"


@pytest.mark.parametrize("name", _of("broken"))
async def test_every_broken_kernel_is_diagnosed_at_the_models_line(judge, name: str) -> None:
    entry = MANIFEST[name]
    candidate, result, _ = await judge(name)
    assert result.status == "compile_error", f"{name}: {result.status} {result.reason}"
    first = result.diagnostics[0]
    lines = candidate.source.splitlines()
    assert first.line == entry["error_line"], f"{name}: {first.line}:{first.column} {first.message}"
    assert entry["error_substring"].lower() in first.message.lower(), f"{name}: {first.message}"
    assert first.source_line == lines[first.line - 1].rstrip()


@pytest.mark.parametrize("name", _of("truncated"))
async def test_a_reply_cut_at_the_token_limit_is_reported_and_asked_again(judge, server, name: str) -> None:
    candidate, result, _ = await judge(name)
    assert result.status == "no_kernel"
    assert "cut off at the token limit" in result.reason
    asked = server.messages(f"corpus-{name}")
    assert len(asked) == 2, "a cut reply is asked for once more, not more"
    assert "cut off" in asked[1][-1]["content"]


@pytest.mark.parametrize("name", _of("no_kernel"))
async def test_a_reply_without_a_kernel_says_so(judge, name: str) -> None:
    _, result, _ = await judge(name)
    assert result.status == "no_kernel" and "cut off" not in result.reason

"""One streamed chat completion: the reader, its outcomes and how its failures are read.

Every chunk becomes a StreamDelta so the UI can show the model thinking, and every
delta is recorded: so what one slot may stream is bounded (:data:`MAX_SLOT_REPLY_CHARS`),
as is how long an attempt may take (a first-token and a total deadline). A stream past
the character limit is closed and comes back as a capped :class:`Reply`; any other
failure is an :class:`AttemptFailed` saying whether the fallback model should try.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Callable

import openai

from vajra_tui.settings import LLMSettings
from vajra_tui.engine.events import Event, StreamDelta
from vajra_tui.engine.sources.llm.extract import ThinkSplitter

MAX_SLOT_REPLY_CHARS = 256 * 1024
"""Reply characters (content + reasoning, every attempt together) one slot may stream.

A real reply is a kernel with some prose or reasoning: max_tokens (4096 by default) is
about 16 KB of text an attempt, and a slot makes at most three attempts (primary,
fallback, one shorter re-ask), so ~50 KB. 256 KB is far beyond that; only a server that
ignores max_tokens and never stops gets there, and without a limit its deltas filled a
377 MB recording before the deadlines cut it. It stays below the extractor's own
MAX_REPLY_CHARS, so a capped reply can still be read for a kernel it already holds."""

CAPPED = "reply_limit"
"""The finish_reason of a reply this client closed at :data:`MAX_SLOT_REPLY_CHARS`."""


def reply_limit_reason() -> str:
    """The one-line no-kernel reason of a slot whose stream was closed at the limit."""
    return (f"reply passed {MAX_SLOT_REPLY_CHARS} characters (MAX_SLOT_REPLY_CHARS, content + "
            "reasoning per slot); stream closed")


class Unauthorized(Exception):
    """The API key was rejected: no model will answer, so no attempt fails over."""


class AttemptFailed(Exception):
    """One request failed; ``failover`` says whether the fallback model should try."""

    def __init__(self, reason: str, *, failover: bool, partial: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.failover = failover
        self.partial = partial


@dataclass
class Failure:
    """Every model asked failed: the last model, its error and the one before it."""

    model: str
    err: AttemptFailed
    prev: AttemptFailed | None = None
    summary: str = ""


@dataclass
class Reply:
    """One finished (or capped) reply: ``capped`` when it was closed at the slot's limit."""

    model: str
    content: str = ""
    reasoning: list[str] = field(default_factory=list)
    finish_reason: str = ""

    @property
    def capped(self) -> bool:
        return self.finish_reason == CAPPED


@dataclass
class SlotBudget:
    """What is left of one slot's :data:`MAX_SLOT_REPLY_CHARS`, shared by its attempts."""

    left: int = MAX_SLOT_REPLY_CHARS
    exceeded: bool = False  # some text did not fit: the stream must be closed

    def take(self, text: str) -> str:
        """The part of ``text`` that still fits, charged to the budget."""
        part = text[: max(self.left, 0)]
        self.left -= len(part)
        self.exceeded = self.exceeded or len(part) < len(text)
        return part


def _transport_error(exc: BaseException) -> bool:
    """An httpx transport error (its RemoteProtocolError: the server hung up mid-stream), which
    openai before 3.14 passed through unwrapped; told by its class, httpx being openai's own."""
    return any(c.__name__ == "TransportError" and c.__module__.startswith("httpx") for c in type(exc).__mro__)


def classify(exc: BaseException, started: bool, partial: str,
             scrub: Callable[[str], str]) -> AttemptFailed:
    """The bounded outcome of one failed request (raises :class:`Unauthorized` on 401)."""
    if isinstance(exc, openai.AuthenticationError):
        raise Unauthorized() from None
    if isinstance(exc, (asyncio.TimeoutError, openai.APITimeoutError)):
        what = "no first token" if not started else "stream stalled"
        return AttemptFailed(f"timeout ({what})", failover=True, partial=partial)
    if isinstance(exc, openai.APIConnectionError) or _transport_error(exc):
        reason = "stream cut off mid-reply" if started else "connection error"
        return AttemptFailed(reason, failover=True, partial=partial)
    if isinstance(exc, openai.RateLimitError):
        return AttemptFailed("HTTP 429 (rate limited)", failover=True)
    if isinstance(exc, openai.NotFoundError):
        return AttemptFailed("HTTP 404 (model not found)", failover=True)
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        if code >= 500:
            return AttemptFailed(f"HTTP {code}", failover=True)
        return AttemptFailed(f"HTTP {code}", failover=False)
    if isinstance(exc, json.JSONDecodeError):  # a proxy or a web page at base_url, not a chat API
        return AttemptFailed("the server's stream is not chat-completion JSON: is base_url an "
                             "OpenAI-compatible /v1 endpoint?", failover=False, partial=partial)
    if isinstance(exc, openai.APIError) and started:
        return AttemptFailed("stream error mid-reply", failover=True, partial=partial)
    return AttemptFailed(scrub(f"{type(exc).__name__}: {exc}")[:200], failover=True, partial=partial)


class StreamReader:
    """Reads one streamed completion for slot ``cid``, emitting its deltas within ``budget``."""

    def __init__(self, settings: LLMSettings, client: openai.AsyncOpenAI,
                 emit: Callable[[Event], None], cid: str, budget: SlotBudget,
                 scrub: Callable[[str], str]) -> None:
        self.settings = settings
        self.client = client
        self.emit = emit
        self.scrub = scrub
        self.cid = cid
        self.budget = budget
        self.splitter = ThinkSplitter()
        self.started = False

    def _send(self, kind: str, text: str) -> None:
        if text:
            self.emit(StreamDelta(id=self.cid, kind=kind, text=text))  # type: ignore[arg-type]

    def _feed(self, reply: Reply, delta: object) -> None:
        """One chunk's reasoning and content, as much of them as the budget allows."""
        think = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if isinstance(think, str) and think:
            self.started = True
            think = self.budget.take(think)
            reply.reasoning.append(think)
            self._send("reasoning", think)
        content = getattr(delta, "content", None)
        if content:
            self.started = True
            content = self.budget.take(content)
            reply.content += content
            for kind, text in self.splitter.feed(content):
                self._send(kind, text)

    async def read(self, model: str, messages: list[dict[str, str]]) -> Reply:
        """Stream one completion; raise :class:`AttemptFailed` on any failure."""
        s = self.settings
        now = time.monotonic()
        total_deadline = now + s.timeout_s
        first_deadline = min(total_deadline, now + s.first_token_timeout_s)
        reply = Reply(model=model)
        finish = ""
        stream = None

        def wait_left() -> float:
            return max(0.0, (total_deadline if self.started else first_deadline) - time.monotonic())

        try:
            stream = await asyncio.wait_for(
                self.client.chat.completions.create(
                    model=model,
                    messages=messages,  # type: ignore[arg-type]
                    stream=True,
                    max_tokens=s.max_tokens,
                    temperature=s.temperature,
                ),
                timeout=wait_left(),
            )
            chunks = stream.__aiter__()
            while finish != CAPPED:
                try:
                    chunk = await asyncio.wait_for(chunks.__anext__(), timeout=wait_left())
                except StopAsyncIteration:
                    break
                for choice in chunk.choices or []:
                    self._feed(reply, choice.delta)
                    if self.budget.exceeded:
                        finish = CAPPED  # closed below: no further deltas for this slot
                        break
                    if choice.finish_reason:
                        finish = str(choice.finish_reason)
            for kind, text in self.splitter.flush():
                self._send(kind, text)
        except Unauthorized:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure becomes a bounded outcome
            raise classify(exc, self.started, reply.content, self.scrub) from None
        finally:
            if stream is not None:
                try:
                    await asyncio.wait_for(stream.close(), timeout=1.0)
                except Exception:  # noqa: BLE001
                    pass
        if not finish:
            raise AttemptFailed("stream cut off mid-reply", failover=True, partial=reply.content)
        reply.finish_reason = finish
        reply.reasoning = ["".join(reply.reasoning)] if reply.reasoning else []
        return reply

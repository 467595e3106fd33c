"""Nemotron as a candidate source: streamed chat completions with failover.

Each strategy is one streamed request (read by :mod:`.stream`); every chunk becomes a
StreamDelta so the UI can show the model thinking. Nothing here may hang the tuner or
flood its recording: each attempt is bounded by a first-token and a total deadline, each
slot by MAX_SLOT_REPLY_CHARS of reply (a stream past it is closed), the openai client
retries 429 and 5xx itself (honouring Retry-After, with jitter), then the
fallback model gets its turn, and if that fails too the caller carries on with
library variants. A reply cut off at the token limit is asked for once more,
shorter, unless it already holds a complete kernel for its slot.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

import openai

from vajra_tui.settings import LLMSettings
from vajra_tui.engine.candidate import Candidate, GenerationContext
from vajra_tui.engine.events import CandidateQueued, Event, ModelFailover, Notice
from vajra_tui.engine.sources.llm.extract import Extracted, extract_for, strip_think
from vajra_tui.engine.sources.base import STRATEGIES, CandidateSource
from vajra_tui.engine.sources.llm.prompt_workload import entry_points
from vajra_tui.engine.sources.llm.prompts import build_messages
from vajra_tui.engine.sources.llm.reply_shapes import MAIN
from vajra_tui.engine.sources.llm.stream import (
    CAPPED, MAX_SLOT_REPLY_CHARS, AttemptFailed, Failure, Reply, SlotBudget, StreamReader,
    Unauthorized, reply_limit_reason,
)

__all__ = ["EXTRACT_TIMEOUT_S", "LLMSource", "MAX_SLOT_REPLY_CHARS", "SHORTER", "UNAUTHORIZED",
           "cut_off_reason", "extract", "extract_off_loop", "reply_limit_reason"]

if TYPE_CHECKING:
    from vajra_tui.engine.sources.llm.grounding import Grounding
    from vajra_tui.engine.workloads.base import Workload

UNAUTHORIZED = "API key rejected (401)"
SHORTER = ("Your reply was cut off at the token limit (max_tokens={max_tokens}) before the kernel "
           "was complete. Reply again with only the kernel: one ```wgsl fenced block holding the "
           "complete kernel, no explanation and no reasoning before or after it.")


def cut_off_reason(max_tokens: int) -> str:
    return f"reply cut off at the token limit (max_tokens={max_tokens})"


DOWN_REASONS = frozenset({"connection error", "timeout (no first token)"})
"""Failures that mean nothing answers at ``base_url`` (no byte of any reply came back)."""
DOWN_PAUSE_S = 300.0
"""How long a server that every slot of a generation found down is left alone: a dead
server used to cost each later generation its retries and deadlines again, for nothing."""


def server_down(failure: Failure) -> bool:
    """Whether this slot's every attempt found no server (as opposed to one that said no)."""
    tried = [failure.err] + ([failure.prev] if failure.prev is not None else [])
    return all(a.reason in DOWN_REASONS and not a.partial for a in tried)


EXTRACT_TIMEOUT_S = 30.0
"""Longest wait for one reply's extraction: never reached by design (the scans are linear,
the reply size capped); it only makes sure a slot's card ends if a scan ever regresses."""


def extract(reply: str, strategy: str, entries: Sequence[str] = MAIN) -> Extracted:
    """The kernel meant for ``strategy`` out of a reply that may hold several variants
    (``entries``: the workload's entry points, ``main`` for a built-in).

    Never raises: any failure to read a reply becomes that slot's no-kernel reason, so
    its candidate (and its card in the TUI) still ends.
    """
    try:
        # a built-in's call stays two-argument, as callers that wrap extract_for expect
        found = extract_for(reply, strategy) if tuple(entries) == MAIN else extract_for(reply, strategy, entries)
    except Exception as exc:  # noqa: BLE001 - a bad reply is one slot's outcome, not a crash
        detail = (str(exc).splitlines() or [""])[0][:160]
        return Extracted("", strip_think(reply)[1], None, 0, False, 0,
                         reason=f"kernel extraction failed ({type(exc).__name__}: {detail})")
    if not found.source:
        found.complete = False
    return found


async def extract_off_loop(reply: str, strategy: str, entries: Sequence[str] = MAIN) -> Extracted:
    """:func:`extract` in a worker thread, so a long reply never stalls the event loop."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(extract, reply, strategy, entries), EXTRACT_TIMEOUT_S)
    except asyncio.TimeoutError:
        return Extracted("", "", None, 0, False, 0,
                         reason=f"kernel extraction took over {EXTRACT_TIMEOUT_S:g} s")


def _in_turns(batches: list[list[dict]]) -> list[dict]:
    """Results taken a rank at a time across searches (each URL once), so a cut joined list
    still holds every strategy's first results rather than only the first strategy's."""
    seen: set[str] = set()
    out: list[dict] = []
    for rank in range(max(map(len, batches), default=0)):
        for result in (b[rank] for b in batches if rank < len(b)):
            if result.get("url") not in seen:
                seen.add(str(result.get("url")))
                out.append(result)
    return out


REFUSALS = ("i can't", "i cannot", "i can not", "i won't", "i will not", "i'm sorry", "i am sorry",
            "sorry,", "i'm unable", "i am unable", "i'm not able", "i am not able", "as an ai")
"""How replies that decline begin (after any <think> block), lower-cased."""


def no_kernel_reason(reply: Reply) -> str:
    """Why a finished reply holds no kernel: empty, reasoning only, declined, or prose.

    All four used to read "no kernel in response"; a user deciding whether to change the
    model, the prompt or max_tokens needs to know which it was."""
    text = strip_think(reply.content)[0].strip()
    if not text:
        thought = any(r.strip() for r in reply.reasoning) or bool(strip_think(reply.content)[1].strip())
        return ("no kernel in response (only reasoning, no answer after it)" if thought
                else "no kernel in response (the reply was empty)")
    first = " ".join(text.split())
    if first.lower().startswith(REFUSALS):
        shown = first if len(first) <= 80 else first[:79] + "…"
        return f"no kernel in response (the model declined: {shown!r})"
    return "no kernel in response (prose, no code)"


class LLMSource(CandidateSource):
    """Proposes kernels by asking a Nemotron model once per strategy, concurrently.

    With ``grounding`` (Tavily), the first generation's prompts carry search results for
    each strategy and later ones results for the compiler's first errors. With ``workload``
    (the declaration itself), the prompts also state what the context's WorkloadInfo does
    not hold (uniform values, fills, an explicit grid, the passes); without it the entry
    points a reply must define are read from the baseline's text.
    """

    label = "nemotron"

    def __init__(self, settings: LLMSettings, emit: Callable[[Event], None],
                 grounding: Grounding | None = None, workload: Workload | None = None) -> None:
        self.settings = settings
        self.emit = emit
        self.grounding = grounding
        self.workload = workload
        self.unauthorized = False
        self.down_until = 0.0  # time.monotonic() before which a server found down is not asked
        self._client: openai.AsyncOpenAI | None = None

    @property
    def configured(self) -> bool:
        """An API key is present in the environment."""
        return self.settings.api_key() is not None

    @property
    def available(self) -> bool:
        return self.configured and not self.unauthorized and time.monotonic() >= self.down_until

    def _scrub(self, text: str) -> str:
        key = self.settings.api_key()
        secret = key.get_secret_value() if key else ""
        return text.replace(secret, "***") if secret else text

    def _get_client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            key = self.settings.api_key()
            assert key is not None
            # The client retries 408/409/429/5xx and connection errors itself, honouring
            # Retry-After and adding jitter; failover to the fallback model is ours.
            self._client = openai.AsyncOpenAI(
                base_url=self.settings.base_url,
                api_key=key.get_secret_value(),
                timeout=self.settings.timeout_s,
                max_retries=max(0, self.settings.max_retries),
            )
        return self._client

    async def aclose(self) -> None:
        """The HTTP client and the grounding's: a source that was never asked holds neither."""
        if self._client is not None:
            await self._client.close()
            self._client = None
        if self.grounding is not None:
            await self.grounding.aclose()

    async def evolve(self, ctx: GenerationContext, letter: str) -> list[Candidate]:
        return await self.propose(ctx, [letter])

    async def _grounded(self, ctx: GenerationContext, strategies: Sequence[str]) -> list[dict] | None:
        """Search results for the prompts: per strategy at first, then for the compiler's errors."""
        if self.grounding is None or not self.grounding.enabled:
            return None
        # Imported here like Grounding itself (tavily stays unloaded without grounding); an
        # instance exists, so the module is already loaded.
        from vajra_tui.engine.sources.llm.grounding import bounded

        if ctx.generation <= 1:
            batches = [await self.grounding.for_strategy(ctx.workload.name, s) for s in strategies]
            # Each search is bounded, and so is their join: by the grounding's own bound.
            return bounded(_in_turns(batches))
        messages = [d.message for r in ctx.results for d in r.diagnostics]
        return await self.grounding.for_errors(messages[:3]) if messages else []

    async def propose(
        self,
        ctx: GenerationContext,
        strategies: Sequence[str] = STRATEGIES,
        grounding: list[dict] | None = None,
        name_prefix: str = "",
    ) -> list[Candidate]:
        """One candidate per strategy, in order; failures come back as no-kernel candidates."""
        if grounding is None and self.available:
            grounding = await self._grounded(ctx, strategies)
        gen = ctx.generation
        slots = [(f"g{gen}-{name_prefix}{s}", f"{name_prefix}{s}", s) for s in strategies]
        if not self.available:
            why = UNAUTHORIZED if self.unauthorized else f"no API key (${self.settings.api_key_env} unset)"
            return [
                Candidate(id=i, name=n, strategy=s, generation=gen, no_kernel_reason=why)
                for i, n, s in slots
            ]
        origin = f"nemotron: {self.settings.model}"
        for cid, name, strategy in slots:
            self.emit(
                CandidateQueued(id=cid, name=name, strategy=strategy, origin=origin, generation=gen)
            )
        failures: list[Failure] = []
        results = await asyncio.gather(
            *(
                self._one(ctx, cid, name, strategy, build_messages(ctx, strategy, grounding, self.workload),
                          failures)
                for cid, name, strategy in slots
            )
        )
        if failures:
            why = "; ".join(dict.fromkeys(f.summary for f in failures))
            message = f"Nemotron unavailable ({why}); continuing with library variants"
            if len(failures) == len(slots) and all(map(server_down, failures)):
                self.down_until = time.monotonic() + DOWN_PAUSE_S
                message = (f"Nemotron unreachable at {self.settings.base_url} ({why}); not asked again "
                           f"for {DOWN_PAUSE_S / 60:g} min: library variants meanwhile")
            self.emit(Notice(level="warning", message=self._scrub(message)))
        return list(results)

    async def _stream_once(self, model: str, messages: list[dict[str, str]], cid: str,
                           budget: SlotBudget) -> Reply:
        reader = StreamReader(self.settings, self._get_client(), self.emit, cid, budget, self._scrub)
        return await reader.read(model, messages)

    async def _ask(self, messages: list[dict[str, str]], cid: str, budget: SlotBudget,
                   model: str | None = None) -> Reply | Failure:
        """One request to ``model`` (default: the primary), failing over once to the fallback.

        A failed attempt keeps what it streamed charged to the slot's ``budget``."""
        primary, fallback = model or self.settings.model, self.settings.fallback_model
        try:
            return await self._stream_once(primary, messages, cid, budget)
        except AttemptFailed as first:
            if not first.failover or not fallback or fallback == primary:
                return Failure(primary, first, summary=first.reason)
            self.emit(ModelFailover(id=cid, from_model=primary, to_model=fallback, reason=first.reason))
            try:
                return await self._stream_once(fallback, messages, cid, budget)
            except AttemptFailed as second:
                return Failure(fallback, second, first,
                               summary=f"{primary}: {first.reason}; {fallback}: {second.reason}")

    async def _one(
        self,
        ctx: GenerationContext,
        cid: str,
        name: str,
        strategy: str,
        messages: list[dict[str, str]],
        failures: list[str],
    ) -> Candidate:
        base = Candidate(id=cid, name=name, strategy=strategy, generation=ctx.generation,
                         messages=messages)
        limit, budget = self.settings.max_tokens, SlotBudget()
        entries = entry_points(ctx, self.workload)
        try:
            outcome = await self._ask(messages, cid, budget)
            if isinstance(outcome, Failure):
                failures.append(outcome)
                return self._failed(base, outcome)
            reply, kernel, thoughts = outcome, await extract_off_loop(outcome.content, strategy, entries), []
            if reply.finish_reason == "length" and not kernel.complete:
                # Cut off before the kernel was complete: ask once more, for a shorter answer.
                self.emit(Notice(message=f"{name}: {cut_off_reason(limit)}; asking once more for "
                                 "only the kernel"))
                cut = strip_think(reply.content)[0].strip() or reply.content or "".join(reply.reasoning)
                again_messages = [*messages, {"role": "assistant", "content": cut or "..."},
                                  {"role": "user", "content": SHORTER.format(max_tokens=limit)}]
                again = await self._ask(again_messages, cid, budget, model=reply.model)
                if isinstance(again, Reply):
                    thoughts = [*reply.reasoning, kernel.reasoning]
                    reply, messages = again, again_messages
                    kernel = await extract_off_loop(again.content, strategy, entries)
        except Unauthorized:
            if not self.unauthorized:
                self.unauthorized = True
                self.emit(
                    Notice(
                        level="error",
                        message=f"{UNAUTHORIZED}: check ${self.settings.api_key_env}",
                    )
                )
            return base.model_copy(update={"no_kernel_reason": UNAUTHORIZED})
        cut_short = reply.finish_reason in ("length", CAPPED) and not kernel.complete
        source = "" if cut_short else kernel.source
        reasoning = "\n".join(r for r in [*thoughts, *reply.reasoning, kernel.reasoning] if r.strip())
        update: dict[str, Any] = {
            "origin": f"nemotron: {reply.model}",
            "source": source,
            "raw_reply": reply.content,
            "reasoning": reasoning,
            "messages": messages,
            "finish_reason": reply.finish_reason,
            "reply_kernels": kernel.candidates,
            "reply_label": kernel.label or "",
        }
        if cut_short and reply.capped:
            update["no_kernel_reason"] = reply_limit_reason()
        elif cut_short:
            update["no_kernel_reason"] = kernel.reason or cut_off_reason(limit)
        elif not source:
            why = kernel.reason or no_kernel_reason(reply)
            if reply.finish_reason not in ("stop", ""):
                why += f" (finish_reason={reply.finish_reason})"
            update["no_kernel_reason"] = why
        return base.model_copy(update=update)

    def _failed(self, base: Candidate, failure: Failure) -> Candidate:
        err, prev = failure.err, failure.prev
        why = err.reason if prev is None else f"{prev.reason}, then fallback: {err.reason}"
        partial = err.partial or (prev.partial if prev else "")
        return base.model_copy(
            update={
                "origin": f"nemotron: {failure.model}",
                "no_kernel_reason": self._scrub(f"model request failed ({why})"),
                "raw_reply": partial,
                "reasoning": strip_think(partial)[1] if partial else "",
            }
        )

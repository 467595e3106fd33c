"""Keys never reach a recording: which variables hold them, and their values redacted from
every line, including a key that a stream delivers in pieces.

The names come from the well-known key variables, any ``*_API_KEY``/``*_TOKEN``, and every
``api_key_env`` a settings object named (``[llm] api_key_env = "MY_LLM_SECRET"`` in
config.toml, ``VAJRA_LLM__API_KEY_ENV``, or a caller's ``LLMSettings``/``TavilySettings``).
"""

from __future__ import annotations

import json
import os
from typing import Iterable

from vajra_tui.engine.events import Event, StreamDelta
from vajra_tui.settings import key_env_names

SECRET_ENVS = ("NEBIUS_API_KEY", "TAVILY_API_KEY", "OPENAI_API_KEY")
MIN_SECRET_CHARS = 8  # a shorter value would redact ordinary words and numbers all over a recording


def secret_env_names(extra: Iterable[str] = ()) -> set[str]:
    """Every variable whose value a recording must not hold: the well-known key names, any
    ``*_API_KEY``/``*_TOKEN``, the ``api_key_env`` every settings object named (so
    ``[llm] api_key_env = "MY_LLM_SECRET"`` counts) and ``extra``."""
    names = set(SECRET_ENVS) | {k for k in os.environ if k.endswith(("_API_KEY", "_TOKEN"))}
    return names | set(key_env_names()) | {n for n in extra if n}


def _forms(value: str) -> set[str]:
    """The value as sent (stripped, as the settings read it) and as a JSON line writes it."""
    out: set[str] = set()
    for text in {value, value.strip()}:
        if len(text) >= MIN_SECRET_CHARS:
            out |= {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}
    return out


def secret_values(extra: Iterable[str] = ()) -> list[str]:
    """The secret values to redact, longest first (so no shorter one leaves a piece of it)."""
    values: set[str] = set()
    for name in secret_env_names(extra):
        values |= _forms(os.environ.get(name, ""))
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "[redacted]")
    return text


def _partial_tail(text: str, secrets: list[str]) -> int:
    """How many of the last characters of ``text`` could be the start of a secret."""
    longest = 0
    for secret in secrets:
        for size in range(min(len(secret) - 1, len(text)), longest, -1):
            if text.endswith(secret[:size]):
                longest = size
                break
    return longest


class Streams:
    """Redaction across stream deltas: a key a server echoes arrives in pieces, one per delta,
    and no single line holds it whole. A stream's last characters that could begin a key wait
    for its next delta (or its next other event, or the end of the recording), so a key is
    always seen whole before any piece of it is written; other deltas pass as they came."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, str], StreamDelta] = {}

    def feed(self, delta: StreamDelta, secrets: list[str]) -> StreamDelta | None:
        """The part of this stream that can be written now (redacted), or None."""
        key = (delta.id, delta.kind)
        held = self._held.pop(key, None)
        text = redact((held.text if held else "") + delta.text, secrets)
        keep = _partial_tail(text, secrets)
        if keep:
            self._held[key] = delta.model_copy(update={"text": text[-keep:]})
            text = text[:-keep]
        return delta.model_copy(update={"text": text}) if text else None

    def flush(self, ids: set[str] | None = None) -> list[StreamDelta]:
        """What streams of ``ids`` (all, for None) still hold: written before their next event."""
        keys = [k for k in self._held if ids is None or k[0] in ids]
        return [self._held.pop(k) for k in keys]


def event_ids(event: Event) -> set[str]:
    """The candidate an event is about (a finished result names it in ``result``)."""
    result = getattr(event, "result", None)
    return {str(i) for i in (getattr(event, "id", None), getattr(result, "id", None)) if i is not None}

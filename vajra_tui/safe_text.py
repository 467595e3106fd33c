"""Text that came from outside is data: never markup, never terminal control codes.

Vajra shows text it did not write: model output, server errors, recordings made
by someone else, kernel sources, file names, adapter names. Any of it can carry
escape sequences (an OSC 52 clipboard write, a window-title change, a cursor
move) or Rich/Textual markup (``[link=...]``, a stray ``[/oops]`` that raises
``MarkupError``). Everything shown goes through here first:

- :func:`clean` removes control characters (C0 except newline and tab, DEL, C1)
  and the bidirectional overrides that reorder what a reader sees;
- :func:`plain` builds a Rich ``Text`` from it, so nothing is parsed as markup;
- :func:`one_line` is the same for a table cell or a progress line;
- :func:`escape_markup` is for the few APIs that only take markup strings;
- :func:`escaped_line` keeps every character visible for a file a person reads elsewhere
  (a CSV cell): control characters are written as JSON writes them (``\u001b``);
- :func:`deeper_than` says whether parsed data (JSON, TOML) nests past a limit, before any
  recursive code (validation, repr, sorting) walks it;
- :func:`clean_event` gives the TUI a display copy of an engine event with every
  string cleaned, except the kernel sources, which stay byte for byte as they
  were measured (they are exported and copied) and are cleaned where shown.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from pydantic import BaseModel
from rich.markup import escape
from rich.text import Text

# C0 controls but tab and newline, DEL, C1 controls, the bidi embeddings, overrides and
# isolates (U+202A-U+202E, U+2066-U+2069), and lone surrogates (a JSON string may hold
# one; no terminal encoding can write it).
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_LINE_BREAKS = re.compile("[\t\n\u2028\u2029]+")  # U+2028/9 end a line too (JS, some terminals)
# Fields that hold a kernel exactly as it was compiled: kept raw in the display copy.
RAW_FIELDS = {"CandidateSource": frozenset({"source", "stitched_source"}),
              "CandidateResult": frozenset({"source", "stitched_source"})}

T = TypeVar("T")


def clean(text: object, replace: str = "") -> str:
    """``text`` as a string without control characters (newline and tab kept).

    A CRLF becomes a newline; every other control character is dropped, or
    replaced with ``replace`` (a source view keeps its columns with "\ufffd").
    """
    value = text if isinstance(text, str) else str(text)
    if "\r" in value:
        value = value.replace("\r\n", "\n")
    return CONTROL.sub(replace, value)


def has_control(text: str) -> bool:
    """True when ``text`` holds anything :func:`clean` would remove."""
    return CONTROL.search(text) is not None or "\r" in text


def one_line(text: object, limit: int | None = None) -> str:
    """Cleaned, newlines and tabs folded into single spaces, cut to ``limit`` with an ellipsis."""
    value = _LINE_BREAKS.sub(" ", clean(text)).strip()
    if limit is not None and len(value) > limit:
        value = value[: max(limit - 1, 0)] + "…"
    return value


def plain(text: object, style: str = "", single_line: bool = False, limit: int | None = None) -> Text:
    """A Rich ``Text`` of cleaned text: whatever brackets it holds are shown, never parsed."""
    value = one_line(text, limit) if single_line or limit is not None else clean(text)
    return Text(value, style=style)


_JSON_SHORT = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _json_escape(match: re.Match[str]) -> str:
    char = match.group(0)
    return _JSON_SHORT.get(char) or f"\\u{ord(char):04x}"


def escaped_line(text: object) -> str:
    """One line with nothing hidden: runs of newlines and tabs become one space, every other
    control character (ESC, BEL, C1, the bidi overrides, a lone surrogate) its JSON escape."""
    value = text if isinstance(text, str) else str(text)
    value = _LINE_BREAKS.sub(" ", value.replace("\r\n", "\n")).strip()
    return CONTROL.sub(_json_escape, value)  # a lone CR too (CONTROL holds it): it moves the cursor


def deeper_than(value: object, limit: int) -> bool:
    """True when lists and dicts in ``value`` nest more than ``limit`` levels (walked without
    recursion, so a hostile depth cannot raise RecursionError here)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, tuple, dict)):
            if depth >= limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def escape_markup(text: object) -> str:
    """Cleaned and markup-escaped, for an API that insists on a markup string."""
    return escape(clean(text))


def clean_event(event: T) -> T:
    """The display copy of an engine event (kernel sources stay raw; see :data:`RAW_FIELDS`)."""
    return _clean(event, raw_ok=True)


def _clean(value: Any, raw_ok: bool) -> Any:
    if isinstance(value, str):
        return clean(value) if has_control(value) else value
    if isinstance(value, BaseModel):
        changes = {}
        raw = RAW_FIELDS.get(type(value).__name__, frozenset()) if raw_ok else frozenset()
        for name in type(value).model_fields:
            current = getattr(value, name, None)
            if name in raw:
                continue
            fixed = _clean(current, raw_ok)
            if fixed is not current:
                changes[name] = fixed
        return value.model_copy(update=changes) if changes else value
    if isinstance(value, list):
        items = [_clean(v, raw_ok) for v in value]
        return items if any(a is not b for a, b in zip(items, value)) else value
    if isinstance(value, tuple):
        items = tuple(_clean(v, raw_ok) for v in value)
        return items if any(a is not b for a, b in zip(items, value)) else value
    if isinstance(value, dict):
        pairs = {_clean(k, raw_ok): _clean(v, raw_ok) for k, v in value.items()}
        changed = len(pairs) != len(value) or any(
            k not in value or value[k] is not v for k, v in pairs.items())
        return pairs if changed else value
    return value

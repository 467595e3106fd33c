"""Pull a WGSL kernel out of a model reply.

Models wrap code in fences (or not), think out loud in ``<think>`` tags, append
prose, and often answer one strategy slot with several variants. The engine only
wants the part under the contract for the slot it asked for: ``extract_for``
finds every kernel (``reply_shapes``), labels each from headings, comments and
JSON keys, and picks the one for the slot. ``extract_kernel`` is the older,
slot-blind first-``@compute`` extraction, kept as it was.

Replies are hostile input: every scan is linear in the reply, and a reply past
:data:`MAX_REPLY_CHARS` or with more than :data:`MAX_KERNELS` entry points is not
split at all; ``extract_for`` then answers no kernel with a one-line ``reason``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from vajra_tui.engine.sources.llm.reply_labels import Sections, block_label, comment_letter, hint_label
from vajra_tui.engine.sources.llm.reply_shapes import (
    MAIN, Piece, Shelf, entry_pattern, find_blocks, split_block,
)

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
MAX_REPLY_CHARS = 400_000
"""Longest reply the slot-aware extractor reads: about 100k tokens, past what any
``max_tokens`` a chat model streams in one answer; keeps the linear scans below
a second or two."""
MAX_KERNELS = 64
"""Most ``fn main`` (entry points) in one reply. Real replies hold one to six variants; cutting a
block into thousands of kernels, each borrowing from the others, is what made
5000 ``fn main`` take 45 s."""
_NOT_NEWLINE = re.compile(r"[^\n]+")

_FENCE = re.compile(r"```[ \t]*+([A-Za-z0-9_+-]*+)[^\n]*+\n(.*?)(```|\Z)", re.DOTALL)
_WGSL_START = re.compile(
    r"^\s*(@group|@binding|@compute|@workgroup_size|const\s|override\s|var\s*<\s*workgroup|"
    r"var\s*<\s*private|fn\s|struct\s|alias\s|enable\s|requires\s|// *tile:)"
)


def strip_think(reply: str) -> tuple[str, str]:
    """Split a reply into (answer text, reasoning text).

    Handles closed ``<think>..</think>`` blocks, an unterminated ``<think>`` (all
    of the rest is reasoning) and a lone ``</think>`` (chat templates that open
    the think block in the prompt: all before it is reasoning).
    """
    answer: list[str] = []
    reasoning: list[str] = []
    for kind, text in _think_parts(reply):
        (reasoning if kind else answer).append(text)
    return "".join(answer), "\n".join(r.strip() for r in reasoning if r.strip())


def _think_parts(reply: str) -> list[tuple[bool, str]]:
    """(is reasoning, text) runs of ``reply``; reasoning runs are inside the tags, which
    are left out. Offsets only move forward, so many think blocks stay linear."""
    parts: list[tuple[bool, str]] = []
    pos = 0
    close = reply.find(THINK_CLOSE)
    if close >= 0 and reply.find(THINK_OPEN, 0, close) < 0:
        parts.append((True, reply[:close]))
        pos = close + len(THINK_CLOSE)
    while (start := reply.find(THINK_OPEN, pos)) >= 0:
        parts.append((False, reply[pos:start]))
        end = reply.find(THINK_CLOSE, start + len(THINK_OPEN))
        if end < 0:
            parts.append((True, reply[start + len(THINK_OPEN):]))
            return parts
        parts.append((True, reply[start + len(THINK_OPEN):end]))
        pos = end + len(THINK_CLOSE)
    parts.append((False, reply[pos:]))
    return parts


def _balanced_end(code: str) -> tuple[int, int]:
    """(index just past the last ``}`` closing to depth 0 or 0, final brace depth)."""
    depth = 0
    end = 0
    i = 0
    while i < len(code):
        ch = code[i]
        if code.startswith("//", i):
            nl = code.find("\n", i)
            i = len(code) if nl < 0 else nl
            continue
        if code.startswith("/*", i):
            close = code.find("*/", i + 2)
            i = len(code) if close < 0 else close + 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                end = i + 1
            elif depth < 0:
                break
        i += 1
    return end, depth


def _unfenced(text: str) -> str:
    """Code from the first WGSL-looking line through the last balanced ``}``."""
    lines = text.splitlines(keepends=True)
    for n, line in enumerate(lines):
        if _WGSL_START.match(line):
            code = "".join(lines[n:])
            return code[: _balanced_end(code)[0]]
    return ""


def extract_kernel(reply: str) -> tuple[str, str]:
    """Return (kernel source or "", reasoning). No ``@compute`` entry ⇒ empty source."""
    text, reasoning = strip_think(reply)
    blocks = [(lang.lower(), body, bool(close)) for lang, body, close in _FENCE.findall(text)]
    source = ""
    if blocks:
        with_entry = [b for b in blocks if "@compute" in b[1]]
        wgsl = [b for b in with_entry if b[0] in ("wgsl", "")]
        if with_entry:
            _, pick, closed = (wgsl or with_entry)[0]
            end, depth = _balanced_end(pick)
            source = pick if closed and depth == 0 and end else pick[:end]
    if not source:
        source = _unfenced(_FENCE.sub("", text) if blocks else text)
    source = source.strip("\n").rstrip() + "\n" if source.strip() else ""
    if "@compute" not in source:
        return "", reasoning
    return source, reasoning


class ThinkSplitter:
    """Streaming split of content chunks into ("reasoning" | "content", text).

    Tags may straddle chunk boundaries, so a tail that could be the start of a
    tag is held back until the next chunk (or :meth:`flush`).
    """

    def __init__(self) -> None:
        self.in_think = False
        self._pending = ""

    def feed(self, chunk: str) -> list[tuple[str, str]]:
        buf = self._pending + chunk
        self._pending = ""
        out: list[tuple[str, str]] = []
        while buf:
            tag = THINK_CLOSE if self.in_think else THINK_OPEN
            kind = "reasoning" if self.in_think else "content"
            idx = buf.find(tag)
            if idx >= 0:
                if idx:
                    out.append((kind, buf[:idx]))
                buf = buf[idx + len(tag):]
                self.in_think = not self.in_think
                continue
            if not self.in_think and THINK_CLOSE in buf:
                # A lone </think>: everything before it was reasoning.
                idx = buf.find(THINK_CLOSE)
                if idx:
                    out.append(("reasoning", buf[:idx]))
                buf = buf[idx + len(THINK_CLOSE):]
                continue
            hold = _partial_tag_len(buf, tag)
            if hold < len(buf):
                out.append((kind, buf[: len(buf) - hold]))
            self._pending = buf[len(buf) - hold:]
            break
        return out

    def flush(self) -> list[tuple[str, str]]:
        rest, self._pending = self._pending, ""
        return [("reasoning" if self.in_think else "content", rest)] if rest else []


def _partial_tag_len(buf: str, tag: str) -> int:
    """Length of the longest suffix of ``buf`` that is a proper prefix of a tag."""
    tags = (tag, THINK_CLOSE) if tag == THINK_OPEN else (tag,)
    best = 0
    for t in tags:
        for n in range(min(len(t) - 1, len(buf)), 0, -1):
            if buf.endswith(t[:n]):
                best = max(best, n)
                break
    return best


# ---- slot-aware extraction -------------------------------------------------------------


@dataclass
class Extracted:
    """One kernel taken from a reply.

    ``source`` is the kernel as the model wrote it: line endings normalised to LF,
    markdown indentation of a fence or indented block removed, surrounding blank
    lines dropped; a kernel cut from a multi-``main`` block also carries the
    declarations it borrows from its siblings. ``line`` is 1-based in the reply as
    received (CRLF counts as one break; think blocks are blanked, not removed, so
    they keep their lines) and points at the kernel's own first line; for a kernel
    inside a JSON string, the line where that string starts; 0 for nothing.
    ``label`` is the strategy letter the reply gave it, from a letter or else from
    heading keywords; ``None`` when unlabelled. ``candidates`` counts the distinct
    complete kernels in the whole reply. ``reason`` is set only when the reply was
    not searched (past a limit) or the search failed: why there is no kernel.
    """

    source: str
    reasoning: str
    label: str | None
    line: int
    complete: bool
    candidates: int
    reason: str = ""


@dataclass
class _Found:
    piece: Piece
    letter: str | None
    keyword: str | None


def _mask_think(text: str) -> str:
    """``text`` with think blocks as spaces, by the rules of :func:`strip_think`."""
    def blank(s: str) -> str:
        return _NOT_NEWLINE.sub(lambda m: " " * len(m.group()), s)

    out: list[str] = []
    pos = 0
    close = text.find(THINK_CLOSE)
    if close >= 0 and text.find(THINK_OPEN, 0, close) < 0:
        pos = close + len(THINK_CLOSE)
        out.append(blank(text[:pos]))
    while (start := text.find(THINK_OPEN, pos)) >= 0:
        out.append(text[pos:start])
        end = text.find(THINK_CLOSE, start + len(THINK_OPEN))
        pos = len(text) if end < 0 else end + len(THINK_CLOSE)
        out.append(blank(text[start:pos]))
    out.append(text[pos:])
    return "".join(out)


class ReplyLimit(ValueError):
    """A reply past one of the extractor's limits; the message is the one-line reason."""


def _check_size(reply: str) -> None:
    if len(reply) > MAX_REPLY_CHARS:
        raise ReplyLimit(f"reply not searched for a kernel: {len(reply)} characters, "
                         f"over the {MAX_REPLY_CHARS}-character limit")


def _check_kernels(text: str, entries: Sequence[str] = MAIN) -> None:
    mains = sum(1 for _ in entry_pattern(tuple(entries)).finditer(text))
    if mains > MAX_KERNELS:
        names = "`fn main`" if tuple(entries) == MAIN else f"`fn {entries[0]}`" if len(entries) == 1 else "`fn`"
        raise ReplyLimit(f"reply not searched for a kernel: {mains} {names} entry points, "
                         f"over the limit of {MAX_KERNELS}")


_ENTITIES = {"&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"', "&#39;": "'", "&#x27;": "'"}
_ENTITY = re.compile("|".join(map(re.escape, _ENTITIES)))


def _unescaped(reply: str) -> str:
    """A reply that came through an HTML-escaping layer (``var&lt;storage, read&gt;``): its
    entities back to characters. Only then, and only these: WGSL never writes ``&lt;``, while
    ``&x`` and ``a & b`` are WGSL."""
    if "&lt;" not in reply and "&gt;" not in reply:
        return reply
    return _ENTITY.sub(lambda m: _ENTITIES[m.group(0)], reply)


def _find(reply: str, entries: Sequence[str] = MAIN) -> tuple[list[_Found], str]:
    """Every kernel with its labels. Kernels cut from one block share the block's
    label only when none of them is labelled by its own comment."""
    _check_size(reply)
    reply = _unescaped(reply.replace("\r\n", "\n").replace("\r", "\n"))
    text = _mask_think(reply)
    _check_kernels(text, entries)
    reasoning = strip_think(reply)[1]
    lines = text.split("\n")
    sections = Sections(lines)
    found: list[_Found] = []
    prev_end = -1
    blocks = find_blocks(text)
    shelf = Shelf(blocks, entries)
    for n, block in enumerate(blocks):
        letter, kw = hint_label(block.hint)
        if not letter:
            got, above = block_label(lines, block.span[0], prev_end, sections)
            letter, kw = got, kw or above
        prev_end = max(prev_end, block.span[1])
        pieces = [shelf.complete(p, block.closed, entries) for p in split_block(block, n, entries)]
        own = [comment_letter(p.header) for p in pieces]
        shared = len(pieces) == 1 or not any(own)
        for p, mine in zip(pieces, own):
            found.append(_Found(p, mine or (letter if shared else None), kw if shared else None))
    return found, reasoning


def _extracted(f: _Found, reasoning: str, count: int, partial: bool = True) -> Extracted:
    p = f.piece
    source = p.source if (p.complete or partial) else ""
    return Extracted(source, reasoning, f.letter or f.keyword, p.line, p.complete, count)


def _count(found: list[_Found]) -> int:
    return len({" ".join(f.piece.source.split()) for f in found if f.piece.complete})


def extract_kernels(reply: str, entries: Sequence[str] = MAIN) -> list[Extracted]:
    """Every kernel in the reply, in reply order, with its label.

    Incomplete ones (cut off, or fragments with ``...``) are listed too, with their
    partial text and ``complete=False``. Raises :class:`ReplyLimit` for a reply
    past the extractor's limits.
    """
    found, reasoning = _find(reply, entries)
    count = _count(found)
    return [_extracted(f, reasoning, count) for f in found]


def extract_for(reply: str, strategy: str, entries: Sequence[str] = MAIN) -> Extracted:
    """The kernel the reply wrote for ``strategy``'s slot ("A", "B", ... "D").

    Preference, the LAST complete kernel winning within a tier (models iterate
    towards their final answer, and a snippet before the full module is never
    complete): labelled with the slot's letter; labelled by heading keywords for
    the slot (A/B/C only); unlabelled (for D and later, anything without a
    letter); then any complete kernel, but only when no kernel at all carries the
    slot's letter; its ``label`` then tells the caller it is someone else's.
    When the slot's kernel is cut off or a fragment and nothing complete
    qualifies, ``source`` is "" and ``complete`` False, with that partial
    kernel's ``line`` and ``label`` for diagnostics. A reply past a limit gets
    no kernel, with the limit in ``reason``. ``entries``: the workload's entry points
    (``main`` for a built-in); a kernel is complete when it defines one of them.
    """
    try:
        found, reasoning = _find(reply, entries)
    except ReplyLimit as limit:
        return Extracted("", strip_think(reply)[1], None, 0, False, 0, reason=str(limit))
    count = _count(found)
    slot = strategy.strip().upper()[-1:]
    done = [f for f in found if f.piece.complete]
    tiers = [
        [f for f in done if f.letter == slot],
        [f for f in done if not f.letter and f.keyword == slot],
        [f for f in done if not f.letter and (not f.keyword or slot not in "ABC")],
    ]
    if not any(f.letter == slot for f in found):
        tiers.append(done)
    for tier in tiers:
        if tier:
            return _extracted(tier[-1], reasoning, count)
    partial = [f for f in found if f.letter == slot] or found
    if partial:
        return _extracted(partial[-1], reasoning, count, partial=False)
    return Extracted("", reasoning, None, 0, False, count)

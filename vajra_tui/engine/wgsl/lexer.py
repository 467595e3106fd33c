"""The WGSL lexer: source text to tokens, trivia included, with 1-based lines and columns.

Every structural question the engine asks of a kernel (tokens.py, memory.py, the
sanitizer) starts here, many times over for the same few sources, and library kernels
run to tens of thousands of tokens: so an all-ASCII source (nearly every one) is split
by one regex, the cycle collector waits while tokens are made, and the tokens of recent
sources are kept, and reused for the same body behind another prelude.
"""

from __future__ import annotations

import gc
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import repeat
from operator import add
from typing import NamedTuple

IDENT, KEYWORD, NUMBER, PUNCT, ATTR = "ident", "keyword", "number", "punct", "attr"
LINE_COMMENT, BLOCK_COMMENT, WS, NEWLINE, ERROR = "line_comment", "block_comment", "ws", "newline", "error"
TRIVIA = frozenset({LINE_COMMENT, BLOCK_COMMENT, WS, NEWLINE})

KEYWORDS = frozenset(
    "alias break case const const_assert continue continuing default diagnostic discard else "
    "enable false fn for if let loop override requires return struct switch true var while".split()
)
_PUNCTS = sorted(
    ">>= <<= -> <= >= == != && || ++ -- += -= *= /= %= &= |= ^= << >> "
    "( ) [ ] { } < > = ! ~ + - * / % & | ^ , . : ; _".split(),
    key=len, reverse=True,
)
# The punctuators by length, longest first: a token is the longest one that matches.
_PUNCTS_BY_LENGTH = tuple((k, frozenset(p for p in _PUNCTS if len(p) == k)) for k in (3, 2, 1))
_NUMBER = re.compile(
    r"0[xX](?:[0-9a-fA-F]+\.[0-9a-fA-F]*|\.[0-9a-fA-F]+|[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+[fh]?)?[iu]?"
    r"|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fh]?"
    r"|[0-9]+[eE][+-]?[0-9]+[fh]?"
    r"|[0-9]+[iufh]?"
)
class Token(NamedTuple):
    """One token; a named tuple because a long kernel has tens of thousands of them."""

    kind: str
    text: str
    line: int
    column: int
    offset: int

    @property
    def end(self) -> int:
        return self.offset + len(self.text)


def tokenize(src: str) -> list[Token]:
    """Split ``src`` into tokens, trivia included; concatenated texts equal ``src``.

    The engine asks many questions of the same few sources (admission, the contract,
    memory and tile checks), so the tokens of recent sources are kept: Tokens are frozen.
    """
    return list(_tokens_of(src))


KEEP = 64  # sources whose tokens are kept
# ... and their total length. A token costs some 30 bytes per source character (a 140 KB
# library kernel's 30k tokens are 4-5 MB), and evolve's kernels grow generation after
# generation, so a bound the caches reach late is growth in a long run: at 1.5M characters
# each they were still filling 300 candidates in (~90 MB). 400k keep a 140 KB kernel behind
# both preludes (its own text, pushed out, is re-made from either: _from_shared), or some
# 15 kernels of 26 KB (a small sgemm's): all that one candidate's admission reads again.
# Staging 48 distinct sgemm kernels lexed the same 3.7M characters under either bound.
KEEP_CHARS = 400_000
SHARED_MIN = 2048  # shorter texts are lexed afresh: looking for a shared part costs more
_LOCK = threading.Lock()  # the GPU worker builds pipelines on threads


class _Recent:
    """Sources and their tokens, most recent last, bounded by count and by total characters.

    A source longer than the whole character budget is not kept: it would push out every
    other (the caller still gets its tokens). Callers hold :data:`_LOCK`."""

    def __init__(self) -> None:
        self.items: OrderedDict[str, tuple[Token, ...]] = OrderedDict()
        self.chars = 0

    def get(self, src: str) -> tuple[Token, ...] | None:
        kept = self.items.get(src)
        if kept is not None:
            self.items.move_to_end(src)
        return kept

    def put(self, src: str, tokens: tuple[Token, ...]) -> None:
        if len(src) > KEEP_CHARS or src in self.items:
            return
        self.items[src] = tokens
        self.chars += len(src)
        while len(self.items) > KEEP or self.chars > KEEP_CHARS:
            old, _ = self.items.popitem(last=False)
            self.chars -= len(old)

    def clear(self) -> None:
        self.items.clear()
        self.chars = 0


_KEPT = _Recent()
_SIGNIFICANT = _Recent()


def kept_size() -> tuple[int, int]:
    """(sources, characters) the two token caches hold together: what bounds their memory."""
    with _LOCK:
        return len(_KEPT.items) + len(_SIGNIFICANT.items), _KEPT.chars + _SIGNIFICANT.chars


def _tokens_of(src: str) -> tuple[Token, ...]:
    """The tokens of ``src``: kept, or made from a kept text it ends with (or that ends
    with it), or lexed. The engine reads one kernel as the author's text, behind the
    sanitizer's prelude and behind the contract's, and a library kernel runs to 140 KB:
    the shared body is lexed once, and only its lines and offsets move."""
    with _LOCK:
        kept = _KEPT.get(src)
        if kept is not None:
            return kept
        others = list(_KEPT.items.items()) if len(src) >= SHARED_MIN else []
    tokens = _from_shared(src, others) or _lex(src)
    with _LOCK:
        _KEPT.put(src, tokens)
    return tokens


def _from_shared(src: str, others: list[tuple[str, tuple[Token, ...]]]) -> tuple[Token, ...] | None:
    for text, tokens in reversed(others):  # the newest first
        if len(text) < SHARED_MIN:
            continue
        if len(text) < len(src) and src.endswith(text):
            joined = _behind(src[:len(src) - len(text)], tokens)
        elif len(text) > len(src) and text.endswith(src):
            joined = _tail(tokens, len(text) - len(src))
        else:
            continue
        if joined is not None:
            return joined
    return None


def _behind(head: str, body: tuple[Token, ...]) -> tuple[Token, ...] | None:
    """The tokens of ``head + body``, when ``head`` ends a line outside any comment."""
    if not head.endswith("\n"):
        return None
    first = _tokens_of(head)
    if not first or first[-1].kind != NEWLINE:
        return None
    return first + _moved(body, first[-1].line, len(head))


def _tail(whole: tuple[Token, ...], cut: int) -> tuple[Token, ...] | None:
    """The tokens of ``whole``'s text from offset ``cut``, when a line starts there."""
    lo, hi = 0, len(whole)
    while lo < hi:  # the first token at or after cut
        mid = (lo + hi) // 2
        if whole[mid].offset < cut:
            lo = mid + 1
        else:
            hi = mid
    if lo == 0 or lo == len(whole) or whole[lo].offset != cut or whole[lo - 1].kind != NEWLINE \
            or not whole[lo - 1].text.endswith("\n"):
        return None
    return _moved(whole[lo:], 1 - whole[lo].line, -cut)


def _moved(tokens: tuple[Token, ...], lines: int, offset: int) -> tuple[Token, ...]:
    """``tokens`` some lines and characters further on (columns stay: they start a line)."""
    if not tokens:
        return ()
    with _gc_paused():
        kinds, texts, old_lines, columns, offsets = zip(*tokens)
        return tuple(map(tuple.__new__, repeat(Token), zip(
            kinds, texts, map(add, old_lines, repeat(lines)), columns, map(add, offsets, repeat(offset)))))


def _lex(src: str) -> tuple[Token, ...]:
    with _gc_paused():
        return _lexed(src)


def _lexed(src: str) -> tuple[Token, ...]:
    spans = _ascii_spans(src) if src.isascii() else _spans(src)
    out: list[Token] = []
    append, make = out.append, tuple.__new__  # Token(...) through its Python __new__ is slower
    line, line_start = 1, 0  # the offset where the current line begins
    for kind, i, j in spans:
        append(make(Token, (kind, src[i:j], line, i - line_start + 1, i)))
        if kind == NEWLINE or kind == BLOCK_COMMENT:
            text = src[i:j]
            breaks = text.count("\n") or text.count("\r")
            if breaks:
                line += breaks
                line_start = i + max(text.rfind("\n"), text.rfind("\r")) + 1
    return tuple(out)




@contextmanager
def _gc_paused() -> Iterator[None]:
    """Tens of thousands of new tuples would run the cycle collector over and over (half
    the time of a long kernel's lexing); tokens hold no cycles, so it waits until after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_ASCII_TOKEN = re.compile(
    r"(?P<newline>\r\n|\r|\n)|(?P<ws>[ \t\v\f]+)|(?P<line_comment>//[^\r\n\v\f]*)|(?P<block_comment>/\*)"
    r"|(?P<number>(?=[0-9]|\.[0-9])(?:" + _NUMBER.pattern + r"))"
    r"|(?P<keyword>(?:" + "|".join(sorted(KEYWORDS)) + r")(?![A-Za-z0-9_]))"
    r"|(?P<punct>_(?![A-Za-z0-9_])|" + "|".join(re.escape(p) for p in _PUNCTS if p != "_") + r")"
    r"|(?P<ident>[A-Za-z_][A-Za-z0-9_]*)|(?P<attr>@)|(?P<error>.)", re.S)


def _ascii_spans(src: str) -> list[tuple[str, int, int]]:
    """The same split as ``_spans`` by one regex, for the usual all-ASCII source: there
    Python's ``isdigit``/``isalpha`` agree with the character classes used here. Block
    comments nest, which no regex follows, so a source with one is split step by step."""
    if "/*" not in src:
        return [(m.lastgroup, m.start(), m.end()) for m in _ASCII_TOKEN.finditer(src)]  # type: ignore[misc]
    spans: list[tuple[str, int, int]] = []
    i, n = 0, len(src)
    while i < n:
        m = _ASCII_TOKEN.match(src, i)
        kind, j = m.lastgroup, m.end()  # type: ignore[union-attr]
        if kind == BLOCK_COMMENT:
            j = _block_comment_end(src, i)
        spans.append((kind, i, j))  # type: ignore[arg-type]
        i = j
    return spans


def _block_comment_end(src: str, i: int) -> int:
    """Where the (nesting) block comment opening at ``i`` ends, or the end of ``src``."""
    j, depth, n = i + 2, 1, len(src)
    while j < n and depth:
        if src.startswith("/*", j):
            depth, j = depth + 1, j + 2
        elif src.startswith("*/", j):
            depth, j = depth - 1, j + 2
        else:
            j += 1
    return j


# WGSL's line breaks (a // comment ends at any of them, as naga and Tint end it: a kernel
# must not hide code from these checks behind a VT or a U+2028) and its other blankspace.
_LINE_BREAKS = "\n\v\f\r\x85\u2028\u2029"
_BLANK = " \t\v\f\x85\u200e\u200f\u2028\u2029"


def _spans(src: str) -> list[tuple[str, int, int]]:
    """Token kinds and extents, one character class at a time (any Unicode source)."""
    spans: list[tuple[str, int, int]] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "\n" or c == "\r":
            j = i + 2 if src.startswith("\r\n", i) else i + 1
            kind = NEWLINE
        elif c in _BLANK:
            j = i + 1
            while j < n and src[j] in _BLANK:
                j += 1
            kind = WS
        elif src.startswith("//", i):
            j = i + 2
            while j < n and src[j] not in _LINE_BREAKS:
                j += 1
            kind = LINE_COMMENT
        elif src.startswith("/*", i):
            j, kind = _block_comment_end(src, i), BLOCK_COMMENT
        elif c.isdigit() or (c == "." and i + 1 < n and src[i + 1].isdigit()):
            m = _NUMBER.match(src, i)
            j = m.end() if m else i + 1
            kind = NUMBER
        elif c == "_" or c.isalpha():
            j = i + 1
            while j < n and (src[j] == "_" or src[j].isalnum()):
                j += 1
            kind = KEYWORD if src[i:j] in KEYWORDS else IDENT
            if src[i:j] == "_":
                kind = PUNCT
        elif c == "@":
            j, kind = i + 1, ATTR
        else:
            k = next((k for k, ps in _PUNCTS_BY_LENGTH if src[i:i + k] in ps), 0)
            j, kind = (i + k, PUNCT) if k else (i + 1, ERROR)
        spans.append((kind, i, j))
        i = j
    return spans


def significant_tokens(src: str) -> list[Token]:
    """``significant(tokenize(src))``, kept for recent sources like their tokens."""
    with _LOCK:
        kept = _SIGNIFICANT.get(src)
        if kept is not None:
            return list(kept)
    kept = tuple(significant(list(_tokens_of(src))))
    with _LOCK:
        _SIGNIFICANT.put(src, kept)
    return list(kept)


def significant(tokens: list[Token]) -> list[Token]:
    """Tokens without whitespace and comments: what the grammar sees."""
    return [t for t in tokens if t.kind not in TRIVIA]

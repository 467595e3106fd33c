"""The WGSL lexer: source text to tokens, trivia included, with 1-based lines and columns.

Every structural question the engine asks of a kernel (tokens.py, memory.py, the
sanitizer) starts here, many times over for the same few sources, and library kernels
run to tens of thousands of tokens: so an all-ASCII source (nearly every one) is split
by one regex, and the tokens of recent sources are kept.
"""

from __future__ import annotations

import re
from functools import lru_cache
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


@lru_cache(maxsize=64)
def _tokens_of(src: str) -> tuple[Token, ...]:
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


_ASCII_TOKEN = re.compile(
    r"(?P<newline>\r\n|\r|\n)|(?P<ws>[ \t\v\f]+)|(?P<line_comment>//[^\r\n]*)|(?P<block_comment>/\*)"
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


def _spans(src: str) -> list[tuple[str, int, int]]:
    """Token kinds and extents, one character class at a time (any Unicode source)."""
    spans: list[tuple[str, int, int]] = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if c == "\n" or c == "\r":
            j = i + 2 if src.startswith("\r\n", i) else i + 1
            kind = NEWLINE
        elif c in " \t\v\f":
            j = i + 1
            while j < n and src[j] in " \t\v\f":
                j += 1
            kind = WS
        elif src.startswith("//", i):
            j = i + 2
            while j < n and src[j] not in "\r\n":
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


def significant(tokens: list[Token]) -> list[Token]:
    """Tokens without whitespace and comments: what the grammar sees."""
    return [t for t in tokens if t.kind not in TRIVIA]

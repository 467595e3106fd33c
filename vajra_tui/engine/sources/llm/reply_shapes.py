"""Find WGSL code in the shapes real model replies take, and cut it into kernels.

``extract.py`` decides *which* kernel a strategy slot gets; this module only finds
code: fenced blocks (any language tag, ``~~~``, a closing fence glued to the last
brace, a fence that never closes), kernels escaped inside JSON strings, bare code
after prose or a think block (indented or not), and several ``fn main`` in one
block. It works on an LF-normalised reply whose think blocks are blanked, not
removed, so every offset and line number still matches the reply as received.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
import textwrap
from dataclasses import dataclass
from typing import Sequence

from vajra_tui.engine.sources.llm.reply_labels import document_hints, pair_hint

# Replies are hostile input, so every scan here is linear: runs nothing after them could
# use are possessive (``*+``), and an unclosed JSON string is read once, not again from
# every quote inside it (16 KB of ``\"`` took 3.5 s, 40 KB 29 s).
ATTR_ARGS = 256
"""Most characters read inside ``@attr(...)`` or ``var<...>`` to name a declaration: real
ones are short, an unclosed one must not make each later declaration rescan the block."""
_OPEN = re.compile(r"^([ \t]*+)(`{3,}+|~{3,}+)[ \t]*+([^`\n]*+)$")
MAIN = ("main",)  # a built-in's entry points; a user's workload may name its own


@functools.lru_cache(maxsize=32)
def entry_pattern(entries: tuple[str, ...] = MAIN) -> re.Pattern[str]:
    """``fn <entry>(`` for any of ``entries`` (possessive: replies are hostile input)."""
    names = "|".join(re.escape(e) for e in entries) or "main"
    return re.compile(r"\bfn\s++(?:%s)\s*+\(" % names)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?(?:\*/|\Z)", re.DOTALL)
_START = re.compile(
    r"^\s*(@group|@binding|@compute|@workgroup_size|const\s|override\s|var\s*<\s*(workgroup|private)|"
    r"fn\s+\w+\s*\(|struct\s|alias\s|enable\s|requires\s|(?i://\s*tile\s*:))"
)
# At brace depth 0, a line that starts like this still belongs to the code.
_CONT = re.compile(r"(//|/\*|\*|@|fn\s|const\s|override\s|var\b|let\s|struct\s|alias\s|enable\s|"
                   r"requires\s|diagnostic|[{})\]]|->)")
_ITEM = re.compile(
    r"(?:@\w++(?:\s*+\([^)]{0,%d}\))?\s*+)*+(fn|const|override|let|struct|alias|var(?:\s*+<[^>]{0,%d}>)?)"
    r"\s+(\w+)" % (ATTR_ARGS, ATTR_ARGS)
)
_SEMI_AFTER = re.compile(r"[ \t]*;")
_DIRECTIVE = re.compile(r"(enable|requires|diagnostic)\b")
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
# Group 2 is empty when the literal never closes (on its line, for _JSON_LIT).
_JSON_LIT = re.compile(r'"((?:[^"\\\n]++|\\.)*+)(")?')
_JSON_LIT_ML = re.compile(r'"((?:[^"\\]++|\\.)*+)(")?', re.DOTALL)
_LANG_WORDS = {"wgsl", "rust", "glsl", "c", "cpp", "hlsl", "text"}


@dataclass
class Block:
    """A run of code in the reply: a fence body, a decoded JSON string or bare code."""

    code: str
    line: int  # 1-based reply line of the code's first line
    span: tuple[int, int]  # 0-based first/last reply lines the block occupies (fences included)
    closed: bool  # the fence closed (JSON and bare code: always True)
    hint: str = ""  # label text from JSON keys, e.g. "Variant B"


@dataclass
class Piece:
    """One kernel cut from a block."""

    source: str
    line: int  # 1-based reply line where the kernel's own text starts
    complete: bool
    header: str  # the kernel's own text before ``fn main``: where label comments live
    block: int


@dataclass
class _Item:
    kind: str
    name: str
    start: int
    end: int  # exclusive; len(code) when cut off


def blank_comments(code: str) -> str:
    """Same-length copy of ``code`` with comments turned into spaces (newlines kept)."""
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), code)


def _items(code: str) -> list[_Item]:
    """Top-level declarations: each ends at ``;`` or at the ``}`` closing its body."""
    m, out, i, n = blank_comments(code), [], 0, len(code)
    while i < n:
        while i < n and m[i].isspace():
            i += 1
        if i >= n:
            break
        start, depth, end = i, 0, n
        while i < n:  # braces only: a missing `)` must not swallow the next kernel
            c = m[i]
            i += 1
            if c == "{":
                depth += 1
            elif c == "}" and depth <= 1:
                rest = _SEMI_AFTER.match(m, i)  # `struct S { .. };`
                i = end = rest.end() if rest else i
                break
            elif c == "}":
                depth -= 1
            elif c == ";" and depth == 0:
                end = i
                break
        head = _ITEM.match(m, start)
        kind, name = (head.group(1).split("<")[0].strip(), head.group(2)) if head else ("other", "")
        if kind == "var" and "@binding" in m[start:head.start(1)]:  # type: ignore[union-attr]
            kind = "binding"
        if _DIRECTIVE.match(m, start):
            kind = "directive"
        out.append(_Item(kind, name, start, end))
    return out


def balanced(code: str) -> bool:
    """Braces close, and never close more than they opened.

    Parentheses are not counted: a missing ``)`` is a typo Naga should report with
    its line, while an open brace at the end is what a cut-off reply looks like.
    """
    depth = 0
    for c in blank_comments(code):
        depth += (c == "{") - (c == "}")
        if depth < 0:
            return False
    return depth == 0


def is_complete(source: str, closed: bool = False, entries: Sequence[str] = MAIN) -> bool:
    """``@compute`` + ``fn <entry>(`` (one of ``entries``) with a body, balanced, and nothing elided.

    An ellipsis (``...`` in code, or a comment starting with one: ``// ... as before``)
    marks an illustrative fragment, which must never win over a full kernel. In a
    fence that closed, the model finished writing: a brace that does not match is a
    typo for the compiler to report at its line, not a reply cut short.
    """
    m = blank_comments(source)
    entry = entry_pattern(tuple(entries)).search(m)
    if "@compute" not in m or entry is None or "{" not in m[entry.end():]:
        return False
    if "..." in m or "\u2026" in m or re.search(r"//\s*(\.\.\.|\u2026)", source):
        return False
    if balanced(source):
        return True
    # A closed fence whose main has statements but one brace too many or too few.
    body = m[entry.end():]
    return closed and ";" in body[body.find("{"):] and abs(_depth(m)) == 1


def _depth(code: str) -> int:
    return code.count("{") - code.count("}")


def _extent(lines: list[str], i: int) -> int:
    """End (exclusive) of the code starting at ``lines[i]``: it runs until a line that
    does not look like code appears at brace and parenthesis depth 0."""
    depth = paren = 0
    last = i
    for j in range(i, len(lines)):
        s = lines[j].strip()
        if j > i and depth <= 0 and paren <= 0 and s and not _CONT.match(s):
            break
        b = blank_comments(lines[j])
        depth += b.count("{") - b.count("}")
        paren = max(0, paren + b.count("(") - b.count(")"))
        if s:
            last = j
    return last + 1


def _glued_close(line: str, mark: str) -> int:
    """Where the code ends on a line like ``}```` (the fence glued to it), else -1. Only at the
    very end, and only outside a ``//`` comment: ``var s = 0.0; // the ``` fence`` mentions one."""
    text = line.rstrip()
    run = len(text) - len(text.rstrip(mark[0]))
    code = text[: len(text) - run]
    if run < len(mark) or not code.strip() or "//" in code:
        return -1  # no run long enough, the fence alone on its line (handled above), or a comment
    return len(code)


def _fences(lines: list[str]) -> list[tuple[int, int, str, bool, str, int]]:
    """(open line, close line, lang, closed, body, body's first line) per fenced block."""
    out, i = [], 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        indent, mark, info = len(m.group(1)), m.group(2), m.group(3).strip()
        lang = (re.split(r"[\s{}=]", info.lstrip("{."), maxsplit=1)[0] or "").lower()
        body: list[str] = []
        j, closed, reopen = i + 1, False, False
        while j < len(lines):
            s = lines[j].strip()
            # a closing fence is at least as long as the opening one (Markdown): a ```` block
            # holds ``` lines, and a ``` in a comment (`// see the ``` above`) closes nothing
            if s.startswith(mark) and s.lstrip(mark[0]).strip() == "":
                closed = True
                break
            if s.startswith(mark) and re.match(r"[A-Za-z]", s.lstrip(mark[0])):
                closed, reopen = True, True  # a new fence opens: the old one was never closed
                break
            cut = _glued_close(lines[j], mark)
            if cut > 0:  # `}``` : closing fence glued to the code
                body.append(lines[j][:cut])
                closed = True
                break
            body.append(lines[j])
            j += 1
        first = i + 1
        body = [ln[min(indent, len(ln) - len(ln.lstrip(" "))):] for ln in body]
        if body and not lang and body[0].strip().lower() in _LANG_WORDS:
            body, first = body[1:], first + 1
        out.append((i, min(j, len(lines) - 1), lang, closed, "\n".join(body), first))
        i = j if reopen else j + 1
    return out


def _json_blocks(text: str, base_line: int, multiline: bool) -> list[Block]:
    """Kernels held in JSON string literals, decoded, with labels from sibling keys."""
    hints = document_hints(text)
    out: list[Block] = []
    prev = cursor = newlines = 0
    for m in (_JSON_LIT_ML if multiline else _JSON_LIT).finditer(text):
        if m.group(2) is None or "@compute" not in m.group(1):
            continue  # never closes, or no kernel in it
        try:
            code = json.loads(f'"{m.group(1)}"', strict=False).replace("\r\n", "\n").replace("\r", "\n")
        except ValueError:
            continue
        hint = hints.get(code)
        if hint is None:  # not parseable as a document: nearest label pair before, else after
            hint = pair_hint(text, prev, m)
        newlines += text.count("\n", cursor, m.start())
        cursor = m.start()
        line = base_line + newlines
        out.append(Block(code, line + 1, (line, line + text.count("\n", m.start(), m.end())), True, hint))
        prev = m.end()
    return out


def find_blocks(text: str) -> list[Block]:
    """Every code block of a normalised, think-masked reply, in reply order."""
    lines = text.split("\n")
    blocks: list[Block] = []
    outside = list(lines)
    for open_i, close_i, lang, closed, body, first in _fences(lines):
        for k in range(open_i, close_i + 1):
            outside[k] = ""
        if lang.startswith("json") or body.lstrip()[:1] in ("{", "["):
            blocks += _json_blocks(body, first, multiline=True)
            continue
        if not closed:  # cut off, or the model forgot the fence: prose is not code
            starts = [k for k, ln in enumerate(body.split("\n")) if ln.strip()]
            if starts:
                blines = body.split("\n")
                body = "\n".join(blines[: _extent(blines, starts[0])])
        blocks.append(Block(body, first + 1, (open_i, close_i), closed))
    rest = "\n".join(outside)
    blocks += _json_blocks(rest, 0, multiline=False)
    i = 0
    while i < len(outside):
        if not _START.match(outside[i]) or outside[i].lstrip().startswith(("{", '"')):
            i += 1
            continue
        start = i
        while start > 0 and outside[start - 1].strip().startswith("//"):
            start -= 1
        end = _extent(outside, i)
        code = textwrap.dedent("\n".join(outside[start:end]))
        blocks.append(Block(code, start + 1, (start, end - 1), True))
        i = end
    return sorted(blocks, key=lambda b: b.span[0])


def _kernel_groups(items: list[_Item], entries: Sequence[str]) -> list[list[int]]:
    """Indices of the entry-point functions, grouped into kernels: a kernel of a multi-pass
    workload defines several entry points, and a name seen again starts the next kernel."""
    groups: list[list[int]] = []
    seen: set[str] = set()
    for k, it in enumerate(items):
        if it.kind != "fn" or it.name not in entries:
            continue
        if not groups or it.name in seen:
            groups.append([])
            seen = set()
        groups[-1].append(k)
        seen.add(it.name)
    return groups


def split_block(block: Block, index: int, entries: Sequence[str] = MAIN) -> list[Piece]:
    """Cut a block into kernels, one per ``fn main`` (per run of the workload's entry points).

    Each kernel owns the text from the end of the line that closes the previous
    kernel's last entry point through its own (the last also keeps what follows). That puts
    its ``// tile:`` header, label comment, consts and ``var<workgroup>`` with it.
    Declarations it uses but does not own (a helper written once for all variants)
    are borrowed from the nearest other kernel's text, preceding first; binding
    redeclarations are never borrowed, since they change another variant's types.
    """
    code = block.code
    if "@compute" not in blank_comments(code):
        return []
    items = _items(code)
    groups = _kernel_groups(items, entries)
    if len(groups) < 2:
        head = code[: items[groups[0][0]].start] if groups else code
        return [_piece(code, 0, len(code), block, index, items, range(len(items)), [], head, entries)]
    cuts = [0] + [_line_end(code, items[g[-1]].end) for g in groups[:-1]] + [len(code)]
    starts = [it.start for it in items]  # items come in reply order: ranges are bisected
    index_of = _Names(items, entries)
    pieces = []
    for n, g in enumerate(groups):
        lo, hi = cuts[n], cuts[n + 1]
        own = range(bisect.bisect_left(starts, lo), bisect.bisect_left(starts, hi))
        borrowed = _borrow(code, items, own, g[0], index_of)
        pieces.append(_piece(code, lo, hi, block, index, items, own, borrowed,
                             code[lo:items[g[0]].start], entries))
    return pieces


def _line_end(code: str, pos: int) -> int:
    nl = code.find("\n", pos)
    return len(code) if nl < 0 else nl + 1


class _Names:
    """A block's borrowable declarations by name, and its directives, in reply order:
    each kernel looks up what it needs instead of scanning every declaration."""

    def __init__(self, items: list[_Item], entries: Sequence[str] = MAIN) -> None:
        self.by_name: dict[str, list[int]] = {}
        for j, it in enumerate(items):
            if it.kind not in ("binding", "other") and it.name not in entries:
                self.by_name.setdefault(it.name, []).append(j)
        self.directives = [j for j, it in enumerate(items) if it.kind == "directive"]

    def nearest(self, name: str, own: range) -> int | None:
        """The last declaration of ``name`` before ``own``, else the first one after it."""
        found = self.by_name.get(name, [])
        if not own:
            return found[0] if found else None
        k = bisect.bisect_left(found, own.start)
        if k:
            return found[k - 1]
        k = bisect.bisect_left(found, own.stop)
        return found[k] if k < len(found) else None


def _borrow(code: str, items: list[_Item], own: range, main: int, index: _Names) -> list[int]:
    """Indices of other kernels' declarations this kernel's text refers to, transitively."""
    names = {items[j].name for j in own}
    need = set(_IDENT.findall(blank_comments("".join(code[items[j].start:items[j].end] for j in own))))
    before_main = index.directives[: bisect.bisect_left(index.directives, main)]
    taken = {j for j in before_main if j not in own}
    queue = sorted(need - names)
    while queue:
        name = queue.pop()
        pick = index.nearest(name, own)
        if pick is None or pick in taken:
            continue
        taken.add(pick)
        names.add(name)
        it = items[pick]
        queue += sorted(set(_IDENT.findall(blank_comments(code[it.start:it.end]))) - names)
    return sorted(taken)


def _piece(code: str, lo: int, hi: int, block: Block, index: int, items: list[_Item],
           own_items: range, borrowed: list[int], header: str, entries: Sequence[str] = MAIN) -> Piece:
    own = re.sub(r"\A(?:[ \t]*\n)+", "", code[lo:hi])
    line = block.line + code.count("\n", 0, lo + len(code[lo:hi]) - len(own))
    first = items[own_items.start].start if own_items else lo
    before = [code[items[j].start:items[j].end] for j in borrowed if items[j].start < first]
    after = [code[items[j].start:items[j].end] for j in borrowed if items[j].start >= first]
    source = "\n\n".join(p for p in [*before, own.rstrip(), *after] if p.strip()) + "\n"
    return Piece(source, line, is_complete(source, block.closed, entries), header, index)


class Shelf:
    """The declarations of a reply's other blocks, by name: a kernel split over fences.

    Models often give the shared pieces first ("the declarations and helpers:") and the
    entry point in a second fence. The kernel cut from that fence used the first one's
    consts, ``var<workgroup>`` and functions without declaring them, and failed to compile
    ("no definition in scope for identifier"). What a kernel uses and does not declare is
    taken from the nearest block before it, else the nearest after it, transitively;
    binding declarations and entry points are never taken (they are another variant's).
    What comes from a block before goes before the kernel's text, as a helper borrowed
    within a block does (after it where the kernel opens with ``enable``: directives
    come first); what comes from a block after goes after it.
    """

    def __init__(self, blocks: Sequence[Block], entries: Sequence[str] = MAIN) -> None:
        # name -> [(block, offset, text)] in reply order: a lookup is a bisection, not a walk
        # over every block (a reply of 8000 JSON strings made that quadratic)
        self.by_name: dict[str, list[tuple[int, int, str]]] = {}
        for n, block in enumerate(blocks if len(blocks) > 1 else ()):
            for it in _items(block.code):
                if it.kind not in ("binding", "other", "directive") and it.name not in entries:
                    places = self.by_name.setdefault(it.name, [])
                    if not places or places[-1][0] != n:  # a block's first declaration of it
                        places.append((n, it.start, block.code[it.start:it.end]))

    def _lookup(self, name: str, block: int) -> tuple[int, int, str] | None:
        places = self.by_name.get(name)
        if not places:
            return None
        k = bisect.bisect_left(places, block, key=lambda place: place[0])
        if k and places[k - 1][0] < block:
            return places[k - 1]
        k = bisect.bisect_right(places, block, key=lambda place: place[0])
        return places[k] if k < len(places) else None

    def complete(self, piece: Piece, closed: bool, entries: Sequence[str] = MAIN) -> Piece:
        """``piece`` with what it uses from the reply's other blocks appended."""
        items = _items(piece.source)
        have = {it.name for it in items if it.name}
        queue = sorted(set(_IDENT.findall(blank_comments(piece.source))) - have)
        taken: list[tuple[int, int, str]] = []
        while queue:
            name = queue.pop()
            found = None if name in have else self._lookup(name, piece.block)
            if found is None:
                continue
            have.add(name)
            taken.append(found)
            queue += sorted(set(_IDENT.findall(blank_comments(found[2]))) - have)
        if not taken:
            return piece
        taken.sort(key=lambda place: place[:2])  # in reply order
        directives = any(it.kind == "directive" for it in items)
        before = [text for n, _, text in taken if n < piece.block and not directives]
        after = [text for n, _, text in taken if n > piece.block or directives]
        source = "\n\n".join([*before, piece.source.strip(), *after]) + "\n"
        return Piece(source, piece.line, is_complete(source, closed, entries), piece.header, piece.block)

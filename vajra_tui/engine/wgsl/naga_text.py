"""Read Naga's error text (a codespan-reporting frame) back into structured labels.

wgpu hands us one string per failed ``create_shader_module``/``create_compute_pipeline``.
A model needs its pieces separately: every labelled span with the exact text the
carets cover, the ``= note:`` lines, and a headline without wgpu's boilerplate.
The frame is parsed rather than pattern-matched because Naga draws several labels
per line (``│ │`` pointer lines), multi-line spans (``╭``/``╰`` margins) and
elided gaps (``·``), and only the first label has a ``┌─ line:col`` header.

Columns from the drawing are *display* columns (codespan draws a tab as four
spaces); pass the compiled ``source`` to get character columns and the real text.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

__all__ = ["NagaLabel", "NagaMessage", "parse_naga", "display_to_char", "char_width"]

TAB_WIDTH = 4  # codespan-reporting's default, which wgpu-native uses
_HEAD = re.compile(r"^\s*(Shader '[^']*' parsing error|Shader validation error):\s*(.*)$")
_LOC = re.compile(r"┌─\s*\S*?:(\d+):(\d+)")
_GUTTER = re.compile(r"^\s*(\d*)\s*│(.*)$")
_NOTE = re.compile(r"^\s*=\s?(.*)$")
_BOILER = ("Validation Error", "Caused by:")


@dataclass
class NagaLabel:
    """One span Naga pointed at, in the compiled text's numbering (1-based)."""

    line: int
    column: int
    text: str  # Naga's label text ("" when the span is unlabelled)
    snippet: str  # the source the carets cover (multi-line spans joined by one space)
    multiline: bool = False


@dataclass
class NagaMessage:
    """One compiler error: ``kind`` is parse, validation, pipeline or other."""

    kind: str
    headline: str
    labels: list[NagaLabel] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the ``= ...`` lines, without "= note: "
    context: list[str] = field(default_factory=list)  # outer causes (pipeline errors)
    location: tuple[int, int] | None = None  # the ``┌─`` header, in character columns
    frame: dict[int, str] = field(default_factory=dict)  # source lines the frame showed


def char_width(ch: str) -> int:
    if ch == "\t":
        return TAB_WIDTH
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


def display_to_char(line: str, display_col: int) -> int:
    """The 1-based character column drawn at ``display_col`` (tabs, wide characters)."""
    width = 0
    for index, ch in enumerate(line):
        if width + char_width(ch) >= display_col:
            return index + 1
        width += char_width(ch)
    return len(line) + 1 + max(0, display_col - 1 - width)


def _display_slice(line: str, start: int, end: int) -> str:
    """Characters of ``line`` drawn between display columns ``start`` and ``end`` (inclusive)."""
    a, b = display_to_char(line, start), display_to_char(line, end)
    return line[a - 1:b]


def _expression_extent(text: str) -> str:
    """Cut ``text`` at the end of the expression it starts with (for labels sharing a caret run)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            if depth == 0:
                return text[:i].rstrip()
            depth -= 1
        elif depth == 0 and (ch in ";,:{}" or text.startswith("->", i) or (
                ch == "=" and text[i - 1:i] not in ("=", "!", "<", ">") and text[i + 1:i + 2] != "=")):
            return text[:i].rstrip()
    return text.rstrip()


def _runs(content: str) -> tuple[list[tuple[int, int]], int | None, str]:
    """Caret runs (display columns) and the inline label text that may follow them."""
    runs: list[tuple[int, int]] = []
    for m in re.finditer(r"\S+", content):
        if set(m.group()) <= {"^", "-"}:  # ``^`` primary, ``-`` secondary markers
            runs.append((m.start() + 1, m.end()))
            continue
        return runs, m.start() + 1, content[m.start():].rstrip()
    return runs, None, ""


def _single_line_labels(number: int, source: str, block: list[str]) -> list[NagaLabel]:
    """Labels of one source line: its caret line and the hanging ``│``/message lines below."""
    runs, inline_at, inline_text = _runs(block[0])
    starts: list[tuple[int, str]] = []
    for content in block[1:]:
        m = re.search(r"[^\s│]", content)
        if m:
            starts.append((m.start() + 1, content[m.start():].rstrip()))
    if runs and inline_at is not None:
        starts.append((runs[-1][0], inline_text))
    taken = {col for col, _ in starts}
    starts += [(a, "") for a, _ in runs if a not in taken]
    labels = []
    for col, text in sorted(starts):
        run = next(((a, b) for a, b in runs if a <= col <= b), (col, col))
        shared = col > run[0] or any(run[0] < c <= run[1] for c, _ in starts if c != col)
        snippet = _display_slice(source, col, run[1])
        if col > run[0]:
            snippet = _expression_extent(snippet)
        labels.append(NagaLabel(number, col, text, snippet.strip() if shared else snippet))
    return labels


def _parse_frame(rows: list[str]) -> tuple[list[NagaLabel], dict[int, str]]:
    margin = 2 * sum(row.count("╰") for row in rows)
    frame: dict[int, str] = {}
    entries: list[tuple[int | None, str]] = []  # (source line or None, content after the gutter)
    for row in rows:
        m = _GUTTER.match(row)
        if not m:
            continue
        content = m.group(2)[1:] if m.group(2).startswith(" ") else m.group(2)
        entries.append((int(m.group(1)) if m.group(1) else None, content))
    labels: list[NagaLabel] = []
    open_spans: list[tuple[int, int]] = []  # multi-line starts (line, display column)
    current: tuple[int, str] | None = None
    block: list[str] = []

    def flush() -> None:
        if current and block:
            labels.extend(_single_line_labels(current[0], current[1], block))
        block.clear()

    for number, content in entries:
        head, body = content[:margin], content[margin:]
        if number is not None:
            flush()
            frame[number] = body
            current = (number, body)
            if "╭" in head:
                open_spans.append((number, len(body) - len(body.lstrip()) + 1))
            continue
        if "╭" in head and "^" in body:
            if current:
                open_spans.append((current[0], body.index("^") + 1))
        elif "╰" in head and "^" in body and open_spans:
            start_line, start_col = open_spans.pop()
            end = body.index("^") + 1
            parts = [frame.get(n, "") for n in range(start_line, (current or (start_line,))[0] + 1)]
            parts[0] = parts[0][display_to_char(parts[0], start_col) - 1:]
            parts[-1] = parts[-1][:display_to_char(parts[-1], end)] if len(parts) > 1 else parts[-1]
            snippet = " ".join(p.strip() for p in parts if p.strip())
            labels.append(NagaLabel(start_line, start_col, body[end:].strip(), snippet, True))
        elif body.strip() and current is not None:
            block.append(body)
        else:
            flush()
    flush()
    labels.sort(key=lambda lb: (lb.line, lb.column))
    return labels, frame


def _to_chars(labels: list[NagaLabel], source: str) -> None:
    """Turn display columns into character columns and take snippets from the real text."""
    lines = source.splitlines()
    for lb in labels:
        text = lines[lb.line - 1] if 0 < lb.line <= len(lines) else ""
        if not any(char_width(ch) != 1 for ch in text):
            continue  # display and character columns agree
        start = lb.column
        lb.column = display_to_char(text, start)
        if not lb.multiline and lb.snippet:
            end = display_to_char(text, start + sum(char_width(ch) for ch in lb.snippet) - 1)
            lb.snippet = text[lb.column - 1:end]


def _split(text: str) -> list[tuple[str, list[str]]]:
    """Each ``Shader ... error:`` headline with the rows that follow it."""
    rows = text.splitlines()
    marks = [i for i, row in enumerate(rows) if _HEAD.match(row)]
    return [(rows[i], rows[i + 1:(marks + [len(rows)])[k + 1]]) for k, i in enumerate(marks)]


def parse_naga(text: str, source: str | None = None) -> list[NagaMessage]:
    """Every error in ``text``; ``source`` (the compiled text) turns columns into characters."""
    out: list[NagaMessage] = []
    for head, rows in _split(text):
        m = _HEAD.match(head)
        assert m is not None
        kind = "parse" if "parsing" in m.group(1) else "validation"
        msg = NagaMessage(kind, m.group(2).strip())
        frame_rows: list[str] = []
        for row in rows:
            if not row.strip():
                if frame_rows or msg.notes:
                    break  # what follows repeats the causes, indented
                continue
            note = _NOTE.match(row)
            loc = _LOC.search(row)
            if loc:
                msg.location = (int(loc.group(1)), int(loc.group(2)))
            elif note:
                msg.notes.append(re.sub(r"^note:\s*", "", note.group(1).strip()))
            elif _GUTTER.match(row) or row.strip() == "·":
                frame_rows.append(row)
        msg.labels, msg.frame = _parse_frame(frame_rows)
        if source is not None:
            _to_chars(msg.labels, source)
        out.append(msg)
    if out:
        return out
    useful = [r.strip() for r in text.splitlines()
              if r.strip() and r.strip() not in _BOILER and not r.strip().startswith("In wgpu")]
    if not useful:
        return [NagaMessage("other", text.strip())]
    kind = "pipeline" if "CreateComputePipeline" in text else "other"
    return [NagaMessage(kind, useful[-1], context=useful[:-1])]

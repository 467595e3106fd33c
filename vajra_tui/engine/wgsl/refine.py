"""Move a diagnostic from where the parser noticed a mistake to where the author made it.

A parser reports the token it could not accept. For three common mistakes that token
is on another line than the mistake, and a model told "line 7" edits the wrong line:

* a missing ``;`` (or ``,``/``)``) at the end of a line is noticed at the first token of
  the next line: the mistake is at the end of the previous non-blank line;
* a ``{`` never closed is noticed at the end of the file: the mistake is the innermost
  ``{`` still open there;
* a ``return`` of the wrong type is reported at the returned value's definition (a
  parameter, say): the mistake is the ``return`` statement itself.

The compiler's message is kept; where it reads poorly it gains a plain sentence, and
Naga's own position stays among the labels.
"""

from __future__ import annotations

import re

from vajra_tui.engine.events import Diagnostic, DiagnosticLabel
from vajra_tui.engine.wgsl.tokens import BLOCK_COMMENT, LINE_COMMENT, tokenize

_EXPECTED_CLOSER = re.compile(r"^expected [`'\"]?([;,)\]])[`'\"]?, found")
_END_OF_INPUT = re.compile(r'found ""|found end of|unexpected end')
_RETURN_MISMATCH = re.compile(r"`return` expression")


def refine(d: Diagnostic, body: str) -> Diagnostic:
    """The diagnostic at the author's line, when one of the mistakes above applies."""
    lines = body.splitlines()
    moved = (_missing_closer(d, lines) or _unclosed_brace(d, body, lines)
             or _bad_return(d, lines))
    return moved or d


def _moved(d: Diagnostic, line: int, column: int, lines: list[str], message: str,
           width: int = 1) -> Diagnostic:
    noticed = DiagnosticLabel(line=d.line, column=d.column, text="the compiler noticed it here")
    return d.model_copy(update={
        "line": line, "column": column, "message": message, "width": width,
        "labels": [noticed, *d.labels], "source_line": lines[line - 1].rstrip()})


def _missing_closer(d: Diagnostic, lines: list[str]) -> Diagnostic | None:
    match = _EXPECTED_CLOSER.match(d.message)
    if not match or not 1 < d.line <= len(lines):
        return None
    here = lines[d.line - 1]
    if here[: d.column - 1].strip():  # the unexpected token is not the first on its line
        return None
    prev = d.line - 1
    while prev > 0 and not _code(lines[prev - 1]):
        prev -= 1
    if prev == 0:
        return None
    text = _code(lines[prev - 1])
    return _moved(d, prev, len(text) + 1, lines,
                  f"missing `{match.group(1)}` at the end of this line ({d.message})")


def _code(line: str) -> str:
    """The line without its trailing comment and spaces."""
    return line.split("//", 1)[0].rstrip()


def _unclosed_brace(d: Diagnostic, body: str, lines: list[str]) -> Diagnostic | None:
    if not _END_OF_INPUT.search(d.message):
        return None
    # Indentation tells which `{` lost its `}`: the first `}` that closes a brace opened on a
    # line indented deeper than its own was meant for an outer brace.
    open_at: list[tuple[int, int]] = []
    suspect: tuple[int, int] | None = None
    for tok in tokenize(body):
        if tok.kind in (LINE_COMMENT, BLOCK_COMMENT):
            continue
        if tok.text == "{":
            open_at.append((tok.line, tok.column))
        elif tok.text == "}" and open_at:
            opened = open_at.pop()
            if suspect is None and _indent(lines[tok.line - 1]) < _indent(lines[opened[0] - 1]):
                suspect = opened
    if not open_at:
        return None
    line, column = suspect or open_at[-1]
    return _moved(d, line, column, lines,
                  f"this `{{` is never closed: the kernel ends first ({d.message})")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _bad_return(d: Diagnostic, lines: list[str]) -> Diagnostic | None:
    if not _RETURN_MISMATCH.search(d.message) or not 0 < d.line <= len(lines):
        return None
    value = re.search(r"`return` expression `([^`]+)`", d.message)
    start = d.line
    while start > 0 and not re.search(r"\bfn\s+\w+", lines[start - 1]):
        start -= 1
    if start == 0:
        return None
    declared = re.search(r"->\s*([^{]+?)\s*\{", lines[start - 1])
    depth = 0
    for number in range(start, len(lines) + 1):
        text = _code(lines[number - 1])
        if number > start and re.search(r"\breturn\b", text):
            if value is None or value.group(1) in text:
                column = text.index("return") + 1
                want = f" `{declared.group(1)}`" if declared else ""
                return _moved(d, number, column, lines,
                              f"this `return` gives a value of another type than the function's "
                              f"declared return type{want} ({d.message})", len(text.strip()))
        depth += text.count("{") - text.count("}")
        if number > start and depth <= 0:
            break
    return None

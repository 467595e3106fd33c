"""Compiler errors a model can act on, located in the kernel exactly as the model wrote it.

What Naga compiles is ``prelude + body``, and the body may be the sanitizer's
rewrite (early returns before barriers turned into guards, lines added and
re-indented). Naga's line numbers therefore name neither the model's lines nor
its text. This module parses the error (:mod:`.naga_text`), replaces IR jargon
with the model's own expressions (:mod:`.jargon`), maps every span back through
the prelude and the sanitizer (:class:`LineMap`), and picks the span that names
the offending *use* rather than Naga's first one, which is often a declaration.
"""

from __future__ import annotations

import difflib
import re

from vajra_tui.engine.events import Diagnostic, DiagnosticLabel
from vajra_tui.engine.wgsl.jargon import humanize, scope
from vajra_tui.engine.wgsl.refine import refine
from vajra_tui.engine.wgsl.naga_text import NagaLabel, NagaMessage, char_width as _display_width, parse_naga

__all__ = ["LineMap", "parse_naga", "diagnostics_from_error", "format_for_model", "NagaMessage"]

# Label texts that mark the offending use, and ones that mark a declaration or a
# container (the whole function) that only gives context.
_USE = re.compile(r"cannot assign|^redefinition of|is required here|^argument #\d+ has type|"
                  r"invalid function call|writing to this location|unknown identifier|^expected")
_CONTEXT = re.compile(r"immutable binding|previous definition|constrains subsequent|"
                      r"^naga::ir::(Function|GlobalVariable|Type) ")


def _key(line: str) -> str:
    """Alignment key: stripped text, but a bare ``}`` keeps its indentation (so a guard's
    closing brace does not steal the match of the function's own)."""
    return line.rstrip() if not line.strip().strip("});") else line.strip()


class LineMap:
    """Compiled line numbers (prelude + sanitized body) -> the original body's (line, column).

    Sanitized and original lines are aligned with difflib on whitespace-stripped
    text (:func:`_key`), so re-indented lines align exactly. A changed line (``return;`` ->
    ``_vajra_active = false;``) maps to its counterpart in the changed block,
    by position when the block keeps its size, else to the most similar line.
    A line the sanitizer inserted has no counterpart: a closing ``}`` maps to
    the line before it (the guarded statement it closes); any other inserted line
    (the flag's ``var``, an ``if (_vajra_active) {`` guard) maps to the line it
    precedes, the statement it was written for.
    """

    def __init__(self, prelude_lines: int, compiled_body: str, original_body: str) -> None:
        self.prelude_lines = prelude_lines
        self.compiled = compiled_body.splitlines()
        self.original = original_body.splitlines() or [""]
        self._to_original = self._align()

    def _align(self) -> list[int]:
        a = [_key(ln) for ln in self.compiled]
        b = [_key(ln) for ln in self.original]
        fixed = [-1] * len(a)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
                fixed[i1:i2] = range(j1, j2)
            elif tag == "replace":
                for i in range(i1, i2):
                    fixed[i] = max(range(j1, j2),
                                   key=lambda j: difflib.SequenceMatcher(None, a[i], b[j]).ratio())
        out = list(fixed)
        for i, j in enumerate(fixed):
            if j >= 0:
                continue
            before = next((fixed[k] for k in range(i - 1, -1, -1) if fixed[k] >= 0), None)
            after = next((fixed[k] for k in range(i + 1, len(fixed)) if fixed[k] >= 0), None)
            prefer_before = a[i].lstrip().startswith("}")
            pick = (before if before is not None else after) if prefer_before else \
                (after if after is not None else before)
            out[i] = pick if pick is not None else 0
        return out

    def line(self, compiled_line: int) -> int | None:
        """The original body's line (1-based), or None for a line of the prelude."""
        body = compiled_line - self.prelude_lines
        if body < 1:
            return None
        if body > len(self._to_original):
            return len(self.original)
        return self._to_original[body - 1] + 1

    def position(self, compiled_line: int, column: int, snippet: str = "") -> tuple[int, int] | None:
        """(line, column) in the original body; the column is re-derived where the line changed."""
        line = self.line(compiled_line)
        if line is None:
            return None
        body = compiled_line - self.prelude_lines
        was = self.compiled[body - 1] if body <= len(self.compiled) else ""
        now = self.original[line - 1]
        if was == now:
            return line, column
        if was.strip() == now.strip():  # only the indentation changed
            shift = (len(was) - len(was.lstrip())) - (len(now) - len(now.lstrip()))
            return line, max(1, column - shift)
        hits = [m.start() + 1 for m in re.finditer(re.escape(snippet), now)] if snippet else []
        if hits:
            return line, min(hits, key=lambda c: abs(c - column))
        return line, len(now) - len(now.lstrip()) + 1


def _primary(labels: list[NagaLabel]) -> NagaLabel | None:
    """The offending use: an explicit use label, else the first that is not mere context."""
    return next((lb for lb in labels if _USE.search(lb.text)), None) or \
        next((lb for lb in labels if not _CONTEXT.search(lb.text)), None) or \
        (labels[0] if labels else None)


_FILLER = frozenset("a an the of is be must this that to here has type unknown invalid definition".split())


def _adds_meaning(label: str, message: str) -> bool:
    """Whether a label says something its headline does not ("has type u32", not "expected `;`")."""
    if not label or label.startswith("naga::ir::") or label == "see msg":
        return False
    known = set(re.findall(r"\w+", message.lower()))
    return any(w not in known for w in re.findall(r"\w+", label.lower()) if w not in _FILLER)


def _merge_notes(notes: list[str]) -> list[str]:
    """Fold Naga's wrapped note lines and its one-per-line ``allowed type:`` lists."""
    out: list[str] = []
    for note in notes:
        m = re.fullmatch(r"allowed types?: (.+)", note)
        if m and out and out[-1].startswith("allowed type"):
            out[-1] = out[-1].replace("allowed type:", "allowed types:") + f", {m[1]}"
        elif out and note.startswith("(") and not out[-1].endswith((".", ":")):
            out[-1] = f"{out[-1]} {note}"
        else:
            out.append(note)
    return out


def _message(msg: NagaMessage, primary: NagaLabel | None, source: str) -> tuple[str, list[str]]:
    """Headline in WGSL words plus the notes that stay notes."""
    if msg.kind == "validation":
        causes = [c for c in (humanize(n, msg.labels, source) for n in msg.notes) if c]
        where = scope(msg.headline)
        text = ": ".join(causes) if causes else where
        if primary is not None and primary.text.startswith("naga::ir::Expression") \
                and primary.snippet and f"`{primary.snippet}`" not in text:
            text = f"`{primary.snippet}`: {text}"
        return (f"{where}: {text}" if where and causes else text), []
    text = humanize(msg.headline, msg.labels, source) or msg.headline
    if primary is not None and _adds_meaning(primary.text, text):
        text = f"{text}; {humanize(primary.text, msg.labels, source)}"
    return text, _merge_notes(msg.notes)


def _find_line(body: list[str], pattern: str) -> tuple[int, int, int] | None:
    """(line, column, width) of the first match, of its group 1 when it has one."""
    rx = re.compile(pattern)
    for number, text in enumerate(body, 1):
        m = rx.search(text.split("//")[0])
        if m:
            g = 1 if rx.groups else 0
            return number, m.start(g) + 1, max(1, m.end(g) - m.start(g))
    return None


def _fallback(msg: NagaMessage, text: str, body: list[str]) -> tuple[int, int, int]:
    """No span in the body: the declaration or builtin the error names, else
    ``@workgroup_size`` (size errors) or the ``@compute`` line, column 1."""
    builtin = re.search(r"`@builtin\((\w+)\)`", text)
    hit = builtin and _find_line(body, rf"@builtin\(\s*({builtin[1]})\s*\)")
    if hit:
        return hit
    names = re.findall(r"'(\w+)' is invalid", msg.headline) + re.findall(r"`(\w+)`", text)
    names += [lb.snippet for lb in msg.labels if re.fullmatch(r"\w+", lb.snippet)]
    for name in names:
        hit = _find_line(body, rf"\b(?:fn|struct|alias|const|override|var(?:<[^>]*>)?)\s+({name})\b")
        if hit:
            return hit
    if "workgroup size" in (text + msg.headline).lower() or "workgroup_size" in text:
        hit = _find_line(body, r"@workgroup_size")
        if hit:
            return hit
    hit = _find_line(body, r"@compute")
    return (hit[0], 1, hit[2]) if hit else (1, 1, 1)


def diagnostics_from_error(text: str, *, prelude_lines: int, compiled_body: str,
                           original_body: str) -> list[Diagnostic]:
    """Naga's error as Diagnostics in ``original_body``'s numbering (one per error in ``text``).

    ``compiled_body`` is what followed the prelude in the compiled source (the
    sanitized, enable-hoisted body); ``original_body`` is the model's own text.
    Labels inside the prelude keep line 0 (``Stitched.to_candidate_line``'s convention).
    """
    lmap = LineMap(prelude_lines, compiled_body, original_body)
    source = "\n" * prelude_lines + compiled_body
    body = lmap.original
    out = []
    for msg in parse_naga(text, source):
        primary = _primary(msg.labels)
        message, notes = _message(msg, primary, source)
        labels: list[DiagnosticLabel] = []
        spots: list[tuple[int, int, int]] = []  # body positions (line, column, width), primary first
        for lb in msg.labels:
            said = (humanize(lb.text, msg.labels, source) or "") if lb.text else f"`{lb.snippet}`"
            pos = lmap.position(lb.line, lb.column, lb.snippet)
            if pos is None:
                labels.append(DiagnosticLabel(line=0, column=lb.column, text=f"[prelude] {said}"))
                shown = msg.frame.get(lb.line, "").strip()
                if shown and f"prelude line {lb.line}: {shown}" not in notes:
                    notes.append(f"prelude line {lb.line}: {shown}")
                continue
            labels.append(DiagnosticLabel(line=pos[0], column=pos[1], text=said))
            spots.insert(0 if lb is primary else len(spots), (*pos, _width(body, pos, lb)))
        if any(lb.line == 0 for lb in labels):
            notes.append(_PRELUDE_HINT)
        if primary is not None and lmap.line(primary.line) is None:
            message = f"[prelude] {message}"  # located at the first body label, else by name
        line, column, width = spots[0] if spots else _fallback(msg, message, body)
        source_line = body[line - 1].rstrip() if 0 < line <= len(body) else ""
        out.append(refine(Diagnostic(line=line, column=column, message=message, labels=labels,
                                     notes=notes, source_line=source_line, width=width),
                          original_body))
    return out


def _width(body: list[str], pos: tuple[int, int], lb: NagaLabel) -> int:
    """How many characters of the original line the label covers."""
    text = body[pos[0] - 1] if 0 < pos[0] <= len(body) else ""
    if lb.snippet and not lb.multiline and text[pos[1] - 1:].startswith(lb.snippet):
        return len(lb.snippet)
    if lb.multiline:
        return max(1, len(text.rstrip()) - pos[1] + 1)
    return _token_width(text, pos[1])


_PRELUDE_HINT = ("the prelude (size constants, bindings, vajra_tile) is compiled in front of this "
                 "kernel: do not redeclare or shadow its names")


def _token_width(text: str, column: int) -> int:
    m = re.compile(r"[\w.]+|\S").match(text, column - 1)
    return len(m.group()) if m else 1


def format_for_model(diags: list[Diagnostic], original_body: str) -> str:
    """A compact block per diagnostic: location, message, the line with carets, other labels, notes."""
    body = original_body.splitlines()
    blocks = []
    for d in diags:
        rows = [f"line {d.line}:{d.column}: {d.message}"]
        text = body[d.line - 1].rstrip() if 0 < d.line <= len(body) else d.source_line
        if text:
            width = d.width or _token_width(text, d.column)
            pad = "".join(ch if ch == "\t" else " " * _display_width(ch) for ch in text[:d.column - 1])
            gutter = f"{d.line:>5} | "
            rows += [gutter + text, " " * (len(gutter) - 2) + "| " + pad + "^" * width]
        for lb in d.labels:
            if (lb.line, lb.column) != (d.line, d.column) and lb.text:
                where = "prelude" if lb.line == 0 else f"line {lb.line}:{lb.column}"
                rows.append(f"  {where}: {lb.text.removeprefix('[prelude] ')}")
        rows += [f"  note: {note}" for note in d.notes]
        blocks.append("\n".join(rows))
    return "\n".join(blocks)

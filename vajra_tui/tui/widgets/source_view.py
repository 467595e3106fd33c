"""WGSL source with the failing line highlighted and the compiler message at line:column."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Static

from vajra_tui.engine.events import Diagnostic
from vajra_tui.safe_text import clean


def diagnostic_excerpt(source: str, diag: Diagnostic) -> Text:
    """'line:col: message', the offending line and a caret under the column."""
    lines = source.splitlines()
    text = Text()
    text.append(f"{diag.line}:{diag.column}: ", style="bold red")
    text.append(diag.message, style="red")
    if 1 <= diag.line <= len(lines):
        code = lines[diag.line - 1].expandtabs(4)
        gutter = f"{diag.line:>4} │ "
        text.append(f"\n{gutter}{code}\n")
        text.append(" " * (len(gutter) + max(diag.column - 1, 0)) + "^", style="bold red")
    return text


def source_renderable(source: str, diagnostics: list[Diagnostic] | None = None,
                      dark: bool = True, title: str = "", wrap: bool = False) -> RenderableType:
    """Excerpts of each diagnostic, then the whole source with those lines highlighted.

    ``wrap``: a long line continues on the next row under its own number, so the line
    numbers stay put (scrolled sideways, they scrolled away with the code).

    A source is shown as data: a control character in it (an escape sequence in a
    comment, say) is drawn as U+FFFD, so it never reaches the terminal and columns hold.
    """
    source = clean(source, replace="\ufffd")
    title = clean(title)
    diagnostics = diagnostics or []
    parts: list[RenderableType] = []
    if title:
        parts.append(Text(title, style="bold"))
    parts.extend(diagnostic_excerpt(source, d) for d in diagnostics)
    if source.strip():
        parts.append(Syntax(source.rstrip("\n"), "wgsl", theme="ansi_dark" if dark else "ansi_light",
                            line_numbers=True, word_wrap=wrap,
                            highlight_lines={d.line for d in diagnostics}))
    else:
        parts.append(Text("(no source)", style="dim"))
    return Group(*parts)


class KernelSource(Static):
    """A static view of a kernel; put it in a scroll container for long sources."""

    def show(self, source: str, diagnostics: list[Diagnostic] | None = None, title: str = "",
             wrap: bool = False) -> None:
        """``wrap``: long lines wrap beside a fixed gutter (the source modal); otherwise they
        are cut at the widget's width (the graveyard, which shows the failing line apart)."""
        self.update(source_renderable(source, diagnostics, self.app.current_theme.dark, title, wrap))

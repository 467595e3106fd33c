"""Pull a WGSL kernel body out of a model reply.

Models wrap code in fences (or not), think out loud in ``<think>`` tags, and
append prose. The engine only wants the part under the contract, so this module
separates reasoning from the reply and finds the code that holds ``@compute``.
"""

from __future__ import annotations

import re

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(```|\Z)", re.DOTALL)
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
    reasoning: list[str] = []
    text = reply
    if THINK_CLOSE in text and THINK_OPEN not in text.split(THINK_CLOSE, 1)[0]:
        head, text = text.split(THINK_CLOSE, 1)
        reasoning.append(head)
    out: list[str] = []
    while True:
        start = text.find(THINK_OPEN)
        if start < 0:
            out.append(text)
            break
        out.append(text[:start])
        end = text.find(THINK_CLOSE, start + len(THINK_OPEN))
        if end < 0:
            reasoning.append(text[start + len(THINK_OPEN):])
            break
        reasoning.append(text[start + len(THINK_OPEN):end])
        text = text[end + len(THINK_CLOSE):]
    return "".join(out), "\n".join(r.strip() for r in reasoning if r.strip())


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

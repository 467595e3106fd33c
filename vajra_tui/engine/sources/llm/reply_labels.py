"""Which strategy slot a kernel in a model reply was written for.

Models label variants in many ways: ``### Variant B``, ``Strategy A:`` lines,
``**Variant C (vectorized)**``, ``1. **Register blocking**``, ``// Strategy B``
comments inside a fence, JSON ``"variant": "C"`` keys, or only a sentence
("Here is the Strategy A kernel"). A letter is trusted over anything else; words
in headings (tiled/shared → B, vec4 → C, register/geometry → A) are a weaker
fallback for replies that never use letters. Code comments label only when they
*start* with the label, since "// unlike Variant A, ..." inside a kernel is common.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

# Every pattern here must stay linear in the line it reads: replies are hostile input
# ("Variant" and then 40,000 spaces once took 20 s a slot), so runs of spaces are
# matched possessively (``\s*+``: never given back, as nothing after them could use
# them) and the free text inside a phrase is bounded.
_LETTER = re.compile(
    r"(?i:\b(?:variant|strategy|option|approach|kernel|version|slot|candidate))"
    r"\s*+([#:\-\u2013\u2014]?)\s*+[(\[]?([A-HJ-Z])(?![A-Za-z0-9_])"
)
_LOWER_WORD = re.compile(r"\s++[a-z]")
# Heading-only forms: "### B. Shared tiles", "**C) vec4**", "Register blocking (A)".
# "I" is left out everywhere: it is a pronoun and a Roman numeral far more often.
_HEAD_LETTER = re.compile(r"^[\s#*_>\-\d.)]*[(\[]?([A-HJ-Z])\s*(?:[).:]|\s[-\u2013\u2014])\s|\(([A-HJ-Z])\)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*)$")
_PSEUDO = re.compile(
    r"^\s*(?:(?:\d+[.)]|[-*+])\s+)?(?:\*\*|__)|"
    r"^\s*(?:\d+[.)]\s+)?(?i:variant|strategy|option|approach)\s+[A-Z]\b|^\s*\d+[.)]\s+\S"
)
LABEL_KEYS = ("variant", "strategy", "slot", "label", "name", "id", "kind", "approach", "title", "type")
# NEGATED_SPAN bounds the words between "no shared" and "memory": unbounded, each "no
# shared" rescanned the rest of the line, quadratic in a line that repeats it.
NEGATED_SPAN = 60
_NEGATED = re.compile(
    r"(?i)\b(?:no|without|avoid\w*|not using)\s++(?:any\s++)?(?:shared|workgroup)"
    r"[\w -]{0,%d}memory" % NEGATED_SPAN
)
MAX_JSON_DEPTH = 32
"""How deep :func:`json_hints` walks a JSON document. Kernels sit one or two levels
down (``{"variants": [{"code": ...}]}``); walking a hostile document nested
thousands deep would only exhaust Python's recursion limit."""
MAX_JSON_DOCUMENTS = 32
"""Most JSON documents decoded per text for label hints. Each failed attempt can
read to the end of the text; past this many, labels come from nearby keys only."""
HINT_WINDOW = 2000
"""How far after a JSON string with a kernel a label key (``"variant": "B"``) is
looked for when the document does not parse."""
_JSON_START = re.compile(r"(?m)^[ \t]*([\[{])")
_JSON_PAIR = re.compile(r'"(%s)"\s*:\s*"([^"\n]{0,80})"' % "|".join(LABEL_KEYS), re.IGNORECASE)
_KEYWORDS: dict[str, list[tuple[str, int]]] = {
    "A": [(r"register", 2), (r"geometr", 2), (r"workgroup[ _-]?size", 2), (r"occupancy", 1),
          (r"coarsen", 2), (r"blocking", 1)],
    "B": [(r"shared", 2), (r"workgroup[ -]memory", 3), (r"var<workgroup>", 3), (r"\btil(?:ed|ing)\b", 1),
          (r"\bsmem\b|\blds\b", 2), (r"\bhalo\b", 1)],
    "C": [(r"vec4", 2), (r"vectori[sz]", 3), (r"\bsimd\b", 1), (r"float4", 2)],
}


def letter(text: str, heading: bool = False, anchored: bool = False) -> str | None:
    """The strategy letter ``text`` names, if any.

    "Approach: A shared tile" is English, not a label: after a colon, a letter
    followed by a lower-case word is skipped.
    """
    for m in _LETTER.finditer(text):
        if anchored and text[: m.start()].strip(" \t/*-=#[(:"):
            break
        if m.group(1) == ":" and _LOWER_WORD.match(text, m.end()):
            continue
        return m.group(2)
    if heading and (h := _HEAD_LETTER.search(text)) and not (anchored and h.start() and h.group(2)):
        return h.group(1) or h.group(2)
    return None


def keyword(text: str) -> str | None:
    """Strategy whose words score highest in a heading; a tie or nothing says nothing."""
    text = _NEGATED.sub(" ", text.lower())
    score = {s: sum(w for pat, w in kws if re.search(pat, text)) for s, kws in _KEYWORDS.items()}
    best = max(score.values())
    winners = [s for s, v in score.items() if v == best]
    return winners[0] if best and len(winners) == 1 else None


def comment_letter(header: str) -> str | None:
    """Letter from the comment lines before a kernel's ``fn main`` ("// Variant C ...")."""
    for ln in header.splitlines():
        s = ln.strip()
        if s.startswith(("//", "/*", "*")) and (got := letter(s.lstrip("/*-=#[( \t"), True, True)):
            return got
    return None


def is_heading(line: str) -> bool:
    return bool(HEADING.match(line) or _PSEUDO.match(line))


class Sections:
    """The markdown headings that enclose each line, read in one pass over the reply.

    :func:`block_label` walks up from a block through ever higher heading levels.
    Walking the lines above every block is quadratic in a reply of thousands of
    fences, so the chain is kept as a stack (levels strictly rising from the bottom)
    while the lines are read once, top to bottom; each heading's letter and keyword
    are worked out once, however many blocks sit under it.
    """

    def __init__(self, lines: Sequence[str]) -> None:
        self._lines = lines
        self._read = 0
        self._stack: list[tuple[int, int, str]] = []  # (line index, level, text)
        self._labels: dict[int, tuple[str | None, str | None]] = {}

    def enclosing(self, first: int) -> list[tuple[int, str]]:
        """(line index, heading text) of the headings above line ``first``, nearest first,
        each of a higher level than the one before it."""
        if first < self._read:  # asked out of order: start over
            self._read, self._stack = 0, []
        for k in range(self._read, min(first, len(self._lines))):
            if h := HEADING.match(self._lines[k]):
                level = len(h.group(1))
                while self._stack and self._stack[-1][1] >= level:
                    self._stack.pop()
                self._stack.append((k, level, h.group(2)))
        self._read = max(self._read, first)
        return [(k, text) for k, _, text in reversed(self._stack)]

    def label(self, k: int, text: str) -> tuple[str | None, str | None]:
        """(letter, keyword) of the heading at line ``k``, computed once."""
        if k not in self._labels:
            got = letter(text, True)
            self._labels[k] = (got, None) if got else (None, keyword(text))
        return self._labels[k]


def block_label(lines: list[str], first: int, prev_end: int,
                sections: Sections | None = None) -> tuple[str | None, str | None]:
    """(letter, keyword strategy) from the reply text above a block starting at ``first``.

    In order: the closest heading-like line since the previous block (markdown
    heading, bold line, "Strategy B:" line, numbered item); any sentence in that
    gap that names a letter ("Here is Strategy A"); a short line ending in ":" just
    above the block, for keywords ("Here's the tiled version:"); the markdown
    section the block sits in, walking up heading levels across earlier blocks.
    Pass one ``sections`` for all blocks of a reply, in reply order, to read the
    headings once.
    """
    gap = [lines[k] for k in range(first - 1, prev_end, -1) if lines[k].strip()]
    kw = None
    for ln in gap:
        if is_heading(ln):
            if got := letter(ln, True):
                return got, None
            kw = keyword(ln)
            break
    prose = [ln for ln in gap if not is_heading(ln)]
    for ln in prose:
        if got := letter(ln):
            return got, None
    if prose and gap[0] is prose[0] and prose[0].rstrip().endswith(":") and len(prose[0]) < 100:
        kw = kw or keyword(prose[0])
    sections = sections or Sections(lines)
    for k, text in sections.enclosing(first):
        got, words = sections.label(k, text)
        if got:
            return got, None
        kw = kw or words
    return None, kw


def hint_label(hint: str) -> tuple[str | None, str | None]:
    """(letter, keyword strategy) from JSON key text such as "Variant B" or "tiled"."""
    if not hint.strip():  # most blocks: no JSON key at all
        return None, None
    return letter(hint, True), keyword(hint)


def _key_label(key: str) -> str:
    """``{"B": "..."}`` or ``{"variant_c": "..."}``: the key itself is the label."""
    m = re.fullmatch(r"(?i)(?:variant|strategy|kernel|option)?[ _-]?([a-z])", key)
    return f"Variant {m.group(1).upper()}" if m else ""


def json_hints(obj: object, out: dict[str, str], depth: int = 0) -> None:
    """Map each code string in a JSON document to label text from its key or sibling keys.

    Containers deeper than :data:`MAX_JSON_DEPTH` are not walked.
    """
    if depth > MAX_JSON_DEPTH:
        return
    if isinstance(obj, list):
        for v in obj:
            json_hints(v, out, depth + 1)
    if not isinstance(obj, dict):
        return
    sib = []
    for k, v in obj.items():
        if k.lower() in LABEL_KEYS and isinstance(v, str):
            sib.append(f"Variant {v}" if re.fullmatch(r"[A-Z]", v.strip()) else v)
    for k, v in obj.items():
        if isinstance(v, str) and "@compute" in v:
            out.setdefault(v.replace("\r\n", "\n").replace("\r", "\n"), _key_label(k) or " ".join(sib))
        elif isinstance(v, (dict, list)):
            json_hints(v, out, depth + 1)


def document_hints(text: str) -> dict[str, str]:
    """Label text for each kernel string in the JSON documents of ``text``.

    A document starts on a line opening with ``[`` or ``{``. Lines inside a decoded
    document are not decoded again, none after the last ``@compute`` is tried (no
    kernel could be in it), a document nested too deep for the decoder is none, and
    at most :data:`MAX_JSON_DOCUMENTS` are attempted.
    """
    hints: dict[str, str] = {}
    last = text.rfind("@compute")
    if last < 0:
        return hints
    dec = json.JSONDecoder(strict=False)
    done = tried = 0
    for m in _JSON_START.finditer(text, 0, last):
        if m.start(1) < done:
            continue
        if tried >= MAX_JSON_DOCUMENTS:
            break
        tried += 1
        try:
            obj, done = dec.raw_decode(text, m.start(1))
        except (ValueError, RecursionError):
            continue
        json_hints(obj, hints)
    return hints


def pair_hint(text: str, prev: int, lit: re.Match[str]) -> str:
    """The nearest ``"variant": "B"``-style pair before a kernel literal (since ``prev``),
    else the last one between it and the next ``}`` within :data:`HINT_WINDOW`."""
    pairs = list(_JSON_PAIR.finditer(text, prev, lit.start()))
    if not pairs:
        stop = text.find("}", lit.end(), lit.end() + HINT_WINDOW)
        end = stop if stop >= 0 else lit.end() + HINT_WINDOW
        if text.find(":", lit.end(), end) >= 0:  # no colon, no pair: skip the regex (8000 such strings: 0.5 s)
            pairs = list(_JSON_PAIR.finditer(text, lit.end(), end))
    hint = pairs[-1].group(2) if pairs else ""
    return f"Variant {hint}" if re.fullmatch(r"[A-Z]", hint.strip()) else hint

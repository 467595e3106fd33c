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

import re

_LETTER = re.compile(
    r"(?i:\b(?:variant|strategy|option|approach|kernel|version|slot|candidate))"
    r"\s*([#:\-\u2013\u2014]?)\s*[(\[]?([A-HJ-Z])(?![A-Za-z0-9_])"
)
# Heading-only forms: "### B. Shared tiles", "**C) vec4**", "Register blocking (A)".
# "I" is left out everywhere: it is a pronoun and a Roman numeral far more often.
_HEAD_LETTER = re.compile(r"^[\s#*_>\-\d.)]*[(\[]?([A-HJ-Z])\s*(?:[).:]|\s[-\u2013\u2014])\s|\(([A-HJ-Z])\)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*)$")
_PSEUDO = re.compile(
    r"^\s*(?:(?:\d+[.)]|[-*+])\s+)?(?:\*\*|__)|"
    r"^\s*(?:\d+[.)]\s+)?(?i:variant|strategy|option|approach)\s+[A-Z]\b|^\s*\d+[.)]\s+\S"
)
LABEL_KEYS = ("variant", "strategy", "slot", "label", "name", "id", "kind", "approach", "title", "type")
_NEGATED = re.compile(
    r"(?i)\b(?:no|without|avoid\w*|not using)\s+(?:any\s+)?(?:shared|workgroup)[\w -]*memory"
)
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
        if m.group(1) == ":" and re.match(r"\s+[a-z]", text[m.end():]):
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


def block_label(lines: list[str], first: int, prev_end: int) -> tuple[str | None, str | None]:
    """(letter, keyword strategy) from the reply text above a block starting at ``first``.

    In order: the closest heading-like line since the previous block (markdown
    heading, bold line, "Strategy B:" line, numbered item); any sentence in that
    gap that names a letter ("Here is Strategy A"); a short line ending in ":" just
    above the block, for keywords ("Here's the tiled version:"); the markdown
    section the block sits in, walking up heading levels across earlier blocks.
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
    level = 7
    for k in range(first - 1, -1, -1):
        h = HEADING.match(lines[k])
        if h and len(h.group(1)) < level:
            level = len(h.group(1))
            if got := letter(h.group(2), True):
                return got, None
            kw = kw or keyword(h.group(2))
    return None, kw


def hint_label(hint: str) -> tuple[str | None, str | None]:
    """(letter, keyword strategy) from JSON key text such as "Variant B" or "tiled"."""
    return letter(hint, True), keyword(hint)


def _key_label(key: str) -> str:
    """``{"B": "..."}`` or ``{"variant_c": "..."}``: the key itself is the label."""
    m = re.fullmatch(r"(?i)(?:variant|strategy|kernel|option)?[ _-]?([a-z])", key)
    return f"Variant {m.group(1).upper()}" if m else ""


def json_hints(obj: object, out: dict[str, str]) -> None:
    """Map each code string in a JSON document to label text from its key or sibling keys."""
    if isinstance(obj, list):
        for v in obj:
            json_hints(v, out)
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
            json_hints(v, out)

"""The front end on large hostile bodies: linear, and the same answers as the simple scan."""

from __future__ import annotations

import random
import time

from vajra_tui.engine.wgsl.lexer import tokenize
from vajra_tui.engine.wgsl.primitives import match_bracket
from vajra_tui.engine.wgsl.sanitize import sanitize


def _scan(toks, i):  # the definition: scan forward from i with a stack
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    for j in range(i, len(toks)):
        if toks[j].kind != "punct":
            continue
        t = toks[j].text
        if t in pairs:
            stack.append(pairs[t])
        elif t in (")", "]", "}"):
            if not stack or stack.pop() != t:
                return -1
            if not stack:
                return j
    return -1


def test_bracket_pairs_agree_with_the_scan_on_random_bodies():
    rng = random.Random(7)
    for _ in range(300):
        text = " ".join(rng.choice("(){}[]a;") for _ in range(rng.randint(0, 40)))
        toks = tokenize(text)
        for i in range(len(toks)):
            assert match_bracket(toks, i) == _scan(toks, i), (text, i)


def test_sanitize_on_100k_nested_braces_is_bounded():
    """11.7 s before: each brace scanned the rest of the body again."""
    src = "@compute @workgroup_size(64)\nfn main() {\n" + "{" * 100_000 + "}" * 100_000 + "\n}\n"
    start = time.perf_counter()
    sanitize(src)
    assert time.perf_counter() - start < 5.0

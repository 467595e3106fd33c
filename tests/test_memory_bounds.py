"""Memory that must stay bounded over a long run, however many candidates pass.

The lexer keeps the tokens of recent sources (admission, the contract, the sanitizer and
the GPU worker's front end all read the same kernel several times). Kept by count alone,
64 library kernels of 140 KB held hundreds of MB in each process: they are also bounded by
total characters (lexer.KEEP_CHARS).
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from typing import Callable

from vajra_tui.engine.wgsl import lexer

SOURCE_CHARS = 140 * 1024  # a library sgemm kernel
SOURCES = 100


def _source(i: int) -> str:
    """A distinct ~140 KB kernel; long comments keep the token count (and the test's time) low."""
    note = "x" * 1000
    line = f"    let v{i}_{{k}} = a{i}[{{k}}u] * s; // {note} {i}\n"
    body = "".join(line.format(k=k) for k in range(SOURCE_CHARS // len(line.format(k=0))))
    return f"fn main_{i}() {{\n{body}}}\n"


def _traced_mb(work: Callable[[], object]) -> float:
    """MB that ``work`` leaves allocated (after a collection)."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        work()
        gc.collect()
        return (tracemalloc.get_traced_memory()[0] - base) / 2**20
    finally:
        tracemalloc.stop()


def test_token_caches_stay_bounded_by_characters() -> None:
    sources = [_source(i) for i in range(SOURCES)]  # made before tracing: they are the caller's
    one_mb = _traced_mb(lambda: lexer.tokenize(_source(-1)))  # what one source's tokens cost
    began = time.perf_counter()

    def lex_all() -> None:
        for src in sources:
            assert "".join(t.text for t in lexer.tokenize(src)) == src
            assert lexer.significant_tokens(src)

    held_mb = _traced_mb(lex_all)
    elapsed = time.perf_counter() - began
    count, chars = lexer.kept_size()
    assert chars <= 2 * lexer.KEEP_CHARS, (count, chars)
    # by count alone the caches kept 64 of these sources' tokens (over 64 x one_mb); by
    # characters they keep ~2 x KEEP_CHARS / SOURCE_CHARS (about 21) at most
    bound = 2 * lexer.KEEP_CHARS / SOURCE_CHARS + 4
    assert held_mb < bound * one_mb, f"the token caches hold {held_mb:.1f} MB after {SOURCES} sources " \
                                     f"({held_mb / one_mb:.0f} sources' worth, {one_mb:.2f} MB each)"
    assert elapsed < 60, elapsed


def test_kept_tokens_are_still_reused() -> None:
    src = _source(9999)
    first = lexer.tokenize(src)
    again = lexer.tokenize(src)
    assert again == first and again[100] is first[100]  # the same frozen tokens, not lexed afresh
    behind = lexer.tokenize("// a prelude line\n" + src)
    assert behind[2].text == first[0].text and behind[2].line == first[0].line + 1

"""Memory that must stay bounded over a long run, however many candidates pass.

The lexer keeps the tokens of recent sources (admission, the contract, the sanitizer and
the GPU worker's front end all read the same kernel several times). Kept by count alone,
64 library kernels of 140 KB held hundreds of MB in each process: they are also bounded by
total characters (lexer.KEEP_CHARS). Admission looks for an earlier twin of every kernel
among all the session's; each kernel is hashed once for it, not once per later candidate.
"""

from __future__ import annotations

import gc
import time
import tracemalloc
from typing import Callable

from vajra_tui.engine.admission import contract, screening
from vajra_tui.engine.admission.contract import Stitched
from vajra_tui.engine.events import CandidateResult
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


def _stitched(i: int, chars: int = 20_000) -> Stitched:
    body = f"// kernel {i}\n" + "x" * chars + "\n"
    return Stitched(source=body, prelude_lines=0, workgroup_size=(8, 8, 1), tile=(8, 8), tiles=(8, 8),
                    dispatch=(8, 8, 1))


def _admit_all(kernels: list[Stitched]) -> tuple[dict[str, Stitched], dict[str, CandidateResult]]:
    """What admission does with each kernel in turn: look for an earlier twin, then keep it."""
    stitched: dict[str, Stitched] = {}
    results: dict[str, CandidateResult] = {}
    for i, st in enumerate(kernels):
        cid = f"c{i}"
        twin = screening.duplicate_of(st.sha256, cid, stitched, results)
        stitched[cid] = st
        results[cid] = CandidateResult(id=cid, name=cid, status="duplicate" if twin else "verified")
    return stitched, results


def test_duplicate_checks_hash_each_kernel_once(monkeypatch) -> None:
    hashed = [0]
    real = contract.kernel_identity

    def counting(source: str, constants: dict | None = None) -> str:
        hashed[0] += 1
        return real(source, constants)

    monkeypatch.setattr(contract, "kernel_identity", counting)
    n = 400
    kernels = [_stitched(i) for i in range(n)]
    began = time.perf_counter()
    _admit_all(kernels)
    elapsed = time.perf_counter() - began
    # rehashing every kept kernel on every admission made n * (n + 1) / 2 (80,200) hashes
    assert hashed[0] <= 2 * n, hashed[0]
    assert elapsed < 5, elapsed


def test_duplicate_found_and_identities_follow_the_kernels() -> None:
    gc.collect()
    base = screening.known_count()
    first, copy, other = _stitched(1), _stitched(1), _stitched(2)
    stitched, results = _admit_all([first, other, copy])
    assert results["c2"].status == "duplicate" and results["c1"].status == "verified"
    other.source = first.source  # a kernel changed in place is hashed again, not remembered stale
    assert screening.duplicate_of(other.sha256, "c9", {"c1": other}, results) is results["c1"]
    assert screening.known_count() == base + 2  # first and other were compared with later ones
    del stitched, first, copy, other
    gc.collect()
    assert screening.known_count() == base  # no kernel is held past its session


def test_a_long_kernel_is_lexed_once_for_all_its_readings(monkeypatch) -> None:
    """The bound still holds what one admission reads: the body and the body behind both preludes."""
    long_lexes = []
    real = lexer._lex

    def counting(src: str):
        if len(src) > SOURCE_CHARS // 2:
            long_lexes.append(len(src))
        return real(src)

    monkeypatch.setattr(lexer, "_lex", counting)
    body = _source(4242)
    readings = [body, "// sanitizer prelude\n" + body, "// contract prelude\nconst n = 1u;\n" + body]
    for _ in range(3):
        for text in readings:
            assert "".join(t.text for t in lexer.tokenize(text)) == text
            assert lexer.significant_tokens(text)
    assert len(long_lexes) == 1, long_lexes

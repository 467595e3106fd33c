"""Whether a kernel can write a module-scope variable, read from its tokens.

Published kernels often declare every buffer ``var<storage, read_write>``, inputs
included (gpu.cpp's llm.c kernels do), and only read the inputs. Vajra hands the same
input buffers to every candidate, so an input a kernel could change is refused; this
module tells a declaration that is writable from a kernel that writes. In WGSL a
module-scope variable is written only through an expression rooted at its name (an
assignment, a compound assignment, ``++`` or ``--``, with any chain of ``[...]``,
``.member`` and parentheses between), or through a pointer, which only ``&`` can make
(``arrayLength(&x)`` and ``atomicLoad(&x[i])`` only read). So a kernel whose tokens hold
neither never writes it. A local that shadows the name is counted as the variable: the
answer errs toward "writes", never toward "reads only".
"""

from __future__ import annotations

from vajra_tui.engine.wgsl.lexer import IDENT, Token, significant_tokens

ASSIGNING = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"})
_OPEN, _CLOSE = "([", ")]"


def first_write(src: str, name: str) -> Token | None:
    """The first token where ``src`` writes ``name`` or takes its address (a pointer may
    write it); None when every use of ``name`` only reads it."""
    toks = significant_tokens(src)
    for i, tok in enumerate(toks):
        if tok.kind != IDENT or tok.text != name or (i and toks[i - 1].text == "."):
            continue
        before = i - 1
        while before >= 0 and toks[before].text == "(":  # &(x), ((x))[0] = ...
            before -= 1
        if before >= 0 and toks[before].text == "&" and not _measured(toks, before):
            return tok
        after = _past_accessors(toks, i + 1)
        if after < len(toks) and toks[after].text in ASSIGNING:
            return tok
    return None


READING_BUILTINS = frozenset({"arrayLength", "atomicLoad"})


def _measured(toks: list[Token], amp: int) -> bool:
    """``arrayLength(&name...)`` or ``atomicLoad(&name...)``: the uses of a pointer that
    cannot write through it."""
    return amp >= 2 and toks[amp - 1].text == "(" and toks[amp - 2].text in READING_BUILTINS


def _past_accessors(toks: list[Token], i: int) -> int:
    """The index after a chain of ``[...]``, ``.member`` and closing parentheses starting at
    ``i``: WGSL takes a parenthesised left-hand side, ``(x)[0] = v``."""
    while i < len(toks):
        if toks[i].text == "." and i + 1 < len(toks):
            i += 2
        elif toks[i].text == "[":
            i = _after_close(toks, i)
        elif toks[i].text == ")":
            i += 1
        else:
            break
    return i


def _after_close(toks: list[Token], i: int) -> int:
    """The index after the bracket that closes the one at ``i``."""
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].text in _OPEN:
            depth += 1
        elif toks[j].text in _CLOSE:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(toks)

"""Whether a kernel can write a module-scope variable, read from its tokens.

Published kernels often declare every buffer ``var<storage, read_write>``, inputs
included (gpu.cpp's llm.c kernels do), and only read the inputs. Vajra hands the same
input buffers to every candidate, so an input a kernel could change is refused; this
module tells a declaration that is writable from a kernel that writes. In WGSL a
module-scope variable is written only through an expression rooted at its name (an
assignment, a compound assignment, ``++`` or ``--``, with any chain of ``[...]``,
``.member`` and parentheses between), or through a pointer, which only ``&`` can make
(``arrayLength(&x)`` and ``atomicLoad(&x[i])`` only read). So a kernel whose tokens hold
neither never writes it. A local of the same name (``let``, ``var`` or ``const`` in a
function, a parameter, a ``for`` loop's variable) hides the module-scope one until its block
closes; its uses there are not the variable's. Anything this module cannot place errs toward
"writes", never toward "reads only".
"""

from __future__ import annotations

from vajra_tui.engine.wgsl.lexer import IDENT, Token, significant_tokens

ASSIGNING = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"})
_OPEN, _CLOSE = "([", ")]"


def first_write(src: str, name: str) -> Token | None:
    """The first token where ``src`` writes ``name`` or takes its address (a pointer may
    write it); None when every use of ``name`` only reads it."""
    toks = significant_tokens(src)
    hidden = _hidden_uses(toks, name)
    for i, tok in enumerate(toks):
        if tok.kind != IDENT or tok.text != name or (i and toks[i - 1].text == ".") or i in hidden:
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


DECLARING = frozenset({"let", "var", "const"})


def _hidden_uses(toks: list[Token], name: str) -> set[int]:
    """Indices of the tokens ``name`` that declare a local of that name or use one.

    Blocks are braces. A local declared in a block hides the name until that block closes; a
    parameter, or a ``for`` loop's variable, is declared inside parentheses and hides it in
    the block that follows them. Module scope (depth 0) declares the variable itself."""
    hidden: set[int] = set()
    blocks: list[bool] = []  # per open brace: whether a local of this name was declared in it
    waiting = False  # declared in parentheses, for the next block
    parens = 0
    for i, tok in enumerate(toks):
        text = tok.text
        if text == "{":
            blocks.append(waiting)
            waiting = False
        elif text == "}":
            if blocks:
                blocks.pop()
        elif text == "(":
            parens += 1
        elif text == ")":
            parens = max(0, parens - 1)
        elif tok.kind == IDENT and text == name and (not i or toks[i - 1].text != "."):
            if _declares(toks, i) and (blocks or parens):
                hidden.add(i)
                if parens:  # a parameter, or `for (var x ...`: the next block is its scope
                    waiting = True
                else:
                    blocks[-1] = True
            elif any(blocks) or (waiting and parens):  # `for (var x = 0u; x < n; x++)`
                hidden.add(i)
    return hidden


def _declares(toks: list[Token], i: int) -> bool:
    """``let x``, ``var x``, ``var<function> x``, ``const x``, or a parameter ``x: T``."""
    before = toks[i - 1].text if i else ""
    if before in DECLARING:
        return True
    if before == ">" and i >= 4 and toks[i - 4].text == "var" and toks[i - 3].text == "<":
        return True
    return before in ("(", ",") and i + 1 < len(toks) and toks[i + 1].text == ":" and _in_fn_params(toks, i)


def _in_fn_params(toks: list[Token], i: int) -> bool:
    """Whether the parentheses around ``i`` open a function's parameter list (``fn f(``)."""
    depth = 0
    for j in range(i - 1, -1, -1):
        if toks[j].text in _CLOSE:
            depth += 1
        elif toks[j].text in _OPEN:
            if depth == 0:
                return j >= 2 and toks[j - 2].text == "fn"
            depth -= 1
    return False


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

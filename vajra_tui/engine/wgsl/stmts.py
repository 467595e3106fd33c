"""Statement structure of a WGSL function body, over significant tokens.

Just enough of WGSL's statement grammar for the uniformity sanitizer: compound
statements (if / for / while / loop / switch / blocks) keep their children,
everything else is a simple statement ending at ``;``. Indices are positions in
the significant-token list, ``end`` inclusive.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vajra_tui.engine.wgsl.tokens import ATTR, Token, match_bracket


@dataclass
class Clause:
    """One ``if``/``else if``/``else`` arm; ``cond`` is empty for ``else``."""

    cond: tuple[int, int] | None
    body: list["Stmt"]
    open: int  # index of '{' (-1 for a brace-less body)
    close: int


@dataclass
class Stmt:
    kind: str  # if for while loop switch block continuing decl return break continue discard simple
    start: int
    end: int
    clauses: list[Clause] = field(default_factory=list)  # if: arms; loops/blocks: one arm
    header: tuple[int, int] | None = None  # for-header (inside parens) or while condition

    @property
    def body(self) -> list["Stmt"]:
        return self.clauses[0].body if self.clauses else []


class ParseError(ValueError):
    """The body is not something this small parser understands."""


def _close(toks: list[Token], i: int) -> int:
    j = match_bracket(toks, i)
    if j < 0:
        raise ParseError(f"unbalanced {toks[i].text!r} at line {toks[i].line}")
    return j


def _until_brace(toks: list[Token], i: int) -> int:
    """Index of the first '{' at bracket depth 0 from ``i``."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j].text
        if t in ("(", "["):
            depth += 1
        elif t in (")", "]"):
            depth -= 1
        elif t == "{" and depth == 0:
            return j
        elif t == ";" and depth == 0:
            return -1
    return -1


def _simple_end(toks: list[Token], i: int, stop: int) -> int:
    depth = 0
    for j in range(i, stop):
        t = toks[j].text
        if t in ("(", "[", "{"):
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
        elif t == ";" and depth == 0:
            return j
    raise ParseError(f"missing ';' after line {toks[i].line}")


def parse_block(toks: list[Token], open_idx: int) -> list[Stmt]:
    """Statements between ``toks[open_idx]`` ('{') and its matching '}'."""
    return parse_range(toks, open_idx + 1, _close(toks, open_idx))


def parse_range(toks: list[Token], i: int, stop: int) -> list[Stmt]:
    out: list[Stmt] = []
    while i < stop:
        s = _parse_stmt(toks, i, stop)
        if s is None:
            i += 1  # stray ';'
            continue
        out.append(s)
        i = s.end + 1
    return out


def _body(toks: list[Token], i: int, stop: int) -> Clause:
    if toks[i].text == "{":
        close = _close(toks, i)
        return Clause(None, parse_range(toks, i + 1, close), i, close)
    s = _parse_stmt(toks, i, stop)  # brace-less body (not WGSL, but models write it)
    if s is None:
        raise ParseError("empty body")
    return Clause(None, [s], -1, s.end)


def _parse_stmt(toks: list[Token], i: int, stop: int) -> Stmt | None:
    while toks[i].kind == ATTR:  # statement attributes: skip '@name(...)'
        i += 2
        if toks[i].text == "(":
            i = _close(toks, i) + 1
    t = toks[i].text
    if t == ";":
        return None
    if t == "{":
        close = _close(toks, i)
        return Stmt("block", i, close, [Clause(None, parse_range(toks, i + 1, close), i, close)])
    if t == "if":
        return _parse_if(toks, i, stop)
    if t == "for":
        close = _close(toks, i + 1)
        arm = _body(toks, close + 1, stop)
        return Stmt("for", i, arm.close, [arm], (i + 2, close - 1))
    if t == "while":
        brace = _until_brace(toks, i + 1)
        if brace < 0:
            raise ParseError(f"while without body at line {toks[i].line}")
        arm = _body(toks, brace, stop)
        return Stmt("while", i, arm.close, [arm], (i + 1, brace - 1))
    if t in ("loop", "continuing"):
        arm = _body(toks, i + 1, stop)
        return Stmt(t, i, arm.close, [arm])
    if t == "switch":
        brace = _until_brace(toks, i + 1)
        close = _close(toks, brace)
        return Stmt("switch", i, close, [], (i + 1, brace - 1))
    end = _simple_end(toks, i, stop)
    kind = {"let": "decl", "var": "decl", "const": "decl", "return": "return", "break": "break",
            "continue": "continue", "discard": "discard"}.get(t, "simple")
    return Stmt(kind, i, end)


def _parse_if(toks: list[Token], i: int, stop: int) -> Stmt:
    clauses: list[Clause] = []
    start, j = i, i
    while True:
        # condition: up to the body '{', or a parenthesised condition then a brace-less body
        if toks[j + 1].text == "(" and toks[_close(toks, j + 1) + 1].text != "{":
            cond_end = _close(toks, j + 1)
            body_at = cond_end + 1
        else:
            body_at = _until_brace(toks, j + 1)
            if body_at < 0:
                raise ParseError(f"if without body at line {toks[j].line}")
            cond_end = body_at - 1
        arm = _body(toks, body_at, stop)
        arm.cond = (j + 1, cond_end)
        clauses.append(arm)
        k = arm.close + 1
        if k < stop and toks[k].text == "else":
            if toks[k + 1].text == "if":
                j = k + 1
                continue
            arm = _body(toks, k + 1, stop)
            clauses.append(arm)
        return Stmt("if", start, clauses[-1].close, clauses)


def for_parts(toks: list[Token], s: Stmt) -> tuple[Stmt | None, tuple[int, int] | None, Stmt | None]:
    """(init statement, condition range, update statement) of a ``for`` header."""
    if s.kind != "for" or s.header is None:
        return None, None, None
    a, b = s.header
    depth, semis = 0, []
    for k in range(a, b + 1):
        t = toks[k].text
        depth += t in ("(", "[")
        depth -= t in (")", "]")
        if t == ";" and depth == 0:
            semis.append(k)
    if len(semis) != 2:
        raise ParseError(f"bad for header at line {toks[a].line}")
    init = Stmt("decl" if toks[a].text in ("var", "let") else "simple", a, semis[0]) if semis[0] > a else None
    cond = (semis[0] + 1, semis[1] - 1) if semis[1] > semis[0] + 1 else None
    upd = Stmt("simple", semis[1] + 1, b) if b > semis[1] else None
    return init, cond, upd


def walk(stmts: list[Stmt]):
    """Every statement, depth first, in source order."""
    for s in stmts:
        yield s
        for c in s.clauses:
            yield from walk(c.body)

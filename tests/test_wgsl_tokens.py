"""WGSL tokenizer and structural helpers."""

from __future__ import annotations

from vajra_tui.engine.wgsl.tokens import (
    BindingDecl, find_entry_point, find_functions, has_compute_entry, match_bracket, significant,
    storage_bindings, tile_header, tokenize, workgroup_size,
)

KERNEL = """\
// tile: 64x32
enable f16;
const TS: u32 = 16u;
const WX = TS * 2u;
/* fn fake() { @compute } /* nested */ still comment @workgroup_size(1) */
@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1)
var<storage,read_write> C : array<vec4<f32>>;
@group(1) @binding(0) var<uniform> P: Params;
@group(0) @binding(3) var<storage> D: array<u32>;   // default access is read

fn helper(x: f32) -> f32 { return x * 2.0; }

@compute @workgroup_size(WX, TS)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    var x = 1.0e-3f + 0x1Fp2f;
    x >>= 2u;
}
"""


def kinds(src: str) -> list[tuple[str, str]]:
    return [(t.kind, t.text) for t in significant(tokenize(src))]


def test_roundtrip_and_positions():
    toks = tokenize(KERNEL)
    assert "".join(t.text for t in toks) == KERNEL
    main = next(t for t in toks if t.text == "main")
    assert (main.line, main.column) == (15, 4)
    assert KERNEL[main.offset:main.end] == "main"


def test_comments_nested_and_line():
    toks = tokenize("a /* x /* y */ z */ b // c /* d\ne")
    assert [t.text for t in significant(toks)] == ["a", "b", "e"]
    block = next(t for t in toks if t.kind == "block_comment")
    assert block.text == "/* x /* y */ z */"
    line = next(t for t in toks if t.kind == "line_comment")
    assert line.text == "// c /* d"
    e = significant(toks)[-1]
    assert (e.line, e.column) == (2, 1)


def test_numbers():
    for lit in ["1", "0", "1u", "2i", "1.0", "1.", ".5", "1e-3", "1.0e+4f", "1.0f", "1h", "0x1F", "0X1fu",
                "0x1.8p3", "0xAp-2f", "0f", "123456789"]:
        assert kinds(lit) == [("number", lit)], lit
    assert kinds("a.x") == [("ident", "a"), ("punct", "."), ("ident", "x")]
    assert kinds("v.5") == [("ident", "v"), ("number", ".5")]


def test_operators_and_keywords():
    got = [t for _, t in kinds("fn f() -> u32 { a >>= b <= c && d || e != f; x++; }")]
    assert got == ["fn", "f", "(", ")", "->", "u32", "{", "a", ">>=", "b", "<=", "c", "&&", "d", "||",
                   "e", "!=", "f", ";", "x", "++", ";", "}"]
    assert kinds("let _x = _;") == [("keyword", "let"), ("ident", "_x"), ("punct", "="), ("punct", "_"),
                                    ("punct", ";")]
    assert kinds("@compute")[0] == ("attr", "@")


def test_match_bracket():
    toks = significant(tokenize("f(a[b(c)], { d }) ]"))
    assert toks[match_bracket(toks, 1)].text == ")" and match_bracket(toks, 1) == len(toks) - 2
    assert match_bracket(significant(tokenize("( ]")), 0) == -1


def test_functions_and_entry():
    fns = find_functions(KERNEL)
    assert [f.name for f in fns] == ["helper", "main"]
    assert fns[1].attributes == ("compute", "workgroup_size")
    assert find_entry_point(KERNEL).name == "main"
    assert has_compute_entry(KERNEL) and not has_compute_entry(KERNEL, "other")
    assert not has_compute_entry("fn main() {}")
    assert not has_compute_entry("/* @compute @workgroup_size(1) fn main() {} */")


def test_workgroup_size():
    assert workgroup_size(KERNEL) == (32, 16, 1)
    assert workgroup_size(KERNEL, {"TS": 8}) == (32, 8, 1)  # caller's consts win
    assert workgroup_size("@compute @workgroup_size(256) fn main() {}") == (256, 1, 1)
    assert workgroup_size("@compute @workgroup_size(8u, 8i, 2,) fn main() {}") == (8, 8, 2)
    assert workgroup_size("@compute @workgroup_size(B) fn main() {}") is None
    assert workgroup_size("@compute @workgroup_size(B * 4u) fn main() {}", {"B": 16}) == (64, 1, 1)
    assert workgroup_size("@compute @workgroup_size((2+2)*8, 1 << 2) fn main() {}") == (32, 4, 1)
    assert workgroup_size("fn main() {}") is None


def test_storage_bindings():
    got = storage_bindings(KERNEL)
    assert got == [
        BindingDecl(0, 0, "storage", "read", "A", "array<f32>", 6),
        BindingDecl(0, 1, "storage", "read_write", "C", "array<vec4<f32>>", 7),
        BindingDecl(0, 3, "storage", "read", "D", "array<u32>", 10),
    ]
    assert [b.name for b in storage_bindings(KERNEL, include_all=True)] == ["A", "C", "P", "D"]
    assert storage_bindings("/* @group(0) @binding(0) var<storage, read> Z: array<f32>; */") == []


def test_tile_header():
    assert tile_header(KERNEL) == (64, 32)
    assert tile_header("// tile: 256\nfn main() {}") == (256, 1)
    assert tile_header("//tile:16 x 8") == (16, 8)
    assert tile_header("/* tile: 4x4 */ fn main() {}") is None
    assert tile_header("// tiles are fun") is None
    assert tile_header("// tile: 64x0") == (64, 0)


def test_ascii_and_unicode_sources_split_alike() -> None:
    """An all-ASCII source takes the lexer's one-regex path, any other the character-class
    path: a non-ASCII comment at the end must not change a single earlier token."""
    from vajra_tui.engine.sources.library import LibrarySource, templates
    from vajra_tui.engine.workloads import WORKLOADS

    tricky = ("a>>=b<<=c->d _ x__ _x 1.5e3f .5 0x1p4 0x1.8p1h 7u 3e-2 whilex while\r\n\r"
              "/* a /* b */ c\r\n */ x\v\f@y $ ` ~!= ;\n")
    sources = [KERNEL, tricky]
    library = LibrarySource()
    for name, w in WORKLOADS.items():  # the library's kernels, every template's first configuration
        for t in templates(name):
            first = t.complete({axis: values[0] for axis, values in t.axes.items()})
            cand = library.instantiate(first, w.size("seed"))
            if cand is not None:
                sources.append(cand.source)
    assert len(sources) > 12
    for src in sources:
        plain = tokenize(src)
        marked = tokenize(src + "// é")
        assert src.isascii() and not (src + "// é").isascii()
        assert [tuple(t) for t in marked[:len(plain)]] == [tuple(t) for t in plain]
        assert "".join(t.text for t in plain) == src


def test_a_body_behind_another_prelude_splits_as_if_lexed_alone() -> None:
    """The lexer reuses a long body's tokens behind a prelude (and a prelude'd text's tail
    for the body): lines, columns and offsets must be those of lexing the text afresh,
    which a non-ASCII comment at the end forces (no kept text ends that way)."""
    body = "\n".join(f"fn f{i}(x: f32) -> f32 {{ /* {i} */ return x * {i}.0; }}" for i in range(200)) + "\n"
    preludes = ["const M: u32 = 4u;\n", "// two\r\n// lines\n", "/* shut */\n", "x\r", "é\n"]
    marks = iter(range(10**6))

    def fresh(text: str) -> list:  # a mark of its own: no kept text ends like it
        return tokenize(text + f"// é{next(marks)}")[:-1]

    for order in ("body first", "whole first"):
        for head in preludes:
            whole = head + body + f"// {order} {preludes.index(head)}\n"
            tail = whole[len(head):]
            pair = [tail, whole] if order == "body first" else [whole, tail]
            for text in pair:
                assert [tuple(t) for t in tokenize(text)] == [tuple(t) for t in fresh(text)], (order, head)
    tokenize(body)
    opened = tokenize("/* open\n" + body)  # never closed: the whole text is one comment
    assert len(opened) == 1 and opened[0].kind == "block_comment"

"""WGSL templates as projects write them: placeholders, the preprocessor, its bounds and errors.

Line numbers must survive expansion (diagnostics point at what the user wrote), so most tests
check the line count as well as the text.
"""

from __future__ import annotations

import time

import pytest

from vajra_tui.engine.wgsl.template import (TemplateError, expand, is_template, literal,
                                            placeholders)

MATMUL = """// tune: TILE = 8, 16
#define WG_X {{TILE_M}}
#ifndef K_UNROLL
#define K_UNROLL 4
#endif
const TILE: u32 = {{TILE}}u;
const EPS: f32 = {{EPS}};
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
#ifdef USE_VEC4
var<workgroup> tile: array<vec4<f32>, TILE * TILE / 4u>;
#else
var<workgroup> tile: array<f32, TILE * TILE>;
#endif
@compute @workgroup_size(WG_X, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let N = {{N}}u;  // the kernel's own N is not the size constant
#if K_UNROLL >= 4 && TILE_M % 2 == 0
    var acc = EPS * f32(K_UNROLL);
#elif K_UNROLL > 1
    var acc = 1.0;
#else
    var acc = 0.0;
#endif
    if (gid.x < N) {
        tile[0] = tile[0];
        c[gid.x] = a[gid.x] * b[gid.x] + acc;
    }
}
"""
VALUES = {"TILE_M": 64, "TILE": 16, "EPS": 1e-05, "N": 1024}


def _lines(text: str) -> int:
    return len(text.split("\n"))


def test_is_template() -> None:
    assert is_template(MATMUL)
    assert is_template("let x = {{ X }};")
    assert not is_template("@compute @workgroup_size(1) fn main() {}\n// {{X}} in a comment\n")


def test_placeholders_in_first_use_order() -> None:
    assert placeholders(MATMUL) == ["TILE_M", "TILE", "EPS", "USE_VEC4", "N"]
    src = "#if defined(A) || B > 2\n#elif defined C\n#endif\n#define D 1\n#ifdef D\n#endif\n{{ E }}"
    assert placeholders(src) == ["A", "B", "C", "E"]


def test_matmul_expands_line_for_line() -> None:
    out = expand(MATMUL, VALUES)
    assert _lines(out) == _lines(MATMUL)
    lines = out.split("\n")
    assert lines[5] == "const TILE: u32 = 16u;"
    assert lines[6] == "const EPS: f32 = 1e-05;"
    assert lines[13] == "var<workgroup> tile: array<f32, TILE * TILE>;" and lines[11] == ""
    assert lines[15] == "@compute @workgroup_size(64, 1, 1)"
    assert "let N = 1024u;" in lines[17] and "if (gid.x < N)" in out  # values never rewrite N
    assert lines[19] == "    var acc = EPS * f32(4);"
    assert lines[0] == "// tune: TILE = 8, 16"
    vec4 = expand(MATMUL, {**VALUES, "USE_VEC4": True, "K_UNROLL": 2}).split("\n")
    assert "vec4<f32>" in vec4[11] and vec4[13] == "" and vec4[21] == "    var acc = 1.0;"


def test_nested_conditionals() -> None:
    src = "#ifdef A\n#ifdef B\nab\n#else\na\n#endif\n#else\n#ifndef B\nnone\n#else\nb\n#endif\n#endif"
    for values, kept in (({"A": 1, "B": 1}, "ab"), ({"A": 1}, "a"), ({}, "none"), ({"B": 0}, "b")):
        out = expand(src, values)
        assert _lines(out) == _lines(src) and out.split() == [kept]


def test_if_arithmetic_and_c_semantics() -> None:
    def pick(expr: str, values: dict | None = None) -> bool:
        return expand(f"#if {expr}\nyes\n#endif", values or {}).strip() == "yes"
    assert pick("(2 + 3) * 4 == 20 && 7 / 2 == 3 && -7 / 2 == -3 && -7 % 2 == -1")
    assert pick("1 << 4 == 16 && 256 >> 4 == 0x10 && 3 <= 3 && 3 != 4 && !(2 < 1)")
    assert pick("UNKNOWN == 0 && true && !false")
    assert pick("T * 2 > 30", {"T": 16}) and not pick("T * 2 > 40", {"T": 16})
    assert pick("0 && 1 / 0 || 1")  # C never evaluates the right of a false &&
    assert pick("defined(V) && defined V", {"V": False}) and not pick("V", {"V": False})
    assert expand("#define W (3 + 1)\n#if W * 2 == 8\nok\n#endif", {}).split() == ["ok"]
    src = "#if 0\na\n#elif X == 2\nb\n#elif X == 3\nc\n#else\nd\n#endif"
    assert [expand(src, {"X": x}).split() for x in (2, 3, 4)] == [["b"], ["c"], ["d"]]


def test_define_substitutes_whole_identifiers() -> None:
    src = "#define WG 64\n#define BODY WG + WGX\nlet a = BODY; // WG stays in comments\n#undef WG\nWG"
    out = expand(src, {})
    assert out.split("\n") == ["", "", "let a = 64 + WGX; // WG stays in comments", "", "WG"]
    assert expand("#define E\nx E y", {}).split("\n")[1] == "x  y"
    assert expand("#define X X + 1\nX", {}).split("\n")[1] == "X + 1"  # no self-recursion
    assert expand("#define T {{TILE}}\nconst t = T;", {"TILE": 8}).split("\n")[1] == "const t = 8;"


def test_literals() -> None:
    assert [literal(v, "V", 1) for v in (3, True, False, 0.5, 1e-05, 2.0, "vec4<f32>")] == \
        ["3", "true", "false", "0.5", "1e-05", "2.0", "vec4<f32>"]
    with pytest.raises(TemplateError):
        literal(float("inf"), "V", 1)


def test_a_value_of_several_lines_is_folded_onto_its_placeholders_line() -> None:
    """burn pastes a whole loop into `{{ prng_loop }}`: the lines after it keep their numbers,
    and the fragment's `//` comments cannot swallow the rest of its folded line."""
    loop = "for (var i = 0u; i < n; i++) { // each value\r\n    out[i] = f32(i); /* a\nblock */\n}\n"
    src = "fn main() {\n    {{ prng_loop }}\n    let after = 1;\n}"
    lines = expand(src, {"prng_loop": loop}).split("\n")
    assert len(lines) == 4 and lines[2] == "    let after = 1;"
    assert lines[1].split() == "for (var i = 0u; i < n; i++) { out[i] = f32(i); /* a block */ }".split()


def test_javascript_substitutions_are_placeholders() -> None:
    """Kernels kept in JS template literals (webgpu-samples' bitonic sort) write `${...}`: a
    name, integer arithmetic over names, or any other text, which is then a defines key."""
    src = ("var<workgroup> d: array<u32, ${n * 2}>;\n@compute @workgroup_size(${n}, 1, 1)\n"
           "fn f() { let s = ${ this.scale }; }  // ${not} in a comment")
    assert is_template(src) and placeholders(src) == ["n", "this.scale"]
    lines = expand(src, {"n": 64, "this.scale": 0.5}).split("\n")
    assert lines[:2] == ["var<workgroup> d: array<u32, 128>;", "@compute @workgroup_size(64, 1, 1)"]
    assert lines[2].startswith("fn f() { let s = 0.5; }")
    with pytest.raises(TemplateError, match=r"`\$\{this.scale\}` on line 3: 'this.scale' has no value"):
        expand(src, {"n": 64})
    with pytest.raises(TemplateError, match="line 1: 'n' has no value"):
        expand(src, {"this.scale": 0.5})


@pytest.mark.parametrize(("source", "line", "words"), [
    ('x\n\n#include "common.wgsl"', 3, "`#include` is not supported (line 3)"),
    ("#import foo", 1, "`#import` is not supported"),
    ("#pragma once", 1, "`#pragma` is not supported"),
    ("#define F(x) (x * 2)", 1, "function-like macro `F(...)`"),
    ("a\n#version 450", 2, "`#version` is not a known directive"),
    ("#if 1\n#endif\n#endif", 3, "`#endif` without an `#if`"),
    ("a\n#ifdef A\nb", 2, "`#ifdef` has no `#endif` (line 2)"),
    ("#if 1\n#else\n#elif 1\n#endif", 3, "after the `#else` of line 2"),
    ("#if 1 +\n#endif", 1, "ends too soon"),
    ("#if 4 / (2 - 2)\n#endif", 1, "division by zero"),
    ("#if 1 ? 2 : 3\n#endif", 1, "unexpected"),
    ("#define A 1 \\\n  + 2", 1, "continues onto the next line"),
    ("let t = 1;\nconst TILE: u32 = {{TILE}}u;", 2, "{{TILE}} on line 2 has no value (give it"),
])
def test_errors_name_their_line(source: str, line: int, words: str) -> None:
    with pytest.raises(TemplateError) as caught:
        expand(source, {})
    assert words in str(caught.value) and caught.value.line == line
    assert "\n" not in str(caught.value) and str(caught.value).startswith("template: ")


def test_missing_placeholder_column() -> None:
    with pytest.raises(TemplateError) as caught:
        expand("const TILE: u32 = {{TILE}}u;", {})
    assert (caught.value.line, caught.value.column) == (1, 19)


def test_bounds() -> None:
    bomb = "#define A x x x x x x x x x x\n" + "".join(
        f"#define {chr(66 + i)} {(chr(65 + i) + ' ') * 10}\n" for i in range(8)) + "I\n"
    start = time.monotonic()
    with pytest.raises(TemplateError, match="2 MB"):
        expand(bomb, {})
    assert time.monotonic() - start < 5
    with pytest.raises(TemplateError, match="400 characters"):
        expand("#if " + "1 + " * 120 + "1\n#endif", {})
    with pytest.raises(TemplateError, match="64 levels"):
        expand("#if 1\n" * 65 + "#endif\n" * 65, {})
    with pytest.raises(TemplateError, match="10000 directive lines"):
        expand("#define A 1\n" * 10_001, {})
    chain = "".join(f"#define M{i} (M{i + 1} * M{i + 1})\n" for i in range(40)) + "#define M40 3\n"
    with pytest.raises(TemplateError, match="tokens|levels"):
        expand(chain + "#if M0\n#endif", {})
    deep = "".join(f"#define D{i} D{i + 1}\n" for i in range(70))
    with pytest.raises(TemplateError, match="64 levels"):
        expand(deep + "D0", {})


def test_expanded_matmul_compiles_on_the_adapter() -> None:
    wgpu = pytest.importorskip("wgpu")
    try:
        device = wgpu.gpu.request_adapter_sync().request_device_sync()
    except Exception as error:  # no adapter on this machine
        pytest.skip(f"no WebGPU adapter: {error}")
    for extra in ({}, {"USE_VEC4": True, "K_UNROLL": 1}):
        device.create_shader_module(code=expand(MATMUL, {**VALUES, **extra}))

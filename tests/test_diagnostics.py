"""Naga's errors, as produced by this machine's device, turned into diagnostics a model can act on.

Every error text here comes from a real ``create_shader_module`` /
``create_compute_pipeline`` call, except one snapshot of codespan's secondary
``-`` markers, which Naga's WGSL front end does not draw today.
"""

from __future__ import annotations

import os
import re

import pytest

from vajra_tui.engine.admission.contract import prelude, stitch
from vajra_tui.engine.wgsl.diagnostics import (
    LineMap,
    diagnostics_from_error,
    format_for_model,
    parse_naga,
)
from vajra_tui.engine.wgsl.sanitize import sanitize
from vajra_tui.engine.workloads import get_workload

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")

IO = ("@group(0) @binding(0) var<storage, read> a: array<f32>;\n"
      "@group(0) @binding(1) var<storage, read_write> o: array<f32>;\n")


@pytest.fixture(scope="module")
def device():
    wgpu = pytest.importorskip("wgpu")
    return wgpu.gpu.request_adapter_sync().request_device_sync()


def error_of(device, source: str) -> str:
    """The compiler's text for ``source`` (shader module, then pipeline)."""
    try:
        module = device.create_shader_module(code=source)
        device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
    except Exception as exc:  # noqa: BLE001 - wgpu raises GPUValidationError and friends
        return str(exc)
    raise AssertionError("expected a compile error")


def diagnose(device, body: str):
    """Compile ``body`` alone (no prelude) and return its diagnostics."""
    text = error_of(device, body)
    return text, diagnostics_from_error(text, prelude_lines=0, compiled_body=body, original_body=body)


def line_of(body: str, needle: str) -> int:
    return next(n for n, text in enumerate(body.splitlines(), 1) if needle in text)


LET_ASSIGN = "@compute @workgroup_size(1)\nfn main() {\n  let acc = 0.0;\n  acc = acc + 1.0;\n}\n"
LESS = ("@compute @workgroup_size(1)\nfn main() {\n  var s = 0.0;\n"
        "  for (var i = 0; i < 4u; i++) { s += 1.0; }\n}\n")
CALL = IO + ("fn f(x: f32) -> f32 { return x; }\n@compute @workgroup_size(1)\n"
             "fn main(@builtin(local_invocation_index) l: u32) {\n  let i = l;\n  o[l] = a[i] + f(1u);\n}\n")


# ---- parse_naga -----------------------------------------------------------------------------

def test_parse_error_labels_snippets_and_notes(device):
    [msg] = parse_naga(error_of(device, LET_ASSIGN))
    assert msg.kind == "parse" and msg.headline == "invalid left-hand side of assignment"
    assert [(lb.line, lb.column, lb.text, lb.snippet) for lb in msg.labels] == [
        (3, 7, "this is an immutable binding", "acc"),
        (4, 3, "cannot assign to this expression", "acc"),
    ]
    assert msg.notes == ["consider declaring `acc` with `var` instead of `let`"]
    assert msg.location == (3, 7) and msg.frame[4] == "  acc = acc + 1.0;"


def test_validation_error_without_wgpu_boilerplate_or_repeated_causes(device):
    [msg] = parse_naga(error_of(device, LESS))
    assert msg.kind == "validation" and msg.headline == "Entry point main at Compute is invalid"
    [label] = msg.labels
    assert (label.line, label.column, label.snippet) == (4, 19, "i < 4u")
    assert re.fullmatch(r"naga::ir::Expression \[\d+\]", label.text)
    assert len(msg.notes) == 2  # the indented repeat after the frame is not read twice


def test_labels_sharing_a_caret_run_on_continuation_lines(device):
    """``^^^^^`` over ``f(1u)`` with ``│ │`` pointers: two labels, the inner one is ``1u``."""
    [msg] = parse_naga(error_of(device, CALL))
    assert [(lb.column, lb.snippet) for lb in msg.labels] == [(17, "f(1u)"), (19, "1u")]
    assert msg.labels[0].text == "invalid function call"


def test_two_labels_on_one_line_inline_and_hanging(device):
    body = "@compute @workgroup_size(1)\nfn main() {\n  let x = select(1.0, 2u, true);\n}\n"
    [msg] = parse_naga(error_of(device, body))
    assert [(lb.column, lb.snippet, lb.text) for lb in msg.labels] == [
        (18, "1.0", "reject value of type `{AbstractFloat}`"), (23, "2u", "accept value of type `u32`")]


def test_unlabelled_span_and_three_labels(device):
    body = "@compute @workgroup_size(1)\nfn main() {\n  let v = max(1.0, 2u);\n}\n"
    [msg] = parse_naga(error_of(device, body))
    assert [(lb.snippet, lb.text) for lb in msg.labels] == [
        ("max", ""), ("1.0", "this argument has type {AbstractFloat}, which constrains subsequent arguments"),
        ("2u", "argument #2 has type u32")]


def test_multi_line_spans_in_one_and_two_margins(device):
    body = ("fn f(a: i32, b: u32) -> bool {\n  return (a <\n     b);\n}\n"
            "@compute @workgroup_size(1)\nfn main() {\n  _ = f(1, 2u);\n}\n")
    [msg] = parse_naga(error_of(device, body))
    function, expression = msg.labels
    assert function.multiline and (function.line, function.column) == (1, 1)
    assert function.snippet.startswith("fn f(a: i32, b: u32) -> bool {")
    assert (expression.line, expression.column, expression.snippet) == (2, 11, "a < b")


def test_elided_lines_and_tab_columns(device):
    far = "@compute @workgroup_size(1)\nfn main() {\n  let acc = 0.0;\n" + \
          "".join(f"  var p{n} = 1.0;\n" for n in range(6)) + "  acc = acc + 1.0;\n}\n"
    [msg] = parse_naga(error_of(device, far))
    assert [lb.line for lb in msg.labels] == [3, 10]
    tabbed = LESS.replace("  ", "\t")
    [msg] = parse_naga(error_of(device, tabbed), tabbed)  # codespan draws a tab as 4 columns
    assert (msg.labels[0].column, msg.labels[0].snippet) == (18, "i < 4u") and msg.location == (4, 18)


def test_pipeline_error_has_no_frame(device):
    [msg] = parse_naga(error_of(device, "@compute @workgroup_size(1024, 2)\nfn main() {\n}\n"))
    assert msg.kind == "pipeline" and msg.labels == []
    assert msg.headline.startswith("Shader entry point's workgroup size [1024, 2, 1]")


def test_secondary_markers_snapshot():
    """codespan draws secondary labels with ``-``; Naga's WGSL errors use ``^`` only today."""
    text = ("Shader '' parsing error: example\n  ┌─ wgsl:2:3\n  │\n2 │   x = y + z;\n"
            "  │   ^   - secondary here\n  │   │\n  │   primary here\n")
    [msg] = parse_naga(text)
    assert [(lb.column, lb.snippet, lb.text) for lb in msg.labels] == [
        (3, "x", "primary here"), (7, "y", "secondary here")]


# ---- diagnostics_from_error -------------------------------------------------------------------

def test_assignment_to_let_points_at_the_assignment(device):
    _, [d] = diagnose(device, LET_ASSIGN)
    assert (d.line, d.column) == (4, 3) and d.source_line == "  acc = acc + 1.0;"
    assert "invalid left-hand side of assignment" in d.message and "cannot assign" in d.message
    assert [(lb.line, lb.column) for lb in d.labels] == [(3, 7), (4, 3)]
    assert d.notes == ["consider declaring `acc` with `var` instead of `let`"]


@pytest.mark.parametrize("body,needle,column", [
    ("@compute @workgroup_size(1)\nfn main() {\n  let x = 1.0;\n  let x = 2.0;\n}\n", "let x = 2.0", 7),
    (IO + "@compute @workgroup_size(1)\nfn main(@builtin(local_invocation_index) l: u32) {\n"
     "  var x: f32 = 0.0;\n  x = l;\n}\n", "x = l;", 3),
    ("@compute @workgroup_size(1)\nfn main() {\n  let a = vec2<f32>(1.0);\n  var b = vec2<i32>(1);\n"
     "  let c = dot(a, b);\n}\n", "dot(a, b)", 11),
])
def test_primary_is_the_use_not_the_declaration(device, body, needle, column):
    """redefinition, a mistyped assignment whose value Naga locates at its declaration, a builtin call."""
    _, [d] = diagnose(device, body)
    assert (d.line, d.column) == (line_of(body, needle), column)
    assert len(d.labels) == 2


def test_expression_ids_become_source_text(device):
    _, [d] = diagnose(device, LESS)
    assert (d.line, d.column) == (4, 19)
    assert d.message == "`i < 4u`: operator `<` can't work with `i` (i32) and `4u` (u32)"
    assert d.labels[0].text == "`i < 4u`"


def test_call_argument_mismatch_names_callee_argument_and_parameter(device):
    _, [d] = diagnose(device, CALL)
    assert d.message == "call to `f` is invalid: argument 0 (`1u`) doesn't match parameter `x: f32` of `f`"
    assert (d.line, d.column) == (line_of(CALL, "f(1u)"), 17)


@pytest.mark.parametrize("body,expected", [
    ("@compute @workgroup_size(1)\nfn main() {\n  let m = mat4x4<f32>();\n  let v = vec3<f32>();\n"
     "  let r = m * v;\n}\n", "operator `*` can't work with `m` (mat4x4<f32>) and `v` (vec3<f32>)"),
    ("@compute @workgroup_size(1)\nfn main() {\n  let v = vec3<f32>(1.0) + vec2<f32>(1.0);\n}\n",
     "`vec3<f32>(1.0)` (vec3<f32>) and `vec2<f32>(1.0)` (vec2<f32>)"),
    ("fn f(a: i32, b: u32) -> bool {\n  return a < b;\n}\n@compute @workgroup_size(1)\nfn main() {\n"
     "  _ = f(1, 2u);\n}\n", "in function `f`: `a < b`: operator `<`"),
    ("fn g(x: u32) -> u32 {\n  if (x > 1u) { return 1u; }\n}\n@compute @workgroup_size(1)\nfn main() {\n"
     "  _ = g(1u);\n}\n", "in function `g`: a `return` without a value"),
    ("@group(0) @binding(0) var<uniform> u: array<f32>;\n@compute @workgroup_size(1)\nfn main() {\n"
     "  _ = u[0];\n}\n", "global variable `u`: Alignment requirements for address space `uniform`"),
    ("struct S { a: array<f32>, b: f32 }\n@group(0) @binding(0) var<storage, read> s: S;\n"
     "@compute @workgroup_size(1)\nfn main() {\n  _ = s.b;\n}\n",
     "type `S`: Field 'a' can't be dynamically-sized"),
    ("@compute @workgroup_size(1)\nfn main() {\n  var a: array<f32, 4>;\n  let v = a[1.0];\n}\n",
     "`1.0` can't be used as an index"),
])
def test_validation_jargon_is_rewritten(device, body, expected):
    _, [d] = diagnose(device, body)
    assert expected in d.message
    assert not re.search(r"\[\d+\]|Scalar|naga::ir|Some\(", d.message), d.message


def test_store_to_read_only_and_atomics_misuse(device):
    _, [d] = diagnose(device, IO + "@compute @workgroup_size(1)\n"
                      "fn main(@builtin(local_invocation_index) l: u32) {\n  a[l] = 1.0;\n}\n")
    assert d.message.startswith("cannot write to `a[l]`") and (d.line, d.column) == (5, 3)
    body = "var<workgroup> c: u32;\n@compute @workgroup_size(1)\nfn main() {\n  atomicAdd(&c, 1u);\n}\n"
    _, [d] = diagnose(device, body)
    assert "non-atomic" in d.message and (d.line, d.column) == (4, 13)
    body = ("@group(0) @binding(0) var<storage, read> c: array<atomic<u32>>;\n@compute @workgroup_size(1)\n"
            "fn main() {\n  atomicAdd(&c[0], 1u);\n}\n")
    _, [d] = diagnose(device, body)
    assert d.message == "global variable `c` is used for read and write, which its declaration does not allow"


def test_errors_without_a_location(device):
    body = "// sizes\n@compute @workgroup_size(1024, 2)\nfn main() {\n}\n"
    _, [d] = diagnose(device, body)
    assert (d.line, d.column) == (2, 10) and "exceeds this adapter's limits" in d.message
    body = "@compute @workgroup_size(1)\nfn main() {\n  var x = 1u;\n  if (x) { x = 2u; }\n}\n"
    _, [d] = diagnose(device, body)
    assert (d.line, d.column) == (1, 1) and "is not a `bool`" in d.message
    body = "@compute @workgroup_size(1)\nfn main(@builtin(local_invocation_id) l: u32) {\n}\n"
    _, [d] = diagnose(device, body)
    assert (d.line, d.column) == (2, 18) and "it must be vec3<u32>" in d.message


# ---- the prelude --------------------------------------------------------------------------------

SGEMM = get_workload("sgemm")
SIZE = SGEMM.size("64x64x64")


def stitched_error(device, body: str):
    st = stitch(SGEMM, SIZE, body)
    text = error_of(device, st.source)
    compiled = "".join(st.source.splitlines(True)[st.prelude_lines:])
    return text, diagnostics_from_error(text, prelude_lines=st.prelude_lines, compiled_body=compiled,
                                        original_body=body)


def test_error_inside_the_prelude_points_at_the_body_declaration(device):
    body = "// ok\nalias u32 = f32;\n@compute @workgroup_size(1)\nfn main() {\n}\n"
    _, [d] = stitched_error(device, body)
    assert d.message.startswith("[prelude] the type of `M` is expected to be `f32`")
    assert (d.line, d.column) == (2, 7) and d.labels[0].line == 0
    assert "prelude line 2: const M: u32 = 64u;" in d.notes


def test_redeclared_prelude_name_lands_in_the_body(device):
    _, [d] = stitched_error(device, "const M: u32 = 3u;\n@compute @workgroup_size(1)\nfn main() {\n}\n")
    assert (d.line, d.column) == (1, 7) and d.message == "redefinition of `M`"
    assert [lb.line for lb in d.labels] == [0, 1] and any("prelude" in n for n in d.notes)


def test_body_errors_skip_the_prelude_lines(device):
    text, [d] = stitched_error(device, LESS)
    assert "┌─ :" in text and (d.line, d.column) == (4, 19)


def test_prelude_only_error_without_body_match_goes_to_line_one(device):
    body = ("@compute @workgroup_size(1)\nfn main() {\n}\n"
            "fn vajra_tile(w: vec3<u32>) -> vec2<u32> { return w.xy; }\n")
    _, [d] = stitched_error(device, body)
    assert (d.line, d.column) == (4, 4) and d.message == "redefinition of `vajra_tile`"


# ---- the sanitizer ------------------------------------------------------------------------------

EARLY_RETURN = """\
// tile: 16x16
var<workgroup> As: array<array<f32, 16>, 16>;
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let row = gid.y;
    let col = gid.x;
    if (row >= M || col >= N) {
        return;
    }
    var acc = 0.0;
    for (var t = 0u; t < K; t = t + 16u) {
        As[lid.y][lid.x] = A[row * K + t + lid.x];
        workgroupBarrier();
        for (var k = 0u; k < 16u; k++) {
            acc += As[lid.y][k] * B[(t + k) * N + col];
        }
        workgroupBarrier();
    }
    C[row * N + col] = acc * 1u;
}
"""


def sanitized(body: str) -> str:
    fixed = sanitize(body, prelude=prelude(SGEMM, SIZE, (1, 1), 1, set()))
    assert fixed.repaired and fixed.source != body
    return fixed.source


def test_error_in_a_sanitizer_guard_lands_on_the_original_line(device):
    """The store is moved two lines down and re-indented inside ``if (_vajra_active) {``."""
    new = sanitized(EARLY_RETURN)
    assert line_of(new, "C[row * N + col]") == line_of(EARLY_RETURN, "C[row * N + col]") + 2
    st = stitch(SGEMM, SIZE, new)
    text = error_of(device, st.source)
    d, = diagnostics_from_error(text, prelude_lines=st.prelude_lines,
                                compiled_body="".join(st.source.splitlines(True)[st.prelude_lines:]),
                                original_body=EARLY_RETURN)
    assert (d.line, d.column) == (20, 5) and d.source_line == "    C[row * N + col] = acc * 1u;"
    assert [(lb.line, lb.column) for lb in d.labels] == [(20, 5), (20, 24)]
    assert "cannot convert elements of `u32` to `f32`" in d.message


def test_validation_error_after_the_inserted_flag_line(device):
    body = EARLY_RETURN.replace("var k = 0u;", "var k = 0;").replace(" * 1u;", ";") \
        .replace("(t + k)", "(t + u32(k))")
    new = sanitized(body)
    st = stitch(SGEMM, SIZE, new)
    text = error_of(device, st.source)
    compiled = "".join(st.source.splitlines(True)[st.prelude_lines:])
    d, = diagnostics_from_error(text, prelude_lines=st.prelude_lines, compiled_body=compiled,
                                original_body=body)
    assert (d.line, d.column) == (15, 25) and "`k < 16u`" in d.message
    assert d.source_line == "        for (var k = 0; k < 16u; k++) {"


def test_line_map_of_sanitizer_insertions():
    new = sanitized(EARLY_RETURN)
    lm = LineMap(3, new, EARLY_RETURN)
    lines = new.splitlines()
    at: dict[str, int] = {}
    for n, text in enumerate(lines):
        at.setdefault(text.strip(), n + 1 + 3)  # compiled numbering: 3 prelude lines first
    assert lm.line(2) is None and lm.position(1, 5) is None
    assert lm.line(at["var _vajra_active: bool = true;"]) == 8  # the `if` it was written for
    assert lm.line(at["_vajra_active = false;"]) == 9  # was `return;`
    assert lm.line(at["if (_vajra_active) {"]) == 20  # the guarded statement
    closing = max(n for n, text in enumerate(lines) if text == "    }") + 1 + 3
    assert lm.line(closing) == 20  # a closing brace belongs to what it closes
    assert lm.line(at["workgroupBarrier();"]) == 14
    assert lm.line(at["acc += As[lid.y][k] * B[(t + k) * N + col];"]) == 16


# ---- format_for_model ---------------------------------------------------------------------------

def test_format_for_model(device):
    _, diags = diagnose(device, LESS)
    assert format_for_model(diags, LESS) == (
        "line 4:19: `i < 4u`: operator `<` can't work with `i` (i32) and `4u` (u32)\n"
        "    4 |   for (var i = 0; i < 4u; i++) { s += 1.0; }\n"
        "      |                   ^^^^^^"
    )
    _, diags = diagnose(device, LET_ASSIGN)
    block = format_for_model(diags, LET_ASSIGN)
    assert block.splitlines()[2] == "      |   ^^^"
    assert "  line 3:7: this is an immutable binding" in block
    assert block.endswith("  note: consider declaring `acc` with `var` instead of `let`")

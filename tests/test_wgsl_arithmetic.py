"""The front end's arithmetic is WGSL's: sizes, the limit check and the zero-init use exact values.

Python's integers disagree with WGSL (``u32(-1i)`` is -1, ``%`` floors), so a kernel could
declare 131 KB of workgroup memory that the front end sized as 16 bytes: it ran past the
adapter's limit and the zero-init cleared only its first element. Values that cannot be
evaluated with certainty refuse the kernel; any input costs a bounded time; one-token values
that used to crash the run reject only their candidate.
"""

from __future__ import annotations

import json
import re
import time
from typing import NamedTuple

import pytest

from conftest import KERNELS, keep_away_from_the_user
from vajra_tui.cli.main import main
from vajra_tui.engine.admission.contract import ContractError, stitch
from vajra_tui.engine.wgsl.consteval import ConstEvalError, evaluate
from vajra_tui.engine.wgsl.memory import workgroup_memory_problem, workgroup_vars, zero_init_source
from vajra_tui.engine.wgsl.tokens import significant_tokens
from vajra_tui.engine.workloads import get_workload

LAVAPIPE_LIMIT = 32768  # lavapipe's max-compute-workgroup-storage-size
SOFTMAX_ROW = (KERNELS / "softmax_row.wgsl").read_text()


def value(expr: str, known: dict | None = None) -> str:
    return str(evaluate(significant_tokens(expr), known or {}))


@pytest.mark.parametrize("expr, wgsl", [
    ("u32(-1i)", "4294967295u"),
    ("-7 / 2", "-3"), ("-7 % 2", "-1"), ("7 % -2", "1"), ("-7i / 2i", "-3i"), ("-7i % 2i", "-1i"),
    ("4294967295u + 1u", "0u"), ("2147483647i + 1i", "-2147483648i"),
    ("65536u * 65536u", "0u"), ("0u - 1u", "4294967295u"), ("100000i * 100000i", "1410065408i"),
    ("1u << 31u", "2147483648u"), ("0xffffffffu >> 1u", "2147483647u"), ("-8i >> 1u", "-4i"),
    ("(u32(-1i) >> 19u) + 2u", "8193u"), ("i32(4294967295u)", "-1i"), ("~0u", "4294967295u"),
    ("3 + 4u", "7u"), ("1 << 40", "1099511627776"), ("9223372036854775807", "9223372036854775807"),
])
def test_constants_evaluate_as_wgsl_does(expr, wgsl):
    assert value(expr) == wgsl


@pytest.mark.parametrize("expr, why", [
    ("1u << 32u", "not below 32"), ("1i >> 32u", "not below 32"), ("1 << 3000000000", "not below 64"),
    ("u32(-1)", "does not fit in u32"), ("-1 + 1u", "does not fit in u32"),
    ("9223372036854775807 + 1", "does not fit in an abstract integer"),
    ("4294967296u", "does not fit in u32"), ("2147483648i", "does not fit in i32"),
    ("5 / 0", "divides by zero"), ("5u % 0u", "divides by zero"), ("1i + 1u", "mixes i32 and u32"),
    ("-1u", "unary minus"), ("1.5", "not an integer"), ("UNKNOWN", "cannot evaluate"),
    ("(" * 300 + "1" + ")" * 300, "nested deeper"), ("9" * 5000, "5000 digits"),
])
def test_what_wgsl_refuses_or_the_front_end_cannot_know_is_an_error(expr, why):
    with pytest.raises(ConstEvalError, match=why):
        evaluate(significant_tokens(expr), {})


def test_sizes_and_zero_init_use_the_exact_length():
    src = "const LEN: u32 = (u32(-1i) >> 19u) + 2u;\nvar<workgroup> big: array<vec4<f32>, LEN>;\n" \
          "@compute @workgroup_size(64) fn main() { big[0] = vec4<f32>(); }\n"
    (var,) = workgroup_vars(src)
    assert var.type is not None and var.type.count == 8193 and var.bytes == 8193 * 16
    assert "vajra_i0 < 8193u" in zero_init_source(src)
    message, line, _ = workgroup_memory_problem(src, LAVAPIPE_LIMIT)
    assert "131088 bytes exceeds the adapter's limit of 32768" in message and line == 2


TWO_PASSES = """var<workgroup> left: array<f32, 6144>;
var<workgroup> right: array<f32, 6144>;
fn stage(i: u32) -> f32 { return left[i]; }
@compute @workgroup_size(64) fn first(@builtin(local_invocation_index) i: u32) { left[i] = stage(i) + 1.0; }
@compute @workgroup_size(64) fn second(@builtin(local_invocation_index) i: u32) { right[i] = 2.0; }
"""


def test_each_entry_point_counts_the_workgroup_memory_it_uses():
    """A pipeline holds the workgroup variables its entry point names, itself or through the
    functions it calls: two passes of one module with 24 KB each fit a 32 KB adapter, and each
    pipeline zeroes only its own (zeroing both would make each pipeline hold 48 KB)."""
    assert [v.name for v in workgroup_vars(TWO_PASSES, entry="first")] == ["left"]  # through stage()
    assert [v.name for v in workgroup_vars(TWO_PASSES, entry="second")] == ["right"]
    assert workgroup_memory_problem(TWO_PASSES, LAVAPIPE_LIMIT) is None
    zeroed = zero_init_source(TWO_PASSES, entry_name="second")
    helper = zeroed[zeroed.index("fn vajra_zero_workgroup"):]
    assert "right[" in helper and "left" not in helper
    both = TWO_PASSES + "@compute @workgroup_size(64) fn both() { left[0] = right[1]; }\n"
    message, line, _ = workgroup_memory_problem(both, LAVAPIPE_LIMIT)
    assert "49152 bytes in entry point `both` exceeds" in message and line == 1
    assert workgroup_memory_problem(both, LAVAPIPE_LIMIT, entry="first") is None


def test_a_variable_no_entry_point_uses_is_not_counted():
    src = "var<workgroup> unused: array<f32, 16384>;\nvar<workgroup> t: array<f32, 64>;\n" \
          "@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) { t[i] = 1.0; }\n"
    assert workgroup_memory_problem(src, LAVAPIPE_LIMIT) is None
    zeroed = zero_init_source(src)
    assert "unused" not in zeroed[zeroed.index("fn vajra_zero_workgroup"):]


@pytest.mark.parametrize("decl, why", [
    ("const N: u32 = 1u << 40u;\nvar<workgroup> a: array<f32, N>;", "`N`: shift count 40"),
    ("var<workgroup> a: array<f32, u32(-1)>;", "u32(-1)"),
    ("var<workgroup> a: array<f32, 7 % 0>;", "divides by zero"),
    ("var<workgroup> a: array<f32, -7 % 2>;", "is -1: it must be positive"),
    ("const F = 2.0;\nvar<workgroup> a: array<f32, u32(F)>;", "`F`: 2.0 is not an integer literal"),
    ("struct S { @align(0) a: f32, }\nvar<workgroup> s: S;", "@align of S.a"),
    ("struct S { @align(12) a: f32, }\nvar<workgroup> s: S;", "power of two"),
    ("struct S { @size(2) a: f32, }\nvar<workgroup> s: S;", "smaller than"),
    ("var<workgroup> a: array<f32, 0x7fffffffffffffff>;", "bytes any workgroup memory could hold"),
])
def test_a_size_that_cannot_be_known_refuses_the_kernel_naming_it(decl, why):
    body = decl + "\n@compute @workgroup_size(1) fn main() {}\n"
    sm = get_workload("softmax")
    with pytest.raises(ContractError, match="cannot size workgroup variable") as info:
        stitch(sm, {"ROWS": 8, "COLS": 64}, body, max_workgroup_bytes=LAVAPIPE_LIMIT)
    assert why in str(info.value) and "\n" not in str(info.value)


def test_a_struct_doubling_forty_deep_is_sized_at_once():
    structs = ["struct S0 { a: f32, b: f32, }"]
    structs += [f"struct S{i} {{ a: S{i - 1}, b: S{i - 1}, }}" for i in range(1, 41)]
    src = "\n".join(structs) + "\nvar<workgroup> w: S40;\n@compute @workgroup_size(1) fn main() {}\n"
    start = time.perf_counter()
    (var,) = workgroup_vars(src)
    assert time.perf_counter() - start < 2.0  # it took over 120 s before
    assert var.bytes is None and "any workgroup memory could hold" in var.problem
    small = "\n".join(structs[:9]) + "\nvar<workgroup> w: S8;\n@compute @workgroup_size(1) fn main() {}\n"
    assert workgroup_vars(small)[0].bytes == 8 * 2 ** 8


def test_type_nesting_is_bounded():
    deep = "array<" * 200 + "f32" + ", 1>" * 200
    (var,) = workgroup_vars(f"var<workgroup> a: {deep};\n@compute @workgroup_size(1) fn main() {{}}\n")
    assert var.bytes is None and "nested deeper than 64" in var.problem


class Benched(NamedTuple):
    results: dict[str, dict]  # by the kernel file's stem
    workgroup_storage: int  # the adapter's max-compute-workgroup-storage-size, as the run saw it


@pytest.fixture(scope="module")
def benched(tmp_path_factory: pytest.TempPathFactory) -> Benched:
    """One ``bench`` of every kernel the refusal tests below judge, and the limit it judged them by.

    Each kernel is refused by the front end, before the GPU sees it, so what a bench of its own
    cost was a worker, a calibration check and a baseline: eight times over. One run that holds
    them all must still exit 0 with each one rejected on its own, which is the property the
    one-token tests assert (a value that crashed the run would fail every test here). The limit
    is read from the run's recording (its device), not from a second process listing adapters."""
    import contextlib
    import io

    from vajra_tui.engine.events import SessionStarted
    from vajra_tui.engine.store.record import read_recording

    folder = tmp_path_factory.mktemp("wgsl-kernels")
    paths = [KERNELS / "wrapped_length.wgsl", KERNELS / "memoizing_wrapped_length.wgsl"]
    for name, ((old, new), _) in ONE_TOKEN.items():
        path = folder / f"{name}.wgsl"
        path.write_text(SOFTMAX_ROW.replace(old, new))
        paths.append(path)
    out, recording = io.StringIO(), folder / "bench.jsonl"
    with pytest.MonkeyPatch.context() as env:  # conftest's user_dirs is per test: its folders, here
        keep_away_from_the_user(tmp_path_factory.getbasetemp(), env)
        with contextlib.redirect_stdout(out):
            code = main(["bench", "-w", "softmax", "--size", "8x64", *[a for p in paths for a in ("-k", str(p))],
                         "--json", "-q", "--record", str(recording)])
    assert code == 0, out.getvalue()[-2000:]
    results = [r for r in json.loads(out.getvalue())["results"] if r["name"] != "baseline"]
    assert sorted(r["name"] for r in results) == sorted(p.stem for p in paths)
    [started] = [e for e in read_recording(recording)[1] if isinstance(e, SessionStarted)]
    limit = int(started.device.limits.get("max-compute-workgroup-storage-size", 16384))
    return Benched({r["name"]: r for r in results}, limit)


def test_a_wrapped_length_is_refused_on_the_adapters_limit(benched):
    """Sized at its real 8193 elements (132112 bytes with `red`), past any adapter's limit
    (lavapipe: 32 KB, an H200: 48 KB), never guessed as one element."""
    result = benched.results["wrapped_length"]
    assert result["status"] != "verified"
    assert re.search(r"132112 bytes exceeds the adapter's limit of \d+ bytes", result["reason"]), result["reason"]


def test_a_memoizing_kernel_sized_by_a_wrapped_expression_is_refused(benched):
    """32784 bytes: refused where the limit is 32 KB (lavapipe), never verified as fast."""
    if benched.workgroup_storage >= 32784:
        pytest.skip("this adapter's workgroup storage holds the array (an H200: 48 KB); the refusal is "
                    "a 32 KB adapter's, and the whole-array zeroing is tested on its own above")
    result = benched.results["memoizing_wrapped_length"]
    assert result["status"] != "verified" and result["speedup"] is None
    assert "32784 bytes exceeds the adapter's limit of" in result["reason"]


ONE_TOKEN = {
    "align0": (("var<workgroup> red: array<f32, 256>;",
                "struct S { @align(0) a: f32, }\nvar<workgroup> s: S;\nvar<workgroup> red: array<f32, 256>;"),
               "alignment"),
    "wg0": (("@workgroup_size(256)", "@workgroup_size(0, 8)"), "workgroup size"),
    "wg_digits": (("@workgroup_size(256)", "@workgroup_size(" + "9" * 5000 + ", 8)"), "not representable"),
    "wg_hex": (("@workgroup_size(256)", "@workgroup_size(0x" + "f" * 5000 + ", 8)"), "not representable"),
    "len_digits": (("array<f32, 256>", "array<f32, " + "9" * 5000 + ">"), "not representable"),
    "wg_shift": (("@workgroup_size(256)", "@workgroup_size(1 << 3000000000, 8)"), "overflow"),
}


@pytest.mark.parametrize("name", list(ONE_TOKEN))
def test_a_one_token_value_rejects_its_candidate_not_the_run(name, benched):
    _, why = ONE_TOKEN[name]
    result = benched.results[name]
    assert result["status"] == "compile_error" and why in result["reason"].lower()
    assert "\n" not in result["reason"]


@pytest.mark.parametrize("name, why", [
    ("align0", "@align of S.a"), ("wg0", "x is 0: each dimension must be at least 1"),
    ("wg_digits", "5000 digits"), ("wg_hex", "5000 digits"), ("len_digits", "5000 digits"),
    ("wg_shift", "shift count 3000000000"),
])
def test_the_contract_names_each_one_token_problem(name, why):
    (old, new), _ = ONE_TOKEN[name]
    with pytest.raises(ContractError) as info:
        stitch(get_workload("softmax"), {"ROWS": 8, "COLS": 64}, SOFTMAX_ROW.replace(old, new),
               max_workgroup_bytes=LAVAPIPE_LIMIT)
    assert why in str(info.value) and "\n" not in str(info.value) and len(str(info.value)) < 400


def test_a_huge_tile_header_is_one_line():
    body = SOFTMAX_ROW.replace("// tile: COLS x 1", "// tile: " + "9" * 5000 + " x 1")
    with pytest.raises(ContractError, match="largest tile side"):
        stitch(get_workload("softmax"), {"ROWS": 8, "COLS": 64}, body)


MAIN = "\n@compute @workgroup_size(64) fn main() {}\n"
HOSTILE = {
    "unterminated consts": "const A = 1\n" * 3500 + MAIN,
    "unterminated vars": "var<workgroup> a: f32\n" * 1800 + MAIN,
    "parentheses": "const A = " + "(" * 20000 + ";" + MAIN,
    "a long sum": "const A = " + " + ".join(["1"] * 10000) + ";" + MAIN,
    "a struct chain": "struct S0 { a: f32, }\n" + "".join(f"struct S{i} {{ a: S{i - 1}, }}\n" for i in range(1, 1500))
                      + "var<workgroup> w: S1499;" + MAIN,
    "nested arrays": "var<workgroup> w: " + "array<" * 5000 + "f32" + ",1>" * 5000 + ";" + MAIN,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_sources_cost_little(name):
    start = time.perf_counter()
    try:
        stitch(get_workload("softmax"), {"ROWS": 8, "COLS": 64}, HOSTILE[name], max_workgroup_bytes=LAVAPIPE_LIMIT)
    except ContractError as exc:
        assert "\n" not in str(exc)
    assert time.perf_counter() - start < 3.0


def test_an_unforeseen_front_end_error_rejects_only_its_candidate(monkeypatch):
    from vajra_tui.engine.admission import staging

    def broken(*args, **kwargs):
        raise ZeroDivisionError("integer division or modulo by zero")

    monkeypatch.setattr(staging, "stitch", broken)
    staged = staging.stage_text(get_workload("softmax"), {"ROWS": 8, "COLS": 64}, SOFTMAX_ROW, False, False,
                                {}, staging.Limits())
    assert staged.stitched is None and staged.contract is not None
    assert "ZeroDivisionError" in staged.contract.message and "\n" not in staged.contract.message


@pytest.mark.parametrize("brk", ["\v", "\f", "\x85", "\u2028", "\u2029", "\r"])
def test_a_line_comment_ends_at_every_wgsl_line_break(brk):
    """WGSL (and naga, Tint) end a `//` comment at VT, FF, NEL, LS and PS as at LF: text after
    one is code. Read as comment, `8u // x<VT>* 2000u` was 8 elements, not 16000 (64 KB on
    lavapipe's 32 KB limit, verified and run; its zero-init cleared 8)."""
    src = f"const LEN: u32 = 8u // hidden{brk}* 2000u\n;\nvar<workgroup> scratch: array<f32, LEN>;\n"
    (var,) = workgroup_vars(src)
    assert var.bytes == 64000
    assert workgroup_memory_problem(src, LAVAPIPE_LIMIT) is not None


@pytest.mark.parametrize("decl, var_type", [
    ("alias vec4f = array<vec4<u32>, 64>;", "array<vec4f, 40>"),
    ("alias vec4f = array<vec4<u32>, 64>;\nstruct S { pad: vec4f }", "array<S, 40>"),
    ("struct vec4u { a: array<u32, 256> }", "array<vec4u, 40>"),
    ("alias f32 = array<u32, 256>;", "array<f32, 40>"),
])
def test_a_module_name_shadows_the_predeclared_type_it_reuses(decl, var_type):
    """WGSL lets a module declare `vec4f` or `f32` itself; sized as the built-in, 40 960 bytes
    were 640 and ran on a 32 KB adapter."""
    src = f"{decl}\nvar<workgroup> scratch: {var_type};\n"
    (var,) = workgroup_vars(src)
    assert var.bytes == 40960, var

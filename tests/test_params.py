"""The pieces of a user workload that need no GPU: the // tune: language, the limits that rule
a configuration out, exported defaults, integer poisoning, and the declaration's own checks."""

from __future__ import annotations

import asyncio

from pathlib import Path

import numpy as np
import pytest

from vajra_tui import Binding, Workload, WorkloadError
from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.export.wgsl import with_defaults
from vajra_tui.engine.sources.params import ParamsError, ParamsSource, evaluate, read_space, ruled_out
from vajra_tui.engine.gpu.verify import INT_POISON, compare, poison_word
from vajra_tui.engine.workloads import loader

EXAMPLES = Path(__file__).parents[1] / "examples" / "workloads"
TILED = (EXAMPLES / "transpose_tiled.wgsl").read_text()
KERNEL = """\
// tune: WG = 64, 128, 256
// tune: R = 1..4
// require: WG * R <= 512 && !(R == 3)
override WG: u32 = 128;
override R: u32 = 1;
override SCALE: f32 = 1.0;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) { B[g.x] = A[g.x] * SCALE; }
"""


def test_the_space_lives_in_the_kernel():
    space = read_space("k", KERNEL, ("ROWS", "COLS"))
    assert space.axes == {"WG": (64, 128, 256), "R": (1, 2, 3, 4)} and space.size == 12
    kept = [c for c in space.configurations() if not space.excluded_by(c, {})]
    assert {(c["WG"], c["R"]) for c in kept} == {(64, 1), (64, 2), (64, 4), (128, 1), (128, 2),
                                                 (128, 4), (256, 1), (256, 2)}
    assert space.key({"WG": 64, "R": 2}) == "k WG=64 R=2"
    assert read_space("plain", "@compute @workgroup_size(1) fn main() {}").size == 1


@pytest.mark.parametrize("line, needle", [
    ("// tune: NOPE = 1, 2", "k:1: // tune: NOPE: the kernel declares no `override NOPE`"),
    ("// tune: WG = 64, 64", "want distinct values"),
    ("// tune: WG = 64, fast", "'fast' is not a number"),
    ("// tune: WG 64", "want NAME = value"),
    ("// require: ROWS * Q < 4", "k:1: // require: Q is neither a // tune: name nor a size constant"),
    ("// require: __import__('os')", "cannot read"),
    ("// require: WG.real > 1", "cannot read"),
])
def test_a_malformed_header_names_the_kernel_and_line(line, needle):
    with pytest.raises(ParamsError, match=None) as info:
        read_space("k", f"{line}\noverride WG: u32 = 64;\n@compute @workgroup_size(WG) fn main() {{}}\n",
                   ("ROWS",))
    assert needle in str(info.value) and str(info.value).startswith("k:")


def test_require_reads_wgsl_and_python_operators():
    assert evaluate("A * B <= 1024 && A % 32 == 0", {"A": 64, "B": 16})
    assert not evaluate("!(A > 8) || B == 3", {"A": 64, "B": 16})
    assert evaluate("max(A, B) == 64 and A != B", {"A": 64, "B": 16})
    assert not evaluate("A / 0 > 1", {"A": 1})  # an arithmetic error excludes, never raises


def test_the_adapters_limits_rule_configurations_out_before_they_run():
    w = loader.load_file(EXAMPLES / "transpose.py")
    size = w.size("ROWS=64,COLS=64")
    tiny = DeviceInfo(name="tiny", limits={"max-compute-invocations-per-workgroup": 128,
                                           "max-compute-workgroup-storage-size": 2048})
    assert ruled_out(w, size, TILED, {"TILE": 16, "ROWS_PER_THREAD": 2}, tiny) is None
    assert "128 invocations" not in (ruled_out(w, size, TILED, {"TILE": 16, "ROWS_PER_THREAD": 1}, tiny) or "")
    assert "256 invocations" in ruled_out(w, size, TILED, {"TILE": 16, "ROWS_PER_THREAD": 1}, tiny)
    assert "workgroup storage of 4224 bytes" in ruled_out(w, size, TILED, {"TILE": 32, "ROWS_PER_THREAD": 8}, tiny)
    src = ParamsSource(w, size, [read_space("t", TILED, w.dims)], budget=12)
    assert src.search == "exhaustive" and src.planned_rounds == 1
    from vajra_tui.engine.candidate import GenerationContext

    picks = asyncio.run(src.propose(GenerationContext(workload=w.info(size), device=tiny)))
    summary = src.summary()
    assert summary["space"] == 12 and summary["measured"] == len(picks) == 12 - summary["limits_out"]
    assert summary["limits_out"] > 0 and all(c.constants and c.strategy == "params" for c in picks)
    assert ParamsSource(w, size, [read_space("t", TILED, w.dims)], budget=5).search == "optuna"


def test_exported_wgsl_takes_the_values_as_its_defaults():
    out = with_defaults(KERNEL, {"WG": 256, "R": 2, "SCALE": 0.5})
    assert "override WG: u32 = 256u;" in out and "override R: u32 = 2u;" in out
    assert "override SCALE: f32 = 0.5f;" in out and "@workgroup_size(WG)" in out
    assert with_defaults("override N: i32;\n", {"N": 3}) == "override N: i32 = 3i;\n"
    assert with_defaults(KERNEL, {}) is KERNEL


def test_integer_outputs_get_a_pattern_per_seed():
    """An element left holding the poison is "never written" unless it is the right answer:
    then the other seed's pattern gives it away."""
    ref = np.array([5, 0xFFFFFFFF, 7], dtype=np.float64)
    first = np.array([5, INT_POISON[0], 7], dtype=np.uint32)  # the 2nd element was never written
    assert compare(first, ref, 0.0, 0.0, "u32", poison_word("u32", 0)).passed  # right by accident
    second = np.array([5, INT_POISON[1], 7], dtype=np.uint32)
    v = compare(second, ref, 0.0, 0.0, "u32", poison_word("u32", 1))
    assert not v.passed and v.unwritten == 1 and "never written" in v.reason
    assert poison_word("u32", 0) != poison_word("u32", 1) == poison_word("i32", 1)
    half = np.array([1.0, np.nan], dtype=np.float16)
    half.view(np.uint16)[1] = poison_word("f16") & 0xFFFF
    v = compare(half, np.array([1.0, 2.0]), 1e-3, 1e-3, "f16")
    assert not v.passed and v.unwritten == 1


def _declare(**change) -> Workload:
    fields = dict(name="w", summary="", dims=("N",), presets={"seed": {"N": 4}},
                  bindings=(Binding(0, "X", "read"), Binding(1, "Y", "read_write")),
                  buffer_len=lambda s: {"X": s["N"], "Y": s["N"]}, make_inputs=lambda s, r: {},
                  reference=lambda s, x: np.zeros(s["N"]), flops=lambda s: 1.0,
                  output_grid=lambda s: (s["N"], 1), baseline="@compute fn main() {}", atol=0.0)
    return Workload(**{**fields, **change})


@pytest.mark.parametrize("change, field", [
    ({"name": "../x"}, "name"), ({"dims": ("N", "N")}, "dims"), ({"dims": ("TILES_X",)}, "dims"),
    ({"presets": {"large": {"N": 4}}}, "presets"), ({"bindings": (Binding(0, "X", "read"),)}, "bindings"),
    ({"bindings": (Binding(0, "X", "read"), Binding(0, "Y", "read_write"))}, "bindings"),
    ({"bindings": (Binding(0, "N", "read_write"),)}, "bindings"), ({"atol": -1.0}, "atol"),
    ({"rtol": 2.0}, "rtol"), ({"baseline": "no kernel"}, "baseline"), ({"flops": 3.0}, "flops"),
])
def test_the_declaration_is_checked_field_by_field(change, field):
    with pytest.raises(WorkloadError) as info:
        _declare(**change)
    assert info.value.field == field and str(info.value).startswith(f"{field}: ")


def test_what_the_functions_return_is_checked_at_the_size_that_runs():
    w = _declare(make_inputs=lambda s, r: {"X": np.zeros(s["N"], np.float64)})
    with pytest.raises(WorkloadError, match="make_inputs: 'X' is float64, binding X is f32"):
        w.checked_inputs({"N": 4}, np.random.default_rng(0))
    w = _declare(reference=lambda s, x: np.zeros(s["N"], np.float32))
    with pytest.raises(WorkloadError, match="reference: 'Y' is float32: compute it in float64"):
        w.checked_references({"N": 4}, {})
    w = _declare(buffer_len=lambda s: {"X": 0, "Y": 4})
    with pytest.raises(WorkloadError, match="length of 'X' is 0"):
        w.checked_lengths({"N": 4})
    assert _declare(atol=lambda s: 1e-3 * s["N"]).tolerance({"N": 4}) == pytest.approx(4e-3)


def test_a_template_takes_its_first_values_when_a_require_names_size_constants():
    """A `// require:` may name the size (split-K: the splits must fit the scratch); filling a
    template reads only the `// tune:` lines, so {{CR}} still gets its first value."""
    from vajra_tui.engine.sources.space import first_values

    src = ("override KS: u32 = 4u;\n// tune: KS = 2, 4\n// require: KS * S <= 4096\n"
           "// tune: CR = 16, 8\nconst CR: u32 = {{CR}}u;\n")
    assert first_values(src) == {"KS": 2, "CR": 16}

"""A user's workload file with a broken declaration (or reference) is one line naming the file and
the field, exit 2, never a traceback: ``defaults``, ``presets``, ``broadcast`` and the keyword's
own line are checked when the file loads; the reference's dtype and finiteness where it is
computed, before any kernel is judged against it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vajra_tui.cli.main import main
from vajra_tui.engine.workloads import loader
from vajra_tui.engine.workloads.errors import WorkloadError

FAST = ["--reps", "3", "--warmup", "1", "--no-cache"]
ROWHIST = Path(__file__).parents[1] / "examples" / "workloads" / "rowhist.py"

# Y = 2 X over an H x W grid; each test swaps one line (a field, or what reference returns).
SCALE = '''\
"""Y = 2 X, f32, over an H x W grid: a user's workload."""
import numpy as np

from vajra_tui import Binding, Workload


def make_inputs(size, rng):
    return {"X": rng.standard_normal(size["H"] * size["W"]).astype(np.float32)}


def reference(size, inputs):
    return 2.0 * inputs["X"].astype(np.float64)


BASELINE = """
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = vajra_tile(wid);
    let x = t.x * 64u + lid.x;
    if (t.y >= TILES_Y || x >= W) { return; }
    Y[t.y * W + x] = 2.0 * X[t.y * W + x];
}
"""

WORKLOAD = Workload(
    name="scale2",
    summary="Y = 2 X, f32",
    dims=("H", "W"),
    presets={"seed": {"H": 8, "W": 64}},
    bindings=(Binding(0, "X", "read"), Binding(1, "Y", "read_write")),
    buffer_len=lambda s: {"X": s["H"] * s["W"], "Y": s["H"] * s["W"]},
    make_inputs=make_inputs,
    reference=reference,
    flops=lambda s: float(s["H"] * s["W"]),
    output_grid=lambda s: (s["W"], s["H"]),
    baseline=BASELINE,
    atol=1e-6,
    rtol=1e-5,
)
'''
PRESETS = '    presets={"seed": {"H": 8, "W": 64}},\n'
RTOL = "    rtol=1e-5,\n"
RETURN = '    return 2.0 * inputs["X"].astype(np.float64)\n'


def _file(tmp_path: Path, name: str, old: str = "", new: str = "") -> Path:
    assert not old or old in SCALE, old
    path = tmp_path / f"{name}.py"
    path.write_text(SCALE.replace(old, new) if old else SCALE)
    return path


def _with(tmp_path: Path, name: str, field_line: str) -> Path:
    """The workload with ``field_line`` (one keyword) added after rtol."""
    return _file(tmp_path, name, RTOL, RTOL + field_line)


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def _refused(path: Path) -> str:
    """Loading ``path`` fails in one WorkloadError line that names the file."""
    with pytest.raises(WorkloadError) as info:
        loader.load_file(path)
    text = str(info.value)
    assert "\n" not in text and text.startswith(str(path)), text
    return text


def _bench_refused(path: Path, capsys, *args: str) -> str:
    """``bench -w path`` exits 2 with one stderr line naming the file, and no traceback."""
    code = main(["bench", "-w", str(path), "-q", *FAST, *args])
    out, err = capsys.readouterr()
    err = err.strip()
    assert code == 2, (code, err)
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"vajra-tui: {path}"), err
    return err


def test_the_base_file_loads(tmp_path):
    w = loader.load_file(_file(tmp_path, "good"))
    assert w.name == "scale2" and w.size("16") == {"H": 16, "W": 64}


# ---- 1. defaults: a {dim: value} dict -------------------------------------------------------
def test_defaults_given_as_a_tuple_is_one_line_at_load_not_a_traceback(tmp_path, capsys):
    path = _with(tmp_path, "lap2d_def", '    defaults=("W",),\n')
    err = _bench_refused(path, capsys, "--size", "64")
    assert f"{path}:{_line_of(path, 'defaults=')}: defaults: " in err and "dict" in err, err
    err = _bench_refused(path, capsys, "--size", "64", "--json")  # and no half JSON on stdout
    assert "defaults:" in err


@pytest.mark.parametrize(("line", "needle"), [
    ('    defaults={"Q": 5},\n', "'Q' is not in dims (H, W)"),
    ('    defaults={"w": 5},\n', "did you mean 'W'?"),
    ('    defaults={"W": 0},\n', "'W' is 0: want a positive integer"),
    ('    defaults={"W": 2.5},\n', "'W' is 2.5: want a positive integer"),
    ('    defaults={"W": True},\n', "'W' is True: want a positive integer"),
])
def test_defaults_name_declared_dims_with_positive_integers(tmp_path, line, needle):
    text = _refused(_with(tmp_path, "bad_defaults", line))
    assert "defaults: " in text and needle in text, text


def test_valid_defaults_fill_the_dims_a_shorter_size_leaves_out(tmp_path):
    w = loader.load_file(_with(tmp_path, "good_defaults", '    defaults={"W": 32},\n'))
    assert w.size("16") == {"H": 16, "W": 32}
    # named, or from Python: the same dims left out get the same values (H=16 alone gave W its seed value)
    assert w.size("H=16") == {"H": 16, "W": 32} and w.size({"H": 16}) == {"H": 16, "W": 32}


# ---- 2. presets: exactly the declared dims ------------------------------------------------
def test_a_preset_with_an_undeclared_dim_is_refused_at_load(tmp_path, capsys):
    path = _file(tmp_path, "axpy", PRESETS, '    presets={"seed": {"H": 8, "W": 64, "K": 3}},\n')
    err = _bench_refused(path, capsys)
    assert "presets: 'seed' gives 'K', which is not in dims (H, W)" in err, err
    near = _file(tmp_path, "axpy_near", PRESETS,
                 '    presets={"seed": {"H": 8, "W": 64}, "large": {"H": 8, "W": 64, "w": 1}},\n')
    assert "'large' gives 'w'" in _refused(near) and "did you mean 'W'?" in _refused(near)


def test_a_preset_missing_a_dim_is_refused_at_load(tmp_path):
    text = _refused(_file(tmp_path, "short", PRESETS, '    presets={"seed": {"H": 8}},\n'))
    assert "presets: 'seed' must give every dim (H, W) a positive int" in text, text


# ---- 3. broadcast: a tuple of dim names, never a string ------------------------------------
def test_broadcast_given_as_a_string_is_refused(tmp_path, capsys):
    path = _with(tmp_path, "bcast", '    broadcast="HW",\n')
    err = _bench_refused(path, capsys, "--size", "64")
    assert f"{path}:{_line_of(path, 'broadcast=')}: broadcast: 'HW' is a string" in err, err
    assert "want a tuple of dim names" in err, err
    text = _refused(_with(tmp_path, "bcast_int", "    broadcast=5,\n"))
    assert "broadcast: " in text and "want a tuple of dim names" in text, text


def test_a_tuple_broadcast_still_sets_its_dims_together(tmp_path):
    w = loader.load_file(_with(tmp_path, "bcast_ok", '    broadcast=("H", "W"),\n'))
    assert w.size("16") == {"H": 16, "W": 16}


# ---- 4. the reference's dtype ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["np.int32", "np.int64", "bool"])
def test_an_integer_reference_for_a_float_output_is_refused(tmp_path, dtype):
    w = loader.load_file(_file(tmp_path, f"ref_{dtype[3:]}", RETURN,
                               f'    return (2.0 * inputs["X"].astype(np.float64)).astype({dtype})\n'))
    size = w.size("seed")
    with pytest.raises(WorkloadError) as info:
        w.checked_references(size, w.checked_inputs(size, np.random.default_rng(1)))
    assert str(info.value).startswith("reference: 'Y' is ") and "compute it in float64" in str(info.value)


def test_an_integer_reference_for_a_float_output_is_exit_2_naming_the_file(tmp_path, capsys):
    path = _file(tmp_path, "ref_int", RETURN, '    return np.rint(inputs["X"]).astype(np.int64)\n')
    err = _bench_refused(path, capsys, "--size", "8x64")
    assert "reference: 'Y' is int64" in err and "baseline rejected" not in err, err


def test_an_integer_reference_for_an_integer_output_stays_allowed():
    w = loader.load_file(ROWHIST)
    size = w.size("ROWS=4,COLS=64,BINS=8")
    refs = w.checked_references(size, w.checked_inputs(size, np.random.default_rng(1)))
    assert all(r.dtype == np.float64 for r in refs.values())


# ---- 5. a reference holding NaN or inf ----------------------------------------------------
@pytest.mark.filterwarnings("ignore:invalid value encountered in log")
def test_a_nan_in_the_reference_is_one_line_naming_the_output_and_index(tmp_path, capsys):
    path = _file(tmp_path, "ref_log", RETURN, '    return np.log(inputs["X"].astype(np.float64))\n')
    w = loader.load_file(path)
    size = w.size("8x64")
    x = w.checked_inputs(size, np.random.default_rng(1))["X"]
    with pytest.raises(WorkloadError) as info:
        w.checked_references(size, {"X": x})
    first = int(np.argmax(x < 0))
    assert str(info.value) == (f"reference: output 'Y' holds NaN at {first} "
                               "(non-finite values cannot be verified)")
    err = _bench_refused(path, capsys, "--size", "8x64")
    assert f"{path}: reference: output 'Y' holds NaN at " in err and "baseline rejected" not in err, err


def test_an_inf_in_the_reference_is_refused(tmp_path):
    w = loader.load_file(_file(tmp_path, "ref_inf", RETURN,
                               '    y = 2.0 * inputs["X"].astype(np.float64)\n    y[317] = -np.inf\n'
                               '    return y\n'))
    size = w.size("seed")
    with pytest.raises(WorkloadError) as info:
        w.checked_references(size, w.checked_inputs(size, np.random.default_rng(1)))
    assert str(info.value) == "reference: output 'Y' holds -inf at 317 (non-finite values cannot be verified)"


# ---- 6. a misspelt keyword, at its own line ------------------------------------------------
def test_a_misspelt_field_is_reported_at_its_own_line(tmp_path, capsys):
    path = _file(tmp_path, "m_typo", RTOL, "    rtoll=1e-5,\n")
    line = _line_of(path, "rtoll=")
    assert line != _line_of(path, "WORKLOAD = Workload(")
    assert _refused(path) == f"{path}:{line}: rtoll: is no Workload field (did you mean 'rtol'?)"
    err = _bench_refused(path, capsys)
    assert err == f"vajra-tui: {path}:{line}: rtoll: is no Workload field (did you mean 'rtol'?)", err

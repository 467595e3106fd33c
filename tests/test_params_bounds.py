"""Hostile `// tune:` and `// require:` lines are refused in one bounded step, never a hang,
a 10 GB allocation or a traceback: read_space says why (kernel:line), the CLI exits 2.

The CLI cases run in a child process with a wall-clock timeout and an address-space cap,
so that the code they guard against (a hang, a 10 GB string) fails the test instead of
stalling or swapping the machine."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import child_pythonpath

from vajra_tui.cli.main import main
from vajra_tui.engine.sources.params import ParamsError, evaluate, read_space, ruled_out
from vajra_tui.engine.workloads import loader

ROOT = Path(__file__).parents[1]
TRANSPOSE = ROOT / "examples" / "workloads" / "transpose.py"
BODY = """\
override WG: u32 = 64;
@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>) { let t = vajra_tile(wid); }
"""
QUICK = 2.0  # seconds: generous on a loaded 2-core machine; the defects took 16 s or forever
DIGITS = "1" + "0" * 4400  # past Python's 4300-digit int-string conversion limit

HOSTILE_REQUIRES = {
    "tower": "9**9**9 > WG",
    "big string": "'a' * 10**10 != ''",
    "big shift": "(1 << 10**10) > WG",
    "unary minuses": "-" * 100_000 + "WG > 0",
    "long chain": " + ".join(["WG"] * 20_000) + " > 0",
    "deep parentheses": "(" * 5_000 + "WG" + ")" * 5_000 + " > 0",
    "big literal": "WG < " + DIGITS,
}
HOSTILE_TUNES = {
    "long decimal": f"WG = {DIGITS}, 8",
    "long hex": f"WG = 0x{'f' * 4400}, 8",
    "long range": f"WG = 1..{DIGITS}",
    "over 2^64": "WG = 8, 36893488147419103232",
    "infinity": "WG = 8, 1e999",
    "not a number": "WG = 8, nan",
}


def _kernel(header: str) -> str:
    return f"// tune: WG = 8, 16\n{header}\n{BODY}"


def _one_line_about(message: str, where: str) -> None:
    assert message.startswith(where), message[:300]
    assert "\n" not in message and len(message) < 300, message[:300]


@pytest.mark.parametrize("name", HOSTILE_REQUIRES)
def test_a_hostile_require_is_refused_when_read(name):
    start = time.monotonic()
    with pytest.raises(ParamsError) as info:
        read_space("k", _kernel(f"// require: {HOSTILE_REQUIRES[name]}"), ("ROWS", "COLS"))
    assert time.monotonic() - start < QUICK
    _one_line_about(str(info.value), "k:2: // require:")


@pytest.mark.parametrize("name", HOSTILE_TUNES)
def test_a_hostile_tune_value_is_refused_when_read(name):
    start = time.monotonic()
    with pytest.raises(ParamsError) as info:
        read_space("k", f"// tune: {HOSTILE_TUNES[name]}\n{BODY}")
    assert time.monotonic() - start < QUICK
    _one_line_about(str(info.value), "k:1: // tune:")


def test_a_long_blank_header_line_is_read_in_linear_time():
    """`(.*?)\\s*$` backtracked over trailing blanks: 40 KB of them took seconds."""
    start = time.monotonic()
    space = read_space("k", f"// tune: WG = 8, 16{' ' * 40_000}\n// require: WG > 0{' ' * 40_000}\n{BODY}")
    assert time.monotonic() - start < QUICK and space.axes == {"WG": (8, 16)}
    with pytest.raises(ParamsError, match="k:1: // require: .* characters"):
        read_space("k", f"// require: WG > 0{' ' * 40_000}x\n{BODY}")


def test_the_evaluator_stays_within_its_limits():
    """Ordinary arithmetic still reads; results past 2^64 are refused, not computed."""
    assert evaluate("2 ** 63 < WG * 2 ** 60", {"WG": 16}) and evaluate("1 << 64 > 0", {})
    assert evaluate("(-1) ** 10**18 == 1", {}) and not evaluate("WG // 0 > 1", {"WG": 1})
    for text in ("WG ** 100 > 0", "WG << 100 > 0", "2**40 * 2**40 > WG", "WG * 3**40 > 0"):
        start = time.monotonic()
        with pytest.raises(ParamsError, match="2\\^64"):
            evaluate(text, {"WG": 16})
        assert time.monotonic() - start < QUICK
    with pytest.raises(ParamsError, match="2\\^64"):
        evaluate("R > 0", {"R": 1 << 70})  # a size constant past the limit is refused too


def test_a_configuration_past_the_limits_names_the_kernel_and_line():
    space = read_space("k", _kernel("// require: 2 ** (WG * 8) > 0"))
    with pytest.raises(ParamsError) as info:
        space.excluded_by({"WG": 16}, {})
    _one_line_about(str(info.value), "k:2: // require:")
    assert "WG=16" in str(info.value)


def test_a_zero_workgroup_axis_is_ruled_out_with_a_reason():
    """A workgroup size comes from an expression over overrides: the configuration it is
    zero (or negative) in is ruled out before it is planned, never divided by."""
    w = loader.load_file(TRANSPOSE)
    size = w.size("ROWS=16,COLS=16")
    split = BODY.replace("@workgroup_size(WG)", "@workgroup_size(WG / R)").replace(
        "override WG", "override R: u32 = 1;\noverride WG")
    for kernel, config in ((split, {"WG": 4, "R": 8}), (BODY, {"WG": 0})):
        why = ruled_out(w, size, kernel, config, None)
        assert "x" in why and "must be at least 1" in why, why
    assert ruled_out(w, size, BODY, {"WG": -8}, None)  # negative: a reason too, never a plan
    assert ruled_out(w, size, split, {"WG": 8, "R": 2}, None) is None


def test_a_zero_workgroup_size_through_the_cli(tmp_path, capsys):
    kernel = tmp_path / "k.wgsl"
    kernel.write_text(f"// tune: WG = 0, 8\n{BODY}")
    assert main(["tune", "-w", str(TRANSPOSE), "--size", "ROWS=16,COLS=16", "--source", "params",
                 "-k", str(kernel), "--json", "-q", "--reps", "3", "--warmup", "1", "--no-cache"]) == 0
    params = json.loads(capsys.readouterr().out)["params"]
    assert params["limits_out"] == 1 and params["measured"] == 1
    assert any("must be at least 1" in why for why in params["ruled_out_because"]), params


CHILD = """\
import sys, time
from vajra_tui.cli.main import main
start = time.monotonic()
status = main(sys.argv[1:])
print(f"elapsed {time.monotonic() - start:.3f}", file=sys.stderr)
sys.exit(status)
"""


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # the 10 GB string fails fast


def _cli(kernel: Path) -> subprocess.CompletedProcess[str]:
    args = ["tune", "-w", str(TRANSPOSE), "--size", "ROWS=16,COLS=16", "--source", "params",
            "-k", str(kernel), "--no-cache", "-q"]
    try:
        return subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True,
                              timeout=60, preexec_fn=_cap_memory, cwd=ROOT,
                              env={**os.environ, "XDG_RUNTIME_DIR": "/tmp", "PYTHONPATH": child_pythonpath()})
    except subprocess.TimeoutExpired:
        pytest.fail("the CLI did not answer within 60 s")


CLI_CASES = {**{f"require: {k}": f"// tune: WG = 8, 16\n// require: {v}" for k, v in HOSTILE_REQUIRES.items()},
             **{f"tune: {k}": f"// tune: {v}" for k, v in HOSTILE_TUNES.items()}}


@pytest.mark.parametrize("case", CLI_CASES)
def test_the_cli_refuses_in_one_line_with_exit_2(case, tmp_path):
    kernel = tmp_path / "k.wgsl"
    kernel.write_text(f"{CLI_CASES[case]}\n{BODY}")
    done = _cli(kernel)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and len(lines) == 2, done.stderr[-2000:]
    assert lines[0].startswith("vajra-tui: k:") and len(lines[0]) < 300, lines[0][:300]
    assert float(lines[1].split()[1]) < QUICK, lines[1]

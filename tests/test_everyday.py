"""Rough edges a newcomer met, each through the real entry point (no GPU needed for most)."""

from __future__ import annotations

import io

import pytest

from vajra_tui.cli.main import main


def test_a_misspelt_flag_is_named_beside_the_missing_one(capsys):
    assert main(["tune", "--wrkload", "sgemm"]) == 2
    err = capsys.readouterr().err
    assert "--wrkload" in err and "did you mean --workload?" in err and len(err.strip().splitlines()) == 1


def test_a_dimension_given_twice_is_refused(capsys):
    assert main(["bench", "-w", "softmax", "--size", "ROWS=64,ROWS=32"]) == 2
    assert "ROWS is given twice" in capsys.readouterr().err


def test_an_empty_kernel_file_says_it_is_empty(capsys, tmp_path):
    empty = tmp_path / "empty.wgsl"
    empty.write_text("\n  \n")
    assert main(["bench", "-w", "softmax", "--size", "8x64", "-k", str(empty), "-q"]) == 2
    err = capsys.readouterr().err
    assert "is empty" in err and "no kernel in response" not in err


def test_bash_completion_offers_the_workload_names(capsys):
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert "_vajra_tui_workloads()" in script and "sgemm" in script and "softmax" in script
    assert "_shtab_vajra_tui_tune__w_COMPGEN=_vajra_tui_workloads" in script


def test_replay_without_a_terminal_plays_headless(capsys):
    """Piped (as under pytest), ``replay FILE`` prints the table instead of starting the TUI."""
    assert main(["replay", "lavapipe-sgemm"]) == 0
    assert "sgemm" in capsys.readouterr().out


def test_a_result_is_said_once_per_outcome():
    """bench printed its user kernel's result line twice: once timed, once with its badge."""
    from vajra_tui.cli.render import ProgressPrinter
    from vajra_tui.engine.events import CandidateFinished, CandidateResult

    out = io.StringIO()
    say = ProgressPrinter(out)
    result = CandidateResult(id="user0", name="mine", status="verified", strategy="user", origin="file: m",
                             generation=1, batch=1, median_ms=1.0)
    say(CandidateFinished(result=result))
    say(CandidateFinished(result=result.model_copy(update={"browser": "browser-valid"})))
    assert out.getvalue().count("result   mine") == 1


def test_one_line_folds_the_unicode_line_separators():
    """A kernel name with U+2028 split the CLI's one-line messages in two."""
    from vajra_tui.safe_text import one_line

    assert one_line("A\u2028B\u2029C\nD") == "A B C D"


def test_a_workload_raising_a_base_exception_is_one_line(capsys, tmp_path):
    """A BaseException subclass from make_inputs killed the GPU worker ("died during prepare")."""
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "workloads" / "transpose.py"
    path = tmp_path / "boom.py"
    path.write_text(example.read_text() + "\n\nclass Boom(BaseException):\n    pass\n\n\n"
                    "def _boom(size, rng):\n    raise Boom('not an Exception')\n\n\n"
                    "import dataclasses\nWORKLOAD = dataclasses.replace(WORKLOAD, make_inputs=_boom)\n")
    assert main(["bench", "-w", str(path), "--size", "ROWS=32,COLS=32", "-q"]) == 2
    err = capsys.readouterr().err
    assert "make_inputs: raised Boom: not an Exception" in err and "died" not in err


def test_a_compiler_message_is_a_short_reason(capsys, tmp_path):
    """A 5000-digit literal made a 5000-character reason; the diagnostics keep the whole message."""
    import json

    kernel = tmp_path / "digits.wgsl"
    kernel.write_text("@compute @workgroup_size(64)\nfn main() {\n    let x = " + "9" * 5000 + ";\n}\n")
    assert main(["bench", "-w", "softmax", "--size", "8x64", "-k", str(kernel), "--json", "-q"]) == 0
    _, cand = json.loads(capsys.readouterr().out)["results"]
    assert cand["status"] != "verified" and len(cand["reason"]) <= 400


@pytest.mark.parametrize(("name", "value", "said"), [
    ("VAJRA_TIMING_REPS", "3", "did you mean VAJRA_TIMING__REPS?"),
    ("VAJRA_VERIFY", "gpux", "VAJRA_VERIFY='gpux': want gpu, cpu, auto or check"),
    ("VAJRA_BUILD_THREADS", "abc", "VAJRA_BUILD_THREADS='abc': want a whole number"),
    ("VAJRA_THEME", "texual-light", "did you mean 'textual-light'?"),
])
def test_a_vajra_variable_that_cannot_be_meant_is_refused(capsys, monkeypatch, name, value, said):
    monkeypatch.setenv(name, value)
    assert main(["config", "show"]) == 2
    assert said in capsys.readouterr().err


def test_a_theme_typo_in_the_config_file_is_refused(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("VAJRA_CONFIG_DIR", str(tmp_path))
    (tmp_path / "config.toml").write_text('theme = "texual-light"\n')
    assert main(["config", "show"]) == 2
    assert "did you mean 'textual-light'?" in capsys.readouterr().err


def test_a_csv_under_proc_says_the_folder_takes_no_files(capsys):
    assert main(["bench", "-w", "softmax", "--csv", "/proc/x.csv"]) == 2
    err = capsys.readouterr().err
    assert "/proc does not take new files" in err and "No such file" not in err


def test_a_second_run_into_the_same_export_folder_is_refused_at_once(capsys, tmp_path):
    """It used to tune to the end and fail then; a lock of a process that is gone is taken over."""
    import subprocess
    import sys
    import time

    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (out / ".vajra-export.lock").write_text(f"{holder.pid}\n")
        start = time.perf_counter()
        assert main(["tune", "-w", "softmax", "--size", "8x64", "--source", "library", "--generations", "0",
                     "--export", str(out), "-q"]) == 2
        assert time.perf_counter() - start < 10  # refused before any tuning
        assert f"another run (process {holder.pid}) is exporting into" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()
    assert main(["tune", "-w", "softmax", "--size", "8x64", "--source", "library", "--generations", "0",
                 "--budget", "2", "--reps", "2", "--warmup", "1", "--export", str(out), "-q"]) == 0
    capsys.readouterr()
    assert not (out / ".vajra-export.lock").exists()  # released at the end of the run


def test_the_default_deadline_is_longer_on_a_software_adapter():
    """Four library kernels were killed at 10 s on a loaded lavapipe; a hung one still dies."""
    from vajra_tui.engine.events import DeviceInfo
    from vajra_tui.engine.session import Session
    from vajra_tui.engine.workloads import get_workload

    w = get_workload("softmax")
    s = Session(w, w.size("8x64"), client=None, emit=lambda e: None)  # type: ignore[arg-type]
    s.device = DeviceInfo(name="llvmpipe", backend="Vulkan", adapter_type="CPU", software=True)
    assert s.deadline_s == 30.0
    s.device = DeviceInfo(name="H200", backend="Vulkan", adapter_type="DiscreteGPU", software=False)
    assert s.deadline_s == 10.0
    s.baseline_ms = 2000.0
    assert s.deadline_s == 40.0  # 20x a slow baseline

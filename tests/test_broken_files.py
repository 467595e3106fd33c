"""Files that are broken: kernel files, output paths and cache folders, through the CLI.

Each is one line on stderr and exit status 2 before anything runs, or (for a damaged
cache, which Vajra can always rebuild) a run that goes on and says what to remove.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from conftest import KERNELS
from vajra_tui.tui.app import run_app
from vajra_tui.cli.main import main
from vajra_tui.settings import Settings

FAST = ["--size", "32", "--warmup", "0", "--reps", "1", "-q"]


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("vajra-tui: ") and "Traceback" not in err, err
    return err


def test_a_kernel_with_a_utf8_bom_compiles(tmp_path, capsys):
    kernel = tmp_path / "bom.wgsl"
    kernel.write_bytes(b"\xef\xbb\xbf" + (KERNELS / "sgemm_tiled.wgsl").read_bytes())
    assert main(["bench", "-w", "sgemm", *FAST, "--json", "-k", str(kernel)]) == 0
    _, bom = json.loads(capsys.readouterr().out)["results"]
    assert bom["status"] == "verified", bom["reason"]


@pytest.mark.parametrize("make,needle", [
    (lambda d: Path("/dev/zero"), "not a regular file"),
    (lambda d: d, "is a directory"),
    (lambda d: (d / "huge.wgsl").write_bytes(b"// x\n" * 300_000) and d / "huge.wgsl", "limited to 1048576 bytes"),
    (lambda d: (d / "latin1.wgsl").write_bytes(b"// caf\xe9\n") and d / "latin1.wgsl", "not UTF-8 text (byte 7"),
    (lambda d: os.mkfifo(d / "pipe.wgsl") or d / "pipe.wgsl", "not a regular file"),
])
def test_kernel_files_that_cannot_be_kernels(tmp_path, capsys, make, needle):
    path = make(tmp_path)
    began = time.monotonic()
    assert main(["bench", "-w", "sgemm", *FAST, "-k", str(path)]) == 2
    assert needle in one_error_line(capsys)
    assert time.monotonic() - began < 5  # refused at once: /dev/zero and a FIFO are never read


def _file(tmp_path: Path) -> Path:
    (tmp_path / "a-file").write_text("not a folder\n")
    return tmp_path / "a-file"


@pytest.mark.parametrize("argv,needle", [
    (lambda t: ["bench", "-w", "sgemm", "--record", "/proc/vajra/run.jsonl"], "cannot write recording under /proc"),
    (lambda t: ["bench", "-w", "sgemm", "--record", str(_file(t) / "run.jsonl")], "is a file, not a directory"),
    (lambda t: ["bench", "-w", "sgemm", "--record", str(t)], "is a directory; give a file name"),
    (lambda t: ["tune", "-w", "sgemm", "--source", "library", "--export", str(_file(t))],
     "is a file, not a directory"),
    (lambda t: ["tune", "-w", "sgemm", "--source", "library", "--export", str(_file(t) / "out")],
     "is a file, not a directory"),
    (lambda t: ["tune", "-w", "sgemm", "--source", "library", "--export", "/proc/vajra-out"], "cannot write"),
])
def test_bad_output_paths_are_refused_before_the_run(tmp_path, capsys, argv, needle):
    began = time.monotonic()
    assert main(argv(tmp_path)) == 2
    assert needle in one_error_line(capsys)
    assert time.monotonic() - began < 5  # no GPU worker was started, no tune ran
    assert not list(tmp_path.rglob("*.partial"))


def test_an_export_that_would_overwrite_is_refused_before_the_run(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "sgemm.wgsl").write_text("my own kernel\n")
    assert main(["tune", "-w", "sgemm", "--source", "library", "--export", str(out)]) == 2
    assert "sgemm.wgsl exists" in one_error_line(capsys)
    assert (out / "sgemm.wgsl").read_text() == "my own kernel\n"


def test_an_interrupted_recording_is_never_overwritten(tmp_path, capsys):
    partial = tmp_path / "run.jsonl.partial"
    partial.write_text("an interrupted run\n")
    assert main(["bench", "-w", "sgemm", "--record", str(tmp_path / "run.jsonl")]) == 2
    assert "interrupted recording" in one_error_line(capsys)
    assert partial.read_text() == "an interrupted run\n"


def test_the_tui_refuses_bad_paths_before_it_starts(tmp_path, capsys):
    assert run_app(Settings(), workload="sgemm", record=_file(tmp_path) / "x.jsonl") == 2
    assert "is a file, not a directory" in one_error_line(capsys)
    assert run_app(Settings(), workload="sgemm", kernels=[Path("/dev/zero")]) == 2
    assert "not a regular file" in one_error_line(capsys)


@pytest.mark.parametrize("damage,needle", [
    ("calibration_dir", "calibration.json is a directory, not a file: remove it"),
    ("calibration_empty_dir", None),  # rebuilt: nothing to say
    ("cache_is_a_file", "is a file, not a directory: remove it"),
    ("log_dir", "worker.log is a directory, not a file: remove it"),
])
def test_a_damaged_cache_never_stops_a_run(tmp_path, capsys, monkeypatch, request, damage, needle):
    cache = tmp_path / "cache"
    if damage == "calibration_dir":
        (cache / "calibration.json" / "inside").mkdir(parents=True)
    elif damage == "calibration_empty_dir":
        (cache / "calibration.json").mkdir(parents=True)
    elif damage == "cache_is_a_file":
        cache.write_text("not a folder\n")
    else:
        (cache / "worker.log" / "inside").mkdir(parents=True)
        # only the log is damaged: a calibration the run can check beside it (the others'
        # damage leaves none to read, and measuring the roofline again is what they test)
        (cache / "calibration.json").write_text(request.getfixturevalue("calibration"), encoding="utf-8")
    monkeypatch.setenv("VAJRA_CACHE_DIR", str(cache))
    for run in range(2 if damage == "calibration_dir" else 1):  # and the run after (said once a process)
        assert main(["bench", "-w", "sgemm", *FAST, "--json"]) == 0
        captured = capsys.readouterr()
        assert json.loads(captured.out)["results"][0]["status"] == "verified"
        assert "Traceback" not in captured.err
        warnings = [line for line in captured.err.splitlines() if line.startswith("vajra-tui: warning:")]
        if needle is None or run:
            assert not warnings, warnings
        else:
            assert len(warnings) == 1 and needle in warnings[0], warnings
    if damage == "calibration_empty_dir":
        assert json.loads((cache / "calibration.json").read_text())  # rebuilt as the file it should be

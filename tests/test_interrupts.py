"""Ctrl-C and SIGTERM in the middle of a headless tune: one line, the status a shell expects,
the recording kept, and with ``--json`` still one document on stdout.

Before, SIGTERM ended the process where it stood (no line, nothing on stdout for a script,
the GPU worker left to notice on its own), and Ctrl-C exited 130 without a word.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from conftest import cache_with_this_runs_calibration


def _tune_then(signum: int, tmp_path, *flags: str) -> subprocess.CompletedProcess[str]:
    """Start a library tune, send ``signum`` once generation 1 has begun, and collect it."""
    env = {**os.environ, "VAJRA_CACHE_DIR": str(cache_with_this_runs_calibration(tmp_path / "cache")),
           "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "vajra_tui", "tune", "-w", "sgemm", "--size", "128", "--source", "library",
            "--reps", "3", "--warmup", "0", "--record", str(tmp_path / "run.jsonl"), *flags]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    deadline = time.monotonic() + 120
    for line in proc.stderr:  # progress lines (stderr is a pipe, so plain lines, not a bar)
        seen.append(line)
        if "-- generation 1" in line or time.monotonic() > deadline:
            break
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(argv, proc.returncode, out, "".join(seen) + err)


def test_ctrl_c_mid_tune_is_one_line_and_still_one_json_document(tmp_path):
    done = _tune_then(signal.SIGINT, tmp_path, "--json")
    assert done.returncode == 130, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == "vajra-tui: interrupted: kernels measured before it are kept (--resume skips them)"
    doc = json.loads(done.stdout)  # one document, whatever ended the run
    assert doc["winner"] is None and doc["incomplete"] == "interrupted"
    assert any(r["name"] == "baseline" and r["status"] == "verified" for r in doc["results"])
    assert (tmp_path / "run.jsonl").is_file(), "the recording is kept"


def test_sigterm_mid_tune_ends_it_as_ctrl_c_does(tmp_path):
    done = _tune_then(signal.SIGTERM, tmp_path, "--no-cache")  # no cache: nothing said to be kept
    assert done.returncode == 143, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == "vajra-tui: terminated (SIGTERM)"
    assert (tmp_path / "run.jsonl").is_file(), "the recording is kept"



def test_a_program_that_calls_main_keeps_its_own_sigterm_handler(capsys):
    """The routing lasts as long as the command: an embedding's handler is put back after it."""
    from vajra_tui.cli.main import main

    seen: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        mine = signal.getsignal(signal.SIGTERM)
        assert main(["config", "show"]) == 0  # a headless command: SIGTERM was routed while it ran
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, before)

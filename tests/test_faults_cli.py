"""Faults an audit found in the CLI (and the one engine message behind one of them), each
through ``main()`` where a command shows it.

- ``--json`` left no JSON document on stdout for a flag argparse refused, a broken config,
  or any error of ``fleet``, ``doctor`` and ``lock diff``.
- Shell completion of ``-w`` offered the workload names but no ``.py`` files.
- A workload of no arithmetic showed GFLOP/s (0.0 on every row) in its table, and at 80
  columns dropped GB/s, the number that judges it.
- "run vajra-tui setup-node" was said twice in one browser verdict, and twice by ``doctor``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from vajra_tui.cli.main import main

from test_faults_tui import FIXTURE, SETUP_NODE, edited_fixture, no_arithmetic

EXIT_USAGE = 2
EXAMPLES = Path(__file__).parents[1] / "examples" / "workloads"
TRANSPOSE, TILED = EXAMPLES / "transpose.py", EXAMPLES / "transpose_tiled.wgsl"


def one_document(out: str) -> dict[str, Any]:
    """stdout as one JSON document (json.loads refuses a second one after the first)."""
    return json.loads(out)


# ---- 7. --json: one error document, whatever failed ------------------------------------------
@pytest.mark.parametrize("argv,said", [
    (["bench", "-w", "sgemm", "--reps", "0", "--json"], "--reps"),  # refused by argparse
    (["tune", "-w", "sgemm", "--json", "--wrkload", "x"], "--wrkload"),  # a typo, with --json before it
    (["doctor", "--json", "--bogus"], "--bogus"),
    (["devices", "--jso", "--nope"], "--nope"),  # argparse takes --jso for --json
])
def test_a_usage_error_while_parsing_flags_leaves_one_json_document(argv, said, capsys):
    assert main(argv) == EXIT_USAGE
    captured = capsys.readouterr()
    doc = one_document(captured.out)
    assert said in doc["error"] and doc["winner"] is None and doc["results"] == []
    assert said in captured.err  # the one stderr line is still there


def test_without_json_a_usage_error_prints_nothing_on_stdout(capsys):
    assert main(["bench", "-w", "sgemm", "--reps", "0"]) == EXIT_USAGE
    assert capsys.readouterr().out == ""


def test_lock_diff_with_json_says_its_error_as_json(tmp_path, capsys):
    assert main(["lock", "diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--json"]) == EXIT_USAGE
    doc = one_document(capsys.readouterr().out)
    assert "a.json" in doc["error"] and "cannot read lockfile" in doc["error"]


def test_fleet_with_json_says_its_error_as_json(tmp_path, capsys):
    """Refused before any cluster is asked: the workload is checked first."""
    assert main(["fleet", "-w", "no-such-workload", "--json", "--out", str(tmp_path / "f.json")]) == EXIT_USAGE
    doc = one_document(capsys.readouterr().out)
    assert "unknown workload 'no-such-workload'" in doc["error"] and doc["results"] == []


def test_a_broken_config_with_json_says_its_error_as_json(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VAJRA_CONFIG_DIR", str(tmp_path))
    (tmp_path / "config.toml").write_text("[timing]\nrepz = 3\n")
    assert main(["bench", "-w", "sgemm", "--json"]) == EXIT_USAGE
    doc = one_document(capsys.readouterr().out)
    assert "repz" in doc["error"]


def test_an_error_inside_a_run_is_still_one_document(capsys):
    """bench answers with its own results; cli.main's answer for every command does not add a second."""
    assert main(["bench", "-w", "sgemm", "--size", "0", "--json"]) == EXIT_USAGE
    doc = one_document(capsys.readouterr().out)
    assert "must be a positive integer" in doc["error"]


# ---- 6. completion of -w: names and .py files ----------------------------------------------
def _bash_completes(script: str, word: str, cwd: Path) -> list[str]:
    probe = (f'source "$1"\nCOMP_WORDS=(vajra-tui bench -w "{word}"); COMP_CWORD=3\n'
             f'COMP_LINE="vajra-tui bench -w {word}"; COMP_POINT=${{#COMP_LINE}}\n'
             f'_shtab_vajra_tui vajra-tui "{word}" -w\nprintf "%s\\n" "${{COMPREPLY[@]}}"\n')
    path = cwd / "completion.bash"
    path.write_text(script)
    done = subprocess.run(["bash", "-c", probe, "probe", str(path)], cwd=cwd, capture_output=True, text=True,
                          timeout=30, check=True)
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_bash_completes_workload_names_and_py_files(tmp_path, capsys):
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    (tmp_path / "mine.py").write_text("")
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "theirs.py").write_text("")
    every = _bash_completes(script, "", tmp_path)
    assert {"sgemm", "softmax", "mine.py", "more"} <= set(every) and "notes.txt" not in every, every
    assert _bash_completes(script, "m", tmp_path) == ["mine.py", "more"]
    assert _bash_completes(script, "more/", tmp_path) == ["more/theirs.py"]
    assert _bash_completes(script, "sg", tmp_path) == ["sgemm"]


def test_zsh_completes_workload_names_and_py_files(capsys):
    assert main(["completion", "zsh"]) == 0
    script = capsys.readouterr().out
    spec = next(line for line in script.splitlines() if line.strip().startswith("{--workload,-w}") and "tune" not in line)
    action = spec.split("]:workload:", 1)[1]
    assert "_alternative" in action and "sgemm" in action and r"_files -g \*.py" in action, action
    assert ":" not in action.replace(r"\:", ""), "an unescaped colon splits the _arguments spec"


# ---- 3. no arithmetic: GB/s in the CLI's table ---------------------------------------------
def test_a_workload_of_no_arithmetic_shows_gbps_at_80_columns(monkeypatch, capsys):
    """The example transpose, benched on the real adapter as the audit did: its table at 80
    columns has GB/s where GFLOP/s (0.0 on every row) was, and keeps it."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["bench", "-w", str(TRANSPOSE), "--size", "ROWS=64,COLS=48", "-k", str(TILED),
                 "-q", "--reps", "3", "--warmup", "1", "--no-cache"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "kernel" in line and "median" in line)
    assert "GB/s" in header and "GFLOP/s" not in header, out
    assert "GB/s," not in next((line for line in out.splitlines() if line.startswith("not shown")), ""), out


def test_a_workload_with_arithmetic_keeps_gflops(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["replay", str(FIXTURE), "--headless"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if "kernel" in line and "median" in line)
    assert "GFLOP/s" in header
    path = edited_fixture(tmp_path / "copy.jsonl", no_arithmetic)  # the same run, had it no arithmetic
    assert main(["replay", str(path), "--headless"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if "kernel" in line and "median" in line)
    assert "GFLOP/s" not in header and "GB/s" in header


# ---- 4. the setup-node advice, once ---------------------------------------------------------
def test_a_browser_verdict_says_the_setup_node_advice_once(monkeypatch):
    """Dawn not installed (Node's check) and no transpiler for Chromium: both reasons end in
    the same advice, and the verdict the table, report and lockfile show says it once."""
    from vajra_tui.engine.browser import badge, judge, sidecar
    from vajra_tui.engine.browser.transpile import NO_TRANSPILER
    from vajra_tui.engine.browser.verdict import judge_in_browser
    from vajra_tui.engine.events import CandidateResult

    monkeypatch.setattr(judge, "browser_judgement", lambda *args: (False, NO_TRANSPILER))
    monkeypatch.setattr(badge, "browser_badge", lambda source: {"status": "unchecked", "messages": [],
                                                                "reason": sidecar.UNAVAILABLE, "adapter": ""})
    result = CandidateResult(id="c1", name="tiled", status="verified", strategy="user", origin="file: k",
                             generation=1, stitched_source="@compute @workgroup_size(1) fn main() {}")
    told: list[Any] = []
    judged = asyncio.run(judge_in_browser(result, told.append, device=None, info=None,  # type: ignore[arg-type]
                                          workload=None, size={}, seed=1))
    assert judged.browser.startswith("unchecked: browser check unavailable")
    assert judged.browser.count(SETUP_NODE) == 1, judged.browser
    assert "put esbuild or typescript on PATH" in judged.browser  # the other way out is still said
    assert told and told[-1].result.browser == judged.browser


def test_doctor_says_the_setup_node_advice_once(monkeypatch, capsys):
    from vajra_tui.engine.browser import sidecar, transpile

    monkeypatch.setattr(sidecar, "status", lambda: (False, f"{sidecar.UNAVAILABLE} (installs into /x)"))
    monkeypatch.setattr(transpile, "find_transpiler", lambda: ("", ""))
    main(["doctor", "--json"])
    checks = {c["name"]: c["detail"] for c in one_document(capsys.readouterr().out)["checks"]}
    said = " ".join(checks.values())
    assert said.count(SETUP_NODE) == 1, checks
    assert "esbuild" in checks["ts→js"]

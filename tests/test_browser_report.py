"""The browser's verdict reaches every surface (#24): the JSON's results carry judge, adapter,
limits, features and median as the lockfile does; an exported baseline is judged like a
crowned kernel; the one-line summary says a refusal once; and moving the caches does not
turn the judge off.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vajra_tui import fmt
from vajra_tui.cli.main import main
from vajra_tui.engine.browser import sidecar
from vajra_tui.engine.browser.find import find_browser
from vajra_tui.engine.browser.transpile import find_transpiler
from vajra_tui.engine.events import CandidateResult, Diagnostic

pytestmark = pytest.mark.browser_judge  # the judge runs here: these tests assert its verdict (conftest.py)

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "workloads"
JUDGE = "Chromium 156 (system, headless)"


def _needs_a_browser() -> None:
    if not find_browser().ok or not find_transpiler()[0]:
        pytest.skip("no headless Chromium or no TypeScript transpiler here")


def test_an_exported_baseline_is_judged_and_its_verdict_is_in_the_json_table_and_lockfile(tmp_path, capsys):
    """transpose has no library templates, so nothing beats its baseline: --export-baseline
    exports it, and a browser judges it first (it was exported unjudged, silent everywhere)."""
    _needs_a_browser()
    out = tmp_path / "out"
    args = ["tune", "-w", str(EXAMPLES / "transpose.py"), "--size", "64x96", "--source", "library",
            "--generations", "1", "--budget", "2", "--reps", "3", "--warmup", "1", "-q",
            "--export", str(out), "--export-baseline"]
    assert main([*args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    base = next(r for r in doc["results"] if r["name"] == "baseline")
    assert base["browser"] == "browser-valid", base["browser"]
    assert base["browser_judge"] and base["browser_adapter"]
    assert base["browser_limits"]["maxComputeInvocationsPerWorkgroup"] >= 256 and base["browser_features"]
    lock = json.loads((out / "vajra.lock.json").read_text())
    assert lock["entries"][0]["browser"]["status"] == "browser-valid"


def _result(**browser: object) -> CandidateResult:
    return CandidateResult(id="k", name="k", status="verified", **browser)  # type: ignore[arg-type]


def test_the_summary_names_judge_adapter_limits_features_messages_and_time():
    said = fmt.browser_line(_result(
        browser="browser-valid", browser_judge=JUDGE, browser_adapter="swiftshader",
        browser_limits={"maxComputeInvocationsPerWorkgroup": 256, "maxComputeWorkgroupStorageSize": 16384},
        browser_used_features=["subgroups"], browser_ms=1.5,
        browser_messages=[Diagnostic(line=3, column=7, message="unused variable")]))
    for part in (JUDGE, "swiftshader", "256 invocations", "16384 B workgroup storage", "uses subgroups",
                 "1 compile message, first 3:7 unused variable", "1.50 ms there"):
        assert part in said, said


def test_a_refusal_is_said_once_and_never_as_compiling_clean():
    verdict = ("browser-refused: swiftshader in Chromium 156: adapter limit maxComputeInvocationsPerWorkgroup "
               "= 256 is below what this kernel needs (1024)")
    said = fmt.browser_line(_result(browser=verdict, browser_judge=JUDGE, browser_adapter="swiftshader"))
    assert said == f"browser: {verdict}"
    assert fmt.browser_line(_result(browser="unchecked: no browser here")) == "browser: unchecked: no browser here"


def test_moved_caches_still_find_the_users_browser_check(tmp_path, monkeypatch):
    """VAJRA_CACHE_DIR elsewhere (as the README suggests for a separate run) used to hide the
    installed sidecar, so the judge said 'unchecked'; the user's default install is used."""
    monkeypatch.delenv("VAJRA_NODE_DIR", raising=False)
    monkeypatch.setenv("VAJRA_CACHE_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    usual = tmp_path / "home-cache" / "vajra-tui" / "node"
    assert sidecar.node_dir() == tmp_path / "elsewhere" / "node"  # nothing installed anywhere
    (usual / "node_modules" / "webgpu").mkdir(parents=True)
    (usual / "node_modules" / "webgpu" / "index.js").write_text("")
    assert sidecar.node_dir() == usual
    (tmp_path / "elsewhere" / "node" / "node_modules" / "webgpu").mkdir(parents=True)
    (tmp_path / "elsewhere" / "node" / "node_modules" / "webgpu" / "index.js").write_text("")
    assert sidecar.node_dir() == tmp_path / "elsewhere" / "node"  # its own install comes first

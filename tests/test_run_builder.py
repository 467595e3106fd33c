"""One run builder behind every entry point: the same kernels, ids and document everywhere.

The CLI's ``--json`` and the API's ``Report`` are one serializer; the user's kernels get
one id scheme whichever door they came in by; a run the builder refuses leaves nothing
behind. Each test runs the real engine on the real adapter.
"""

from __future__ import annotations

import json

import pytest

import vajra_tui
from conftest import KERNELS
from vajra_tui.cli.main import main
from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.run.kernels import user_kernels

BENCH = dict(size="64x300", warmup=1, reps=3)
ROW, NOOP = KERNELS / "softmax_row.wgsl", KERNELS / "noop.wgsl"


def test_the_cli_json_and_the_api_report_are_one_document(capsys):
    """Same keys at every level, same names, statuses and ids: one serializer, not two."""
    code = main(["bench", "-w", "softmax", "--size", BENCH["size"], "--reps", "3", "--warmup", "1",
                 "-k", str(ROW), "-k", str(NOOP), "--json", "-q"])
    assert code == 0
    cli = json.loads(capsys.readouterr().out)
    api = vajra_tui.bench("softmax", [ROW, NOOP], **BENCH).to_json()
    assert set(cli) == set(api)
    assert [set(r) for r in cli["results"]] == [set(r) for r in api["results"]]
    assert [(r["name"], r["status"]) for r in cli["results"]] == [(r["name"], r["status"]) for r in api["results"]]
    assert cli["winner"] == api["winner"] and cli["final_batch"] == api["final_batch"]
    assert "generations" not in cli  # a bench has no generations; a tune's document names them


def test_user_kernels_have_one_id_scheme_and_unique_names(tmp_path):
    twin = tmp_path / "softmax_row.wgsl"
    twin.write_text(ROW.read_text())
    kernels = user_kernels([ROW, twin, "fn main() {}\n"])
    assert [k.id for k in kernels] == ["user0", "user1", "user2"]
    assert [k.name for k in kernels] == ["softmax_row", "softmax_row'", "kernel3"]
    assert kernels[0].origin == f"file: {ROW}" and kernels[2].origin == "python"


def test_an_unreadable_kernel_is_a_usage_error_or_a_graveyard_entry(tmp_path):
    """The CLI and the API refuse it before anything starts; the TUI keeps it, with the reason."""
    missing = tmp_path / "gone.wgsl"
    with pytest.raises(UsageError, match="kernel file not found"):
        user_kernels([missing])
    [kept] = user_kernels([missing], strict=False)
    assert kept.source == "" and "kernel file not found" in kept.no_kernel_reason


def test_a_refused_run_leaves_no_recording_behind(tmp_path, monkeypatch, capsys):
    """``--source llm`` without a key is refused before the recording exists, so the retry works."""
    monkeypatch.delenv("NEBIUS_API_KEY", raising=False)  # the default [llm] api_key_env
    monkeypatch.delenv("VAJRA_LLM__API_KEY_ENV", raising=False)
    rec = tmp_path / "run_llm.jsonl"
    args = ["tune", "-w", "softmax", "--size", "8x64", "--source", "llm", "--record", str(rec), "-q"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "needs an API key" in err and "recorded" not in err
    assert not rec.exists() and not rec.with_name(rec.name + ".partial").exists()
    assert main(args) == 2  # the same refusal again, not "the recording exists"
    assert "needs an API key" in capsys.readouterr().err


def test_an_unknown_source_is_refused_by_the_api_as_a_value_error():
    with pytest.raises(ValueError, match="choose library, params, llm, auto"):
        vajra_tui.tune("softmax", source="magic")


def _result(cid: str, batch: int, median: float, speedup: float):
    from vajra_tui.engine.events import CandidateResult

    return CandidateResult(id=cid, name=cid, status="verified", strategy="A", origin="library: x",
                           generation=1, batch=batch, median_ms=median, speedup=speedup)


def test_the_table_ranks_one_batch_and_names_the_batch_of_older_rows():
    """C from batch 4 at 8.77x must not rank above E4 from the final batch 6 at 8.58x, nor show
    a speedup that divides another batch's baseline."""
    from rich.console import Console

    from vajra_tui.cli.render import results_table
    from vajra_tui.engine.events import DeviceInfo
    from vajra_tui.engine.run.report import Report
    from vajra_tui.engine.workloads import get_workload

    sgemm = get_workload("sgemm")
    base, e4, c = _result("baseline", 6, 10.0, 1.0), _result("E4", 6, 1.165, 8.58), _result("C", 4, 2.5, 8.77)
    report = Report(device=DeviceInfo(name="lavapipe", backend="Vulkan", adapter_type="CPU"),
                    workload=sgemm.info(sgemm.size("64")), results=[base, c, e4],
                    winner=e4, final_batch=6, standing=["E4", "baseline"])
    assert [r.id for r in report.in_standing_order()] == ["E4", "baseline", "C"]
    console = Console(width=200, record=True)
    console.print(results_table(report.device, report.workload, report.in_standing_order(), "E4", width=200,
                                final_batch=6))
    rows = [line.strip("│ ").split("│") for line in console.export_text().splitlines() if line.startswith("│")]
    cells = {row[0].strip(" ★"): [cell.strip() for cell in row] for row in rows}
    assert cells["E4"][7] == "8.58x" and cells["C"][7] == "-"  # the speedup column
    assert cells["C"][-1].startswith("batch 4: 8.77x")


def test_replay_gives_the_tune_document_it_recorded(capsys, tmp_path):
    """Same keys, the winner by name (not "g3-E2"), the headline, ties and final batch."""
    rec = tmp_path / "tune.jsonl"
    assert main(["tune", "-w", "softmax", "--size", "8x64", "--source", "library", "--generations", "1",
                 "--budget", "2", "--reps", "3", "--warmup", "1", "--json", "-q", "--record", str(rec)]) == 0
    tuned = json.loads(capsys.readouterr().out)
    assert main(["replay", str(rec), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert set(replayed) == set(tuned)
    for key in ("winner", "headline", "ties", "final_batch", "baseline_won", "ranking", "seeds", "timed_on_seed"):
        assert replayed[key] == tuned[key], key
    # the inputs a verdict can be reproduced on: only the table's footer said them
    assert tuned["seeds"] == [1, 2] and isinstance(tuned["timed_on_seed"], int)
    assert tuned["timed_on_seed"] not in tuned["seeds"]
    # the lockfile says them too (a kernel exported from the recording)
    name = next(r["name"] for r in tuned["results"] if r["status"] == "verified" and r["name"] != "baseline")
    out = tmp_path / "out"
    assert main(["export", str(rec), "--kernel", name, "--out", str(out)]) == 0
    entry = json.loads((out / "vajra.lock.json").read_text())["entries"][0]
    assert entry["verification"]["seeds"] == [1, 2]
    assert entry["verification"]["timed_on_seed"] == tuned["timed_on_seed"]
    assert main(["replay", str(rec), "--headless"]) == 0
    table = capsys.readouterr().out
    assert tuned["headline"] in table and table.index(tuned["ranking"][0]) < table.index("baseline") \
        if tuned["ranking"] else "baseline" in table


def test_a_row_from_an_earlier_run_shows_no_speedup_beside_this_runs():
    """--resume: a kernel recalled from an earlier run keeps that run's speedup, which divides
    another baseline; the table showed it in the speedup column under "every speedup divides
    the baseline of batch 3", and the progress line said "batch None"."""
    import io

    from rich.console import Console

    from vajra_tui.cli.render import ProgressPrinter, results_table
    from vajra_tui.engine.events import CandidateFinished, DeviceInfo
    from vajra_tui.engine.run.report import Report
    from vajra_tui.engine.workloads import get_workload

    sgemm = get_workload("sgemm")
    base, e4 = _result("baseline", 3, 10.0, 1.0), _result("E4", 3, 5.0, 2.0)
    old = _result("WG4", 3, 9.0, 1.08).model_copy(update={"batch": None, "from_cache": True})
    report = Report(device=DeviceInfo(name="lavapipe", backend="Vulkan", adapter_type="CPU"),
                    workload=sgemm.info(sgemm.size("64")), results=[base, e4, old],
                    winner=e4, final_batch=3, standing=["E4", "baseline"])
    console = Console(width=200, record=True)
    console.print(results_table(report.device, report.workload, report.in_standing_order(), "E4", width=200,
                                final_batch=3))
    rows = [line.strip("│ ").split("│") for line in console.export_text().splitlines() if line.startswith("│")]
    cells = {row[0].strip(" ★"): [cell.strip() for cell in row] for row in rows}
    assert cells["WG4"][7] == "-" and cells["WG4"][-1].startswith("earlier run: 1.08x of that run's baseline")
    stream = io.StringIO()
    ProgressPrinter(stream)(CandidateFinished(result=old))
    said = stream.getvalue()
    assert said and "batch None" not in said and "earlier run" in said


def test_json_is_strict_json_when_a_kernel_never_wrote(capsys):
    """A never-written output's max_rel_error is infinite: json.dumps wrote `Infinity`, which
    JSON.parse and jq refuse, while the replay of the same run said null."""
    from conftest import KERNELS

    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    assert main(["bench", "-w", "sgemm", "--size", "16", "--reps", "1", "--warmup", "0", "--json", "-q",
                 "-k", str(KERNELS / "noop.wgsl")]) == 0
    doc = json.loads(capsys.readouterr().out, parse_constant=refuse)
    noop = doc["results"][1]
    assert noop["status"] == "rejected" and noop["max_rel_error"] is None

"""``replay FILE --json`` is the document ``tune --json`` printed when FILE was recorded.

Both go through ``Report.to_json``; what the rankings do not say (the library's note, the
params search, the limits, the generations) travels in the recording's last event
(``SessionFinished.report``) and its first (``SessionStarted.limits``). Real runs on the
machine's adapter (lavapipe without a GPU), at small sizes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vajra_tui.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "workloads"
FAST = ["--reps", "3", "--warmup", "1", "--json", "-q"]


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def _same_keys(tuned: dict, replayed: dict) -> None:
    """Key by key, so a failure names the key that differs."""
    assert list(replayed) == list(tuned), "keys differ"
    for key in tuned:
        assert replayed[key] == tuned[key], f"{key!r} differs"


def _tune_then_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                      command: str = "tune") -> tuple[dict, dict]:
    rec = tmp_path / f"{command}.jsonl"
    tuned = _json(capsys, [command, *argv, *FAST, "--record", str(rec)])
    replayed = _json(capsys, ["replay", str(rec), "--json"])
    _same_keys(tuned, replayed)
    return tuned, replayed


def test_a_library_tune_replays_to_its_document(tmp_path, capsys):
    tuned, _ = _tune_then_replay(tmp_path, capsys, ["-w", "sgemm", "--size", "32", "--source", "library",
                                                    "--generations", "1", "--budget", "2"])
    assert tuned["limits"] == "portable" and tuned["generations"] >= 1


def test_a_workload_without_templates_replays_its_library_note(tmp_path, capsys):
    tuned, _ = _tune_then_replay(tmp_path, capsys, ["-w", str(EXAMPLES / "transpose.py"), "--size", "64",
                                                    "--generations", "0"])
    assert "no templates for transpose" in tuned["library"]


def test_a_params_search_replays_its_params_block(tmp_path, capsys):
    tuned, _ = _tune_then_replay(tmp_path, capsys, ["-w", str(EXAMPLES / "transpose.py"), "--size", "64",
                                                    "-k", str(EXAMPLES / "transpose_tiled.wgsl"),
                                                    "--source", "params", "--budget", "3"])
    assert tuned["params"]["measured"] >= 1 and tuned["params"]["budget"] == 3


def test_a_bench_replays_to_its_document(tmp_path, capsys):
    tuned, _ = _tune_then_replay(tmp_path, capsys, ["-w", "sgemm", "--size", "32"], command="bench")
    assert "generations" not in tuned and tuned["limits"] == "portable"


def test_a_recording_without_its_last_event_still_replays_with_its_limits(tmp_path, capsys):
    """A recording made before runs ended with their report's tail (or one cut before it)."""
    rec = tmp_path / "tune.jsonl"
    _json(capsys, ["tune", "-w", "sgemm", "--size", "32", "--source", "library", "--generations", "0",
                   *FAST, "--record", str(rec)])
    lines = rec.read_text().splitlines()
    assert json.loads(lines[-1])["type"] == "session_finished"
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join(lines[:-1]) + "\n")
    doc = _json(capsys, ["replay", str(old), "--json"])
    assert doc["limits"] == "portable" and doc["generations"] == 1 and "library" not in doc


def test_the_shipped_recordings_replay_with_their_limits(capsys):
    from vajra_tui.shipped import shipped_recordings

    for path in shipped_recordings():
        assert _json(capsys, ["replay", str(path), "--json"])["limits"] == "portable", path

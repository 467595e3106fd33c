"""A recording's numbers agree with each other on every surface, and an interrupted one says so.

The shipped lavapipe recording (a real library tune of sgemm) is edited in ``tmp_path``:

1. a result's median that is not the median of its own timed samples, a speedup that is
   not its batch's baseline over its median, a baseline rejected in the batch whose
   speedups divide it: ``replay`` and ``export`` refuse it in one line naming the line
   (exit 2), and no lockfile is written;
2. a winner that is no result of the recording: refused by both, the same way (``replay``
   said "X wins" while ``export`` said "no verified winner");
3. a recording with no end of run (``kill -9`` on a line boundary leaves such a
   ``.partial``): kept and shown, said to be interrupted on stderr, in ``replay --json``
   and in the TUI.
"""

from __future__ import annotations

import json
import time
import random
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from vajra_tui.cli.main import main
from vajra_tui.engine.store.record import Recording
from vajra_tui.settings import Settings
from vajra_tui.shipped import find_shipped, shipped_recordings

SGEMM = find_shipped("lavapipe-sgemm")
FIXTURE = Path(__file__).parent / "data" / "session_fixture.jsonl"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    for name in ("VAJRA_CONFIG_DIR", "VAJRA_DATA_DIR", "VAJRA_CACHE_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))


# ---- helpers ---------------------------------------------------------------------------
def _lines() -> list[str]:
    assert SGEMM is not None
    return SGEMM.read_text(encoding="utf-8").splitlines()


def _last(lines: list[str], match: Callable[[dict[str, Any]], bool]) -> int:
    """The 1-based line number of the last event ``match`` accepts."""
    return max(n for n, line in enumerate(lines[1:], 2) if match(json.loads(line)))


def _winner(lines: list[str]) -> str:
    return json.loads(lines[_last(lines, lambda e: e["type"] == "ranking") - 1])["winner_id"]


def _result_of(cid: str) -> Callable[[dict[str, Any]], bool]:
    return lambda e: e["type"] == "candidate_finished" and e["result"]["id"] == cid


def _edited(tmp_path: Path, number: int, edit: Callable[[dict[str, Any]], None]) -> Path:
    """The recording with ``edit`` applied to the event at line ``number``."""
    lines = _lines()
    event = json.loads(lines[number - 1])
    edit(event)
    lines[number - 1] = json.dumps(event)
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _refused(path: Path, tmp_path: Path, capsys) -> str:
    """``replay`` and ``export`` both refuse ``path`` in the same one line, exit 2, nothing written."""
    assert main(["replay", str(path), "--headless"]) == 2
    replayed = capsys.readouterr()
    assert replayed.out == "" and replayed.err.count("\n") == 1, replayed
    out = tmp_path / "out"
    assert main(["export", str(path), "--out", str(out)]) == 2
    exported = capsys.readouterr()
    assert exported.err == replayed.err and "Traceback" not in exported.err
    assert not (out / "vajra.lock.json").exists()
    assert main(["replay", str(path), "--json"]) == 2
    assert "inconsistent" in json.loads(capsys.readouterr().out)["error"]
    return replayed.err.strip()


# ---- 1. numbers that disagree --------------------------------------------------------
def test_a_median_that_is_not_the_median_of_its_times_is_refused(tmp_path, capsys):
    lines = _lines()
    at = _last(lines, _result_of(_winner(lines)))
    path = _edited(tmp_path, at, lambda e: e["result"].update(median_ms=1e-6))
    said = _refused(path, tmp_path, capsys)
    assert f"inconsistent at line {at}:" in said and "median of 1e-06 ms" in said and "9 timed samples" in said


def test_a_quartile_that_is_not_its_times_quartile_is_refused(tmp_path, capsys):
    lines = _lines()
    at = _last(lines, _result_of("baseline"))
    path = _edited(tmp_path, at, lambda e: e["result"].update(p75_ms=e["result"]["p75_ms"] * 2))
    assert f"line {at}:" in _refused(path, tmp_path, capsys)


def test_a_speedup_that_is_not_its_batch_baseline_over_its_median_is_refused(tmp_path, capsys):
    lines = _lines()
    at = _last(lines, _result_of(_winner(lines)))
    path = _edited(tmp_path, at, lambda e: e["result"].update(speedup=99999))
    said = _refused(path, tmp_path, capsys)
    assert f"inconsistent at line {at}:" in said and "speedup of 99999x" in said and "batch 6's baseline" in said


def test_speedups_over_a_rejected_baseline_are_refused(tmp_path, capsys):
    lines = _lines()
    at = _last(lines, _result_of("baseline"))
    path = _edited(tmp_path, at, lambda e: e["result"].update(status="rejected"))
    said = _refused(path, tmp_path, capsys)
    assert f"whose baseline is rejected (line {at})" in said and f"line {at + 2}:" in said


def test_a_speedup_without_a_baseline_in_its_batch_is_refused(tmp_path, capsys):
    lines = _lines()
    at = _last(lines, _result_of(_winner(lines)))
    path = _edited(tmp_path, at, lambda e: e["result"].update(batch=99))
    said = _refused(path, tmp_path, capsys)
    assert f"line {at}:" in said and "batch 99, which has no verified baseline" in said


# ---- 2. a crown on nothing -------------------------------------------------------------
def test_a_winner_that_is_not_in_the_recording_is_refused_by_replay_and_export(tmp_path, capsys):
    lines = _lines()
    at = _last(lines, lambda e: e["type"] == "ranking")
    path = _edited(tmp_path, at, lambda e: e.update(winner_id="g9-Z", headline="Z wins"))
    said = _refused(path, tmp_path, capsys)
    assert f"inconsistent at line {at}:" in said and "'g9-Z'" in said and "no result" in said


def test_a_winner_that_is_not_verified_is_refused(tmp_path, capsys):
    lines = _lines()
    winner = _winner(lines)
    at = _last(lines, _result_of(winner))
    path = _edited(tmp_path, at, lambda e: e["result"].update(status="rejected"))
    said = _refused(path, tmp_path, capsys)
    assert "is rejected, not verified" in said


# ---- 3. a run with no end --------------------------------------------------------------
def _interrupted(tmp_path: Path) -> tuple[Path, str]:
    """What kill -9 left after generation 2's ranking, cut on a line boundary."""
    lines = _lines()
    ranked = [n for n, line in enumerate(lines[1:], 2) if json.loads(line)["type"] == "ranking"]
    path = tmp_path / "run.jsonl.partial"
    path.write_text("\n".join(lines[: ranked[1] + 3]) + "\n", encoding="utf-8")  # generation 3 began
    return path, (f"vajra-tui: warning: {path}: the run was cut off after generation 2 "
                  "(no end of run recorded); showing what it measured")


def test_an_interrupted_run_is_said_to_be_by_replay_and_export(tmp_path, capsys):
    path, line = _interrupted(tmp_path)
    assert main(["replay", str(path), "--headless"]) == 0
    replayed = capsys.readouterr()
    assert replayed.err.splitlines() == [line] and "C wins" in replayed.out  # what it measured, kept
    assert main(["replay", str(path), "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["interrupted"] is True and doc["winner"] == "C" and captured.err.splitlines() == [line]
    out = tmp_path / "out"
    assert main(["export", str(path), "--out", str(out)]) == 0  # kept and usable
    assert line in capsys.readouterr().err.splitlines()
    assert json.loads((out / "vajra.lock.json").read_text())["entries"]


def test_a_recent_recording_without_its_end_is_interrupted_whatever_its_name(tmp_path):
    """Renamed from .partial, or copied: made since runs end with session_finished, it lacks one."""
    lines = _lines()
    header = json.loads(lines[0])
    header["created"] = time.time()
    path = tmp_path / "renamed.jsonl"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    assert Recording(path).check().interrupted
    assert not Recording(SGEMM).check().interrupted  # shipped before runs wrote their end: as measured


def test_a_finished_run_is_not_said_to_be_interrupted(capsys):
    assert main(["replay", str(SGEMM), "--json"]) == 0
    captured = capsys.readouterr()
    assert "interrupted" not in json.loads(captured.out) and captured.err == ""


async def test_the_tui_says_a_replayed_run_was_interrupted(tmp_path):
    from tui_pilot import wait_for
    from vajra_tui.tui.app import VajraApp

    path, _ = _interrupted(tmp_path)
    recording = Recording(path).check()
    assert recording.interrupted and recording.cut is None
    app = VajraApp(Settings(), replay_events=recording, replay_label=path.name, speed=0)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.driver is not None and app.driver.done, "the replay")
        await pilot.pause(0.1)
        said = [n.message for n in app.state.notices]
        assert any("cut off after generation 2 (no end of run recorded)" in m for m in said), said
        await pilot.press("q")


# ---- what ships and what the suite records stays readable ------------------------------
@pytest.mark.parametrize("path", [*shipped_recordings(), FIXTURE], ids=lambda p: p.name)
def test_every_shipped_recording_is_consistent_and_finished(path):
    recording = Recording(path).check()
    assert not recording.interrupted and recording.interrupted_note == ""


def test_the_median_is_the_engines_statistic():
    """timing/stats.py summarizes with numpy's percentiles: the check computes the same ones."""
    from vajra_tui.engine.store.consistency import percentile

    rng = random.Random(7)
    for n in (1, 2, 3, 4, 9, 10, 31):
        times = sorted(rng.uniform(0.001, 500.0) for _ in range(n))
        expected = np.percentile(np.asarray(times), [25, 50, 75])
        got = [percentile(times, q) for q in (0.25, 0.5, 0.75)]
        assert got == pytest.approx(list(expected), rel=1e-12)


def test_a_baseline_that_failed_in_a_later_batch_keeps_the_runs_speedups():
    """The engine's own case: the baseline fails while timed in batch 2 (its result keeps batch
    1's numbers), and batch 2's speedups divide batch 1's baseline (the session's baseline_ms);
    a result from an earlier run (--resume) keeps that run's speedup."""
    from vajra_tui.engine.events import CandidateFinished, CandidateResult
    from vajra_tui.engine.store.consistency import Audit, Inconsistent

    def timed(cid: str, median: float, speedup: float, batch: int | None, status: str = "verified", **more):
        return CandidateFinished(result=CandidateResult(
            id=cid, name=cid, status=status, median_ms=median, times_ms=[median] * 3, p25_ms=median,
            p75_ms=median, iqr_ms=0.0, min_ms=median, max_ms=median, speedup=speedup, batch=batch, **more))

    audit = Audit()
    for number, event in enumerate([timed("baseline", 2.0, 1.0, 1), timed("A", 1.0, 2.0, 1),
                                    timed("baseline", 2.0, 1.0, 1, status="rejected"),
                                    timed("B", 0.5, 4.0, 2), timed("C", 3.0, 7.0, None, from_cache=True)], 2):
        audit.see(number, event)
    audit.close()
    assert audit.interrupted_note().startswith("the run was cut off before its first ranking")

    audit = Audit()  # the same batch 2 without the baseline's failure: nothing it divides
    for number, event in enumerate([timed("baseline", 2.0, 1.0, 1), timed("B", 0.5, 4.0, 2)], 2):
        audit.see(number, event)
    with pytest.raises(Inconsistent, match="line 3: 'B' shows a speedup of 4x in batch 2, which has no verified"):
        audit.close()

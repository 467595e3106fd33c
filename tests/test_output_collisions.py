"""Two outputs of one run at one place, a broken lockfile in the export folder, and an
export cut short: each refused before the run, or leaving nothing half-written.

A held-out fault audit found ``--csv same.jsonl --record same.jsonl`` wrote the CSV over the
recording and said "wrote" for both; ``--csv out/vajra.lock.json --export out`` replaced the
lockfile; a garbage ``vajra.lock.json`` in the export folder was found only after the whole
tune, with advice (``--force``) that tune does not take; and an export that hit a full disk
left its ``.wgsl`` alone, which then blocked the next export into that folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import one_error_line
from vajra_tui.cli.main import main
from vajra_tui.engine.store import atomic
from vajra_tui.engine.store.atomic import write_together

RUN = ["tune", "-w", "sgemm", "--size", "16", "--generations", "0"]


@pytest.mark.parametrize("flags, said", [
    (lambda t: ["--record", str(t / "same.jsonl"), "--csv", str(t / "same.jsonl")],
     "--csv {t}/same.jsonl and --record {t}/same.jsonl are one file"),
    (lambda t: ["--record", str(t / "run.jsonl"), "--csv", str(t / "run.jsonl.partial")], "are one file"),
    (lambda t: ["--export", str(t / "out"), "--csv", str(t / "out" / "vajra.lock.json")],
     "is where --export {t}/out writes its kernels and lockfile"),
    (lambda t: ["--export", str(t / "out"), "--csv", str(t / "out" / "sgemm.wgsl")], "writes its kernels"),
    (lambda t: ["--export", str(t / "same"), "--record", str(t / "same")], "is where --export"),
    (lambda t: ["--export", str(t / "out"), "--record", str(t / "out" / "sgemm.ts")], "is where --export"),
])
def test_two_outputs_at_one_place_are_refused_before_the_run(tmp_path, capsys, flags, said):
    (tmp_path / "out").mkdir()
    assert main([*RUN, *flags(tmp_path)]) == 2
    assert said.format(t=tmp_path) in one_error_line(capsys)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["out"]  # nothing written, nothing run


@pytest.mark.parametrize("broken", ["garbage", "directory"])
def test_a_broken_lockfile_in_the_export_folder_is_refused_before_the_run(tmp_path, capsys, broken):
    lock = tmp_path / "out" / "vajra.lock.json"
    lock.parent.mkdir()
    lock.mkdir() if broken == "directory" else lock.write_text("{garbage")
    assert main([*RUN, "--export", str(tmp_path / "out")]) == 2
    line = one_error_line(capsys)
    assert "move it away or choose another directory for --export" in line and "--force" not in line, line
    assert lock.is_dir() if broken == "directory" else lock.read_text() == "{garbage"


def test_an_export_that_fails_while_staging_writes_nothing(tmp_path, monkeypatch):
    """A full disk on the second file: the first is never in place either."""
    real, calls = atomic._staged, []

    def full_disk(path: Path, text: str) -> Path:
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(path, text)

    monkeypatch.setattr(atomic, "_staged", full_disk)
    files = {tmp_path / "k.wgsl": "w", tmp_path / "k.ts": "t", tmp_path / "vajra.lock.json": "{}"}
    with pytest.raises(OSError):
        write_together(files, fresh=[tmp_path / "k.wgsl", tmp_path / "k.ts"])
    assert list(tmp_path.iterdir()) == []  # no file, no temporary file


def test_an_export_that_fails_while_renaming_takes_back_what_it_placed(tmp_path, monkeypatch):
    (tmp_path / "vajra.lock.json").write_text('{"old": 1}')
    real = os.replace

    def refuse_the_lockfile(src, dst):
        if str(dst).endswith("vajra.lock.json"):
            raise OSError(5, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", refuse_the_lockfile)
    files = {tmp_path / "k.wgsl": "w", tmp_path / "k.ts": "t", tmp_path / "vajra.lock.json": "{}"}
    with pytest.raises(OSError):
        write_together(files, fresh=[tmp_path / "k.wgsl", tmp_path / "k.ts"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vajra.lock.json"]
    assert (tmp_path / "vajra.lock.json").read_text() == '{"old": 1}'


def test_a_file_that_appears_meanwhile_is_kept(tmp_path):
    (tmp_path / "k.wgsl").write_text("mine")
    with pytest.raises(FileExistsError):
        write_together({tmp_path / "k.ts": "t", tmp_path / "k.wgsl": "w"}, fresh=[tmp_path / "k.wgsl"])
    assert (tmp_path / "k.wgsl").read_text() == "mine" and not (tmp_path / "k.ts").exists()

"""``vajra-tui lock merge``: where the merged lockfile may go, what happens when two files time
one slot differently, and lockfile entries whose median is no time at all.

Each test goes through ``main([...])``: one line on stderr, exit status 2 for bad input,
never a traceback, and nothing the user made is lost (no folder created, no file replaced).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import one_error_line

from vajra_tui.cli.main import main
from vajra_tui.engine.events import CandidateResult, DeviceInfo
from vajra_tui.engine.export.lock_merge import MergeConflict, merge_locks
from vajra_tui.engine.export.lockfile import build_lock, dump_lock, lock_entry
from vajra_tui.engine.workloads import WORKLOADS

SOURCE = "// tiled\n@compute @workgroup_size(1) fn main() {}\n"


def lock_document(median_ms: float = 1.0, exported_at: str = "2024-01-01T00:00:00Z") -> dict[str, Any]:
    """A real lockfile's data: one sgemm entry on "GPU one", timed at ``median_ms``."""
    sgemm = WORKLOADS["sgemm"]
    info = sgemm.info(sgemm.size("64"))
    dev = DeviceInfo(name="GPU one", backend="Vulkan", adapter_type="DiscreteGPU", driver="1.0")
    result = CandidateResult(id="tiled", name="tiled", status="verified", stitched_source=SOURCE,
                             source_sha256=hashlib.sha256(SOURCE.encode()).hexdigest(),
                             grid=[1, 1, 1], workgroup_size=[1, 1, 1], median_ms=median_ms,
                             timing="timestamp")
    lock = build_lock([lock_entry(result, dev, info)])
    lock["entries"][0]["exported_at"] = exported_at
    return lock


def write(path: Path, data: Any) -> Path:
    path.write_text(data if isinstance(data, str) else dump_lock(data))
    return path


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    """a.json (1 ms, January) and b.json (2 ms, February): one slot, timed differently."""
    return (write(tmp_path / "a.json", lock_document(1.0, "2024-01-01T00:00:00Z")),
            write(tmp_path / "b.json", lock_document(2.0, "2024-02-01T00:00:00Z")))


def _medians(path: Path) -> list[float]:
    return [e["timing"]["median_ms"] for e in json.loads(path.read_text())["entries"]]


# ---- where the merged lockfile goes ---------------------------------------------------
def _a_file(tmp_path: Path) -> Path:
    (tmp_path / "a-file").write_text("the user's file\n")
    return tmp_path / "a-file"


@pytest.mark.parametrize("out,force,needle", [
    (lambda t: _a_file(t) / "m.json", False, "is a file, not a directory"),
    (lambda t: _a_file(t) / "sub" / "m.json", False, "is a file, not a directory"),
    (lambda t: Path("/proc/vajra-merged.json"), False, "/proc"),
    (lambda t: Path("/proc/self/status"), True, "/proc"),
    (lambda t: Path("/sys/vajra-merged.json"), False, "/sys"),
    (lambda t: t, True, "is a directory; give a file name"),
    (lambda t: t, False, "is a directory; give a file name"),
], ids=["under-a-file", "deep-under-a-file", "proc", "proc-force", "sys", "directory-force", "directory"])
def test_an_output_that_cannot_be_written_is_one_line(two, tmp_path, capsys, out, force, needle):
    target = out(tmp_path)
    argv = ["lock", "merge", str(two[0]), str(two[1]), "-o", str(target), *(["--force"] if force else [])]
    assert main(argv) == 2
    line = one_error_line(capsys)
    assert needle in line, line
    if (tmp_path / "a-file").exists():
        assert (tmp_path / "a-file").read_text() == "the user's file\n"


def test_a_missing_folder_is_refused_not_created(two, tmp_path, capsys):
    target = tmp_path / "nonexistent_dir" / "x" / "m.json"
    assert main(["lock", "merge", str(two[0]), str(two[1]), "-o", str(target)]) == 2
    line = one_error_line(capsys)
    assert "does not exist" in line and "nonexistent_dir" in line, line
    assert not (tmp_path / "nonexistent_dir").exists()


def test_the_output_is_checked_before_the_inputs_are_read(tmp_path, capsys):
    """A missing folder is said first, even when an input is broken too: nothing is done."""
    target = tmp_path / "gone" / "m.json"
    assert main(["lock", "merge", str(tmp_path / "missing.json"), "-o", str(target)]) == 2
    assert "does not exist" in one_error_line(capsys)


def test_a_read_only_place_is_one_line(two, tmp_path, capsys, monkeypatch):
    """As root a chmod does not stop a write, so the probe's answer is the file system's (EROFS)."""
    import tempfile

    def read_only(*args: Any, **kwargs: Any) -> str:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    folder = tmp_path / "ro"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "mkdtemp", read_only)
    assert main(["lock", "merge", str(two[0]), str(two[1]), "-o", str(folder / "m.json")]) == 2
    assert "Read-only file system" in one_error_line(capsys)
    assert list(folder.iterdir()) == []


def test_a_failed_write_is_one_line(two, tmp_path, capsys, monkeypatch):
    from vajra_tui.engine.store import atomic

    def full(path: Path, text: str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(atomic, "atomic_write", full)
    assert main(["lock", "merge", str(two[0]), str(two[1]), "-o", str(tmp_path / "m.json"),
                 "--on-conflict", "newest"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "No space left on device" in err.strip().splitlines()[-1]


def test_an_existing_file_needs_force_and_is_then_replaced(two, tmp_path, capsys):
    target = write(tmp_path / "m.json", "the user's notes\n")
    assert main(["lock", "merge", str(two[0]), "-o", str(target)]) == 2
    assert "--force" in one_error_line(capsys)
    assert target.read_text() == "the user's notes\n"
    assert main(["lock", "merge", str(two[0]), "-o", str(target), "--force"]) == 0
    assert _medians(target) == [1.0]


# ---- the same slot, timed differently ----------------------------------------------
def test_a_conflict_keeps_the_newest_and_says_so(two, tmp_path, capsys):
    target = tmp_path / "m.json"
    assert main(["lock", "merge", str(two[0]), str(two[1]), "-o", str(target)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    notices = [line for line in err if "notice" in line]
    assert len(notices) == 1, err
    assert "sgemm" in notices[0] and f"kept {two[1]}" in notices[0] and f"not {two[0]}" in notices[0], notices
    assert "newest" in notices[0]
    assert _medians(target) == [2.0]
    # the order of the files does not change which is newest
    assert main(["lock", "merge", str(two[1]), str(two[0]), "-o", str(target), "--force"]) == 0
    assert f"kept {two[1]}" in capsys.readouterr().err
    assert _medians(target) == [2.0]


def test_a_conflict_can_keep_the_fastest(two, tmp_path, capsys):
    target = tmp_path / "m.json"
    assert main(["lock", "merge", str(two[0]), str(two[1]), "-o", str(target),
                 "--on-conflict", "fastest"]) == 0
    err = capsys.readouterr().err
    assert f"kept {two[0]}" in err and "fastest" in err, err
    assert _medians(target) == [1.0]


def test_a_conflict_can_be_refused(two, tmp_path, capsys):
    target = tmp_path / "m.json"
    assert main(["lock", "merge", str(two[0]), str(two[1]), "-o", str(target),
                 "--on-conflict", "refuse"]) == 2
    line = one_error_line(capsys)
    assert "sgemm" in line and "a.json" in line and "b.json" in line and "--on-conflict" in line, line
    assert not target.exists()


def test_the_same_measurement_twice_is_no_conflict(two, tmp_path, capsys):
    target = tmp_path / "m.json"
    assert main(["lock", "merge", str(two[0]), str(two[0]), "-o", str(target),
                 "--on-conflict", "refuse"]) == 0
    assert "notice" not in capsys.readouterr().err
    assert _medians(target) == [1.0]


def test_merge_locks_reports_conflicts_to_its_caller(two):
    conflicts: list[MergeConflict] = []
    merged = merge_locks(list(two), conflicts=conflicts)
    assert [e["timing"]["median_ms"] for e in merged["entries"]] == [2.0]
    assert len(conflicts) == 1 and conflicts[0].kept.endswith("b.json") and conflicts[0].dropped_ms == 1.0
    with pytest.raises(ValueError, match="measured differently"):
        merge_locks(list(two), on_conflict="refuse")


def test_the_help_says_what_a_conflict_does(capsys):
    with pytest.raises(SystemExit):
        main(["lock", "merge", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--on-conflict" in out and "newest" in out and "fastest" in out and "refuse" in out


# ---- a median that is no time -----------------------------------------------------
@pytest.mark.parametrize("median", ["-1.0", "0", "0.0", "NaN", "Infinity", "-Infinity", "1e999"])
def test_a_median_that_is_no_time_is_refused_by_merge_and_diff(tmp_path, capsys, median):
    good = write(tmp_path / "good.json", lock_document(1.0))
    bad = write(tmp_path / "bad.json", dump_lock(lock_document(1.0)).replace(
        '"median_ms": 1.0', f'"median_ms": {median}', 1))
    assert f'"median_ms": {median}' in bad.read_text()
    assert main(["lock", "merge", str(good), str(bad), "-o", str(tmp_path / "m.json")]) == 2
    line = one_error_line(capsys)
    assert "bad.json" in line and "entry 0" in line and "median_ms" in line, line
    assert not (tmp_path / "m.json").exists()
    assert main(["lock", "diff", str(good), str(bad)]) == 2
    line = one_error_line(capsys)
    assert "bad.json" in line and "entry 0" in line and "median_ms" in line, line


@pytest.mark.parametrize("make", [lambda d: Path("/dev/zero"), lambda d: os.mkfifo(d / "p.json") or d / "p.json"],
                         ids=["dev-zero", "fifo"])
def test_a_lockfile_that_is_not_a_file_is_one_line(tmp_path, capsys, make):
    good = write(tmp_path / "good.json", lock_document(1.0))
    path = make(tmp_path)
    assert main(["lock", "diff", str(good), str(path)]) == 2
    assert "not a regular file" in one_error_line(capsys)

"""A full disk: one line, nothing half-published, and the run goes on where it can.

A full filesystem is made without root tricks. The real CLI runs in a child process
under ``RLIMIT_FSIZE`` with SIGXFSZ ignored, so every write past the limit fails
(EFBIG) as it would on a full disk (ENOSPC); a limit of 0 means nothing can be
written at all. The recorder's write path is also driven directly through its
``opener`` parameter with a file whose writes fail with ENOSPC.

Each child gets a cache folder of its own, seeded with this adapter's calibration: the
run checks it with a quick copy instead of measuring the roofline again (seconds of
lavapipe work a run, and none of it what a full disk is about).
"""

from __future__ import annotations

import errno
import io
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import child_pythonpath

from vajra_tui.engine.events import Notice, SessionStarted, StreamDelta, DeviceInfo, WorkloadInfo
from vajra_tui.engine.store import damage
from vajra_tui.engine.store.record import Recorder, Recording, RecordingError

ROOT = Path(__file__).resolve().parents[1]
# A tune of softmax 32x256 records ~150 KB: a 40 KB limit fills the "disk" mid-run.
MID_RUN_LIMIT = 40_000
TUNE = ["tune", "-w", "softmax", "--size", "32x256", "--generations", "1", "--reps", "3",
        "--warmup", "1", "--source", "library", "-q", "--json"]


def _limited(limit: int):
    """preexec_fn: writes past ``limit`` bytes fail (EFBIG) instead of killing the process."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # inherited by the GPU worker too
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def _cli(tmp_path: Path, limit: int, *args: str, calibration: str = "") -> subprocess.CompletedProcess:
    """``python -m vajra_tui.cli.main ARGS`` on a "disk" that takes ``limit`` bytes a file, with a
    cache folder of its own that holds ``calibration`` (when given) as its calibration.json."""
    cache = tmp_path / "cache"
    if calibration:
        cache.mkdir(exist_ok=True)
        (cache / "calibration.json").write_text(calibration, encoding="utf-8")
    env = dict(os.environ, VAJRA_CACHE_DIR=str(cache), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               PYTHONPATH=child_pythonpath())
    return subprocess.run([sys.executable, "-m", "vajra_tui.cli.main", *args], cwd=tmp_path, env=env,
                          preexec_fn=_limited(limit), capture_output=True, text=True, timeout=300)


class _Full(io.StringIO):
    """A file with room for ``room`` characters: past that, writes fail as on a full disk."""

    def __init__(self, path: Path, room: int) -> None:
        super().__init__()
        self.room, self.path, self.flushes = room, path, 0
        path.write_text("")  # the .partial exists, as open(path, "x") would have made it

    def write(self, text: str) -> int:
        if self.tell() + len(text) > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return super().write(text)

    def flush(self) -> None:
        self.flushes += 1
        self.path.write_text(self.getvalue())


def _start() -> SessionStarted:
    return SessionStarted(device=DeviceInfo(name="gpu"), workload=WorkloadInfo(
        name="sgemm", size={"M": 1, "N": 1, "K": 1}, flops=2, min_bytes=12, output_grid=[1, 1], atol=1e-6))


# ---- (1) a recording that cannot be created --------------------------------------------------

def test_cli_record_on_a_full_disk_is_one_line_exit_2_and_leaves_nothing(tmp_path):
    rec = tmp_path / "run.jsonl"
    done = _cli(tmp_path, 0, *TUNE, "--record", str(rec))  # refused before a worker starts: no calibration
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if "warning:" not in line]
    assert len(lines) == 1 and "cannot record to" in lines[0] and "disk full" in lines[0], done.stderr
    assert not rec.exists() and not rec.with_name("run.jsonl.partial").exists()


def test_recorder_that_cannot_write_its_header_removes_the_partial(tmp_path):
    rec = tmp_path / "run.jsonl"
    with pytest.raises(RecordingError, match=r"cannot record to .*disk full \(No space left on device\)"):
        Recorder(rec, opener=lambda path: _Full(path, 0))
    assert not rec.exists() and not rec.with_name("run.jsonl.partial").exists()
    Recorder(rec).close()  # the next run is not blocked by a leftover .partial
    assert rec.exists()


# ---- (2) a disk that fills mid-run -------------------------------------------------------------

def test_cli_disk_filling_mid_run_keeps_the_partial_and_the_run_ends_normally(tmp_path, calibration):
    rec = tmp_path / "run.jsonl"
    done = _cli(tmp_path, MID_RUN_LIMIT, *TUNE, "--record", str(rec), calibration=calibration)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    report = json.loads(done.stdout)  # the run went on to its report, with its verdict on the last batch
    # winner or not is timing (a 32x256 softmax at 3 reps; the baseline won on a busy 2-core machine)
    assert report["final_batch"] is not None, done.stdout[-2000:]
    assert report["winner"] or report["baseline_won"] or report["ties"], done.stdout[-2000:]
    library = [r for r in report["results"] if r["strategy"] not in ("baseline", "user")]
    assert any(r["status"] == "verified" for r in library), done.stdout[-2000:]
    stopped = [line for line in done.stderr.splitlines() if "recording stopped" in line]
    assert len(stopped) == 1 and "disk full" in stopped[0] and "run.jsonl.partial" in stopped[0], done.stderr
    assert not rec.exists(), "a truncated recording was published as complete"
    assert f"recorded {rec}" not in done.stderr  # the warning names the .partial; nothing says "recorded"
    partial = Recording(rec.with_name("run.jsonl.partial")).check()
    assert partial.events_before_cut > 0 or partial.cut is None


def test_recorder_write_failing_mid_run_stops_recording_not_the_caller(tmp_path, monkeypatch):
    monkeypatch.setenv("NEBIUS_API_KEY", "sk-secret-value-1234")
    rec = tmp_path / "run.jsonl"
    recorder = Recorder(rec, opener=lambda path: _Full(path, 2000))
    recorder(_start())
    recorder(StreamDelta(id="g1-A", text="token sk-secret-value-1234 leaked?"))
    recorder(Notice(message="done"))  # flushes the held stream: redacted before it is written
    for i in range(50):  # past the room: each would raise OSError before
        recorder(Notice(message=f"notice {i} " + "x" * 40))
    assert recorder.stopped and recorder.stopped.startswith("recording stopped: disk full (")
    assert "run.jsonl.partial" in recorder.stopped
    assert recorder.stopped in damage.take()  # the CLI prints it, once
    assert recorder.close() == rec.with_name("run.jsonl.partial")
    assert not rec.exists()
    text = rec.with_name("run.jsonl.partial").read_text()
    assert "sk-secret" not in text and "[redacted]" in text


# ---- (3) the TUI driver: a notice, never a freeze or a traceback -----------------------------

class _App:
    def __init__(self) -> None:
        self.posted: list = []

    def post_message(self, message) -> None:
        self.posted.append(message.event)


async def test_tui_driver_turns_a_full_disk_into_one_notice(tmp_path):
    from vajra_tui.settings import Settings
    from vajra_tui.tui.driver import LiveDriver, RunConfig

    rec = tmp_path / "tui.jsonl"
    app = _App()
    driver = LiveDriver(app, RunConfig(workload="softmax", record=rec), Settings())
    driver.recorder = Recorder(rec, opener=lambda path: _Full(path, 400))
    for i in range(30):
        driver.emit(Notice(message=f"event {i} " + "y" * 40))
    notices = [e for e in app.posted if isinstance(e, Notice) and "recording stopped" in e.message]
    assert len(notices) == 1 and notices[0].level == "warning"
    assert len(app.posted) == 31  # every event still reached the screens
    assert await driver.aclose() == rec.with_name("tui.jsonl.partial")
    assert not rec.exists()


async def test_tui_driver_survives_a_recorder_that_breaks(tmp_path):
    from vajra_tui.settings import Settings
    from vajra_tui.tui.driver import LiveDriver, RunConfig

    class Broken(Recorder):
        def __call__(self, event) -> None:
            raise RuntimeError("recorder bug")

    rec = tmp_path / "broken.jsonl"
    app = _App()
    driver = LiveDriver(app, RunConfig(workload="softmax", record=rec), Settings())
    driver.recorder = Broken(rec)
    driver.emit(Notice(message="a"))
    driver.emit(Notice(message="b"))
    notices = [e for e in app.posted if isinstance(e, Notice) and "recording stopped" in e.message]
    assert len(notices) == 1 and "recorder bug" in notices[0].message
    assert await driver.aclose() == rec.with_name("broken.jsonl.partial")
    assert not rec.exists()


# ---- (4) the GPU worker: Mesa's shader cache on a folder that cannot take files ---------------

def test_unusable_shader_cache_folder_turns_mesa_cache_off(tmp_path):
    from vajra_tui.engine.child import shader_cache_env

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    env = shader_cache_env({"HOME": str(tmp_path), "XDG_CACHE_HOME": str(blocker)})
    assert env["MESA_SHADER_CACHE_DISABLE"] == "true"
    assert any("shader cache off" in line for line in damage.take())
    fine = shader_cache_env({"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert "MESA_SHADER_CACHE_DISABLE" not in fine
    mine = {"XDG_CACHE_HOME": str(blocker), "MESA_SHADER_CACHE_DISABLE": "false"}
    assert shader_cache_env(dict(mine)) == mine  # the user's own setting stands


def test_full_shader_cache_folder_turns_mesa_cache_off(tmp_path):
    code = ("import json, sys; from vajra_tui.engine.child import shader_cache_env; "
            "print(json.dumps(shader_cache_env({'XDG_CACHE_HOME': sys.argv[1]})))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "xdg")], preexec_fn=_limited(1024),
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=child_pythonpath()))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout).get("MESA_SHADER_CACHE_DISABLE") == "true"
    assert list((tmp_path / "xdg").iterdir()) == []  # the probe cleans up after itself


def test_gpu_worker_is_spawned_with_the_shader_cache_off_on_an_unusable_folder(tmp_path, monkeypatch):
    from vajra_tui.engine.gpu.client import GPUClient

    blocker = tmp_path / "cache-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.delenv("MESA_SHADER_CACHE_DIR", raising=False)
    monkeypatch.delenv("MESA_SHADER_CACHE_DISABLE", raising=False)
    client = GPUClient()
    try:
        device = client.start()
        environ = Path(f"/proc/{client.pid}/environ").read_bytes().split(b"\0")
    finally:
        client.close()
    assert device.name
    assert b"MESA_SHADER_CACHE_DISABLE=true" in environ
    # the note is this process's to say once, at the next command's end: said here, so that a
    # CLI test after this one in the same xdist worker does not print it as its own warning
    from vajra_tui.engine.store import damage

    assert any("shader cache" in n for n in damage.take())


def test_a_csv_the_disk_cannot_take_is_one_line_after_the_report(tmp_path, calibration):
    """--csv on a disk that fills: the report still prints (the run is not lost), then one line,
    exit 2; no traceback and no half-written CSV (it was OSError through save_csv, exit 1)."""
    out = _cli(tmp_path, 300, "bench", "-w", "softmax", "--size", "32x256", "--reps", "3", "--warmup", "1",
               "--no-cache", "--json", "--csv", "r.csv", calibration=calibration)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    assert json.loads(out.stdout)["results"]  # the report came first
    last = out.stderr.strip().splitlines()[-1]
    assert "--csv" in last and "not written" in last, out.stderr[-1000:]
    assert not (tmp_path / "r.csv").exists() and not list(tmp_path.glob(".r.csv.*"))


def test_an_export_the_disk_cannot_take_is_one_line_after_the_report(tmp_path, calibration):
    """--export on a full disk: the tune's report still prints, with the error, then one line,
    exit 2 (a held-out check found stdout empty: the export's error came before the report)."""
    # --export-baseline: something is exported whether or not a kernel beat the baseline here
    out = _cli(tmp_path, 300, *TUNE, "--generations", "0", "--no-cache", "--export", "out", "--export-baseline",
               calibration=calibration)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    doc = json.loads(out.stdout)
    assert doc["results"] and "export failed" in doc["error"], doc.get("error")
    assert out.stderr.strip().splitlines()[-1].startswith("vajra-tui: export failed"), out.stderr[-1000:]

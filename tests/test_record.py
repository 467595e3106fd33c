"""Recordings: round trip, redaction, and one-line errors for bad files."""

from __future__ import annotations

import json

import pytest

from vajra_tui.engine.events import DeviceInfo, Notice, SessionStarted, StreamDelta, WorkloadInfo
from vajra_tui.engine.record import Recorder, RecordingError, read_recording, replay


def _start() -> SessionStarted:
    return SessionStarted(device=DeviceInfo(name="gpu"), workload=WorkloadInfo(
        name="sgemm", size={"M": 1, "N": 1, "K": 1}, flops=2, min_bytes=12, output_grid=[1, 1], atol=1e-6))


def test_round_trip_and_secrets_are_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("NEBIUS_API_KEY", "sk-secret-value-1234")
    path = tmp_path / "s.jsonl"
    rec = Recorder(path)
    rec(_start())
    rec(StreamDelta(id="g1-A", text="token sk-secret-value-1234 leaked?"))
    assert not path.exists()  # only the .partial exists until close
    rec.close()
    assert "sk-secret" not in path.read_text()
    header, events = read_recording(path)
    assert header["schema_version"] == 1 and isinstance(events[0], SessionStarted)
    assert events[1].text == "token [redacted] leaked?"


async def test_replay_keeps_order_and_speed_zero_is_instant():
    events = [_start(), Notice(message="a"), Notice(message="b")]
    out = [e async for e in replay(events, speed=0)]
    assert [getattr(e, "message", None) for e in out] == [None, "a", "b"]


@pytest.mark.parametrize("content,needle", [
    ("", "empty file"),
    ("hello\n", "bad header"),
    (json.dumps({"format": "vajra-session", "schema_version": 99}) + "\n", "newer"),
])
def test_bad_files(tmp_path, content, needle):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(RecordingError, match=needle):
        read_recording(path)


def test_truncated_and_corrupt(tmp_path):
    path = tmp_path / "s.jsonl"
    rec = Recorder(path)
    rec(_start())
    rec(Notice(message="x"))
    rec.close()
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1] + [lines[-1][:20]]) + "\n")
    with pytest.raises(RecordingError, match="truncated at line 3"):
        read_recording(path)
    path.write_text("\n".join([lines[0], "{not json", lines[1]]) + "\n")
    with pytest.raises(RecordingError, match="corrupt at line 2"):
        read_recording(path)

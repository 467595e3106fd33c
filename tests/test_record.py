"""Recordings: round trip, redaction, and one-line errors for bad files."""

from __future__ import annotations

import json

import pytest

from vajra_tui.engine.events import DeviceInfo, Notice, SessionStarted, StreamDelta, WorkloadInfo
from vajra_tui.engine.store.record import Recorder, Recording, RecordingError, read_recording, replay


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


def _recorded(tmp_path, *events) -> tuple:
    path = tmp_path / "s.jsonl"
    rec = Recorder(path)
    for event in (_start(), *events):
        rec(event)
    rec.close()
    return path, path.read_text().splitlines()


def test_a_recording_cut_mid_line_replays_up_to_the_cut(tmp_path):
    """kill -9 leaves the last line half written: the events before it replay, and it says where."""
    path, lines = _recorded(tmp_path, Notice(message="x"), Notice(message="y"))
    path.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20])  # no newline: cut mid-line
    recording = Recording(path)
    events = list(recording)
    assert [getattr(e, "message", None) for e in events] == [None, "x"]
    assert recording.cut == 4 and recording.events_before_cut == 2
    assert "cut at line 4" in recording.cut_note and "2 events" in recording.cut_note
    header, listed = read_recording(path)
    assert header["cut_at_line"] == 4 and len(listed) == 2
    path.write_text("\n".join(lines[:-1] + [lines[-1][:20]]) + "\n")  # cut, then a newline
    assert Recording(path).check().cut == 4


def test_a_damaged_line_before_the_end_is_corruption(tmp_path):
    path, lines = _recorded(tmp_path, Notice(message="x"))
    path.write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    with pytest.raises(RecordingError, match="corrupt at line 2: not valid JSON"):
        read_recording(path)


@pytest.mark.parametrize("edit,needle", [
    (lambda d: d.pop("schema_version"), "no schema_version"),
    (lambda d: d.update(schema_version="1"), "schema_version is '1', not a version number"),
    (lambda d: d.update(schema_version=True), "not a version number"),
    (lambda d: d.update(schema_version=99), "schema 99, newer than this Vajra reads"),
])
def test_header_errors_say_what_is_wrong(tmp_path, edit, needle):
    path, lines = _recorded(tmp_path, Notice(message="x"))
    header = json.loads(lines[0])
    edit(header)
    path.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    with pytest.raises(RecordingError) as caught:
        read_recording(path)
    assert needle in str(caught.value) and "\n" not in str(caught.value)
    if "newer" not in needle:
        assert "newer" not in str(caught.value)


@pytest.mark.parametrize("edit,needle", [
    (lambda d: d.pop("message"), "notice: message: Field required"),
    (lambda d: d.update(message=["a"]), "notice: message: Input should be a valid string"),
    (lambda d: d.update(type="from_the_future"), "unknown event type 'from_the_future'"),
    (lambda d: d.pop("type"), "an event without a type"),
])
def test_event_schema_errors_name_the_line_and_the_field(tmp_path, edit, needle):
    path, lines = _recorded(tmp_path, Notice(message="x"), Notice(message="y"))
    event = json.loads(lines[2])
    edit(event)
    lines[2] = json.dumps(event)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordingError) as caught:
        read_recording(path)
    message = str(caught.value)
    assert "corrupt at line 3" in message and needle in message and "newer" not in message


def test_the_partial_file_of_an_interrupted_recording_is_never_overwritten(tmp_path):
    path = tmp_path / "run.jsonl"
    partial = tmp_path / "run.jsonl.partial"
    partial.write_text("what an interrupted run wrote\n")
    with pytest.raises(RecordingError, match="interrupted recording"):
        Recorder(path)
    assert partial.read_text() == "what an interrupted run wrote\n"


def test_replay_streams_a_long_recording_in_bounded_memory(tmp_path):
    """Memory does not grow with the length of a recording: events are read as they are used."""
    import tracemalloc

    path = tmp_path / "long.jsonl"
    rec = Recorder(path)
    rec(_start())
    for i in range(6000):
        rec(StreamDelta(id="g1-A", text=f"token {i} " * 20))
    rec.close()
    recording = Recording(path)
    tracemalloc.start()
    count = sum(1 for _ in recording)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 6001
    assert path.stat().st_size > 1_500_000 and peak < 400_000, peak  # a list of them would be ~10x

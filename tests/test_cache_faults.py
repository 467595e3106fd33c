"""Cache files that are not what they should be: named pipes, a newer Vajra's results, binary
files and lines cut by a kill. None may hang a run, be rewritten, or make a later entry unreadable.

A FIFO at ``worker.log``, ``calibration.json`` or ``results/<fp>.jsonl`` made every run wait
forever (an open() of a FIFO waits for the other end); a results file from a newer Vajra, or
a binary one, was truncated and rewritten; an entry appended after a line cut by a kill
joined the fragment and was lost with it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import KERNELS, child_pythonpath
from vajra_tui.engine.events import SCHEMA_VERSION, CandidateResult, DeviceInfo
from vajra_tui.engine.store import damage
from vajra_tui.engine.store.result_cache import ResultCache

FIFO = "is a named pipe (FIFO), not a regular file: remove it"
DEVICE = DeviceInfo(name="Test GPU", vendor_id=0x10DE, device_id=0x2335, backend="Vulkan", driver="1.0")
RESULT = CandidateResult(id="A", name="A", status="verified", median_ms=1.0)

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")


def within(seconds: float, fifo: Path, action: Callable[[], Any]) -> Any:
    """``action()``'s value, which must come within ``seconds``. When it does not (the open of a
    FIFO waits), the FIFO's other end is opened so that the thread ends, and the test fails."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = action()
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
            try:
                os.close(os.open(fifo, flags))  # the waiting open returns (a reader or a writer came)
            except OSError:
                pass
        thread.join(5)
        pytest.fail(f"waited on the named pipe {fifo}")
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture(autouse=True)
def no_old_notes():
    damage.take()
    yield
    damage.take()


# ---- 1. a named pipe in the cache ----------------------------------------------------------
@needs_fifo
def test_a_named_pipe_log_is_never_opened(tmp_path):
    log = tmp_path / "worker.log"
    os.mkfifo(log)
    handle = within(5, log, lambda: damage.open_log(log))
    handle.close()
    assert handle.name != str(log)  # the worker logs elsewhere for now
    notes = damage.take()
    assert len(notes) == 1 and f"{log} {FIFO}" in notes[0] and "\n" not in notes[0], notes
    assert log.is_fifo()  # left alone: it may be the user's


@needs_fifo
def test_a_named_pipe_calibration_is_never_read_nor_replaced(tmp_path):
    cal = tmp_path / "calibration.json"
    os.mkfifo(cal)
    assert within(5, cal, lambda: damage.read_json(cal)) == {}
    within(5, cal, lambda: damage.write_json(cal, {"a": 1}, "the calibration", "measured again"))
    assert cal.is_fifo()
    notes = damage.take()
    assert len(notes) == 1 and f"{cal} {FIFO} so that the calibration can be kept" in notes[0], notes


@needs_fifo
def test_a_named_pipe_results_file_is_never_opened(tmp_path):
    cache = ResultCache(tmp_path, DEVICE)
    cache.path.parent.mkdir(parents=True)
    os.mkfifo(cache.path)
    assert within(5, cache.path, lambda: ResultCache(tmp_path, DEVICE).get("k")) is None
    within(5, cache.path, lambda: ResultCache(tmp_path, DEVICE).put("k", RESULT))
    assert cache.path.is_fifo()
    notes = damage.take()
    assert len(notes) == 1 and "is a named pipe (FIFO)" in notes[0] and "left as it is" in notes[0], notes


@needs_fifo
def test_named_pipes_in_the_cache_never_hold_a_bench(tmp_path, gpu):
    """Through the CLI, in a process of its own (a regression would hang it, not this suite)."""
    cache = tmp_path / "cache"
    results = ResultCache(cache, gpu.device).path
    results.parent.mkdir(parents=True)
    for fifo in (cache / "worker.log", cache / "calibration.json", results):
        os.mkfifo(fifo)
    env = {**os.environ, "VAJRA_CACHE_DIR": str(cache), "PYTHONPATH": child_pythonpath()}
    done = subprocess.run([sys.executable, "-m", "vajra_tui.cli.main", "bench", "-w", "sgemm", "--size", "32",
                           "--warmup", "0", "--reps", "1", "-k", str(KERNELS / "sgemm_tiled.wgsl"), "--json"],
                          env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["results"][0]["status"] == "verified"
    assert "Traceback" not in done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("vajra-tui: warning:")]
    assert any(f"worker.log {FIFO}" in w for w in warnings), warnings
    assert any(f"calibration.json {FIFO}" in w for w in warnings), warnings
    assert any(f"{results.name} is a named pipe (FIFO)" in w for w in warnings), warnings
    assert all(p.is_fifo() for p in (cache / "worker.log", cache / "calibration.json", results))


# ---- 3. results files this Vajra must not rewrite, and lines cut by a kill --------------------
def _header(**changes: object) -> str:
    cache = ResultCache(Path("."), DEVICE)
    return json.dumps({**cache._header(), **changes}) + "\n"


@pytest.mark.parametrize("content,said", [
    (_header(schema_version=99) + '{"key": "k", "result": {}}\n', "from a newer Vajra (schema_version 99"),
    (_header(format=7), "from a newer Vajra (format 7"),
    (b"\x00\x01\x02\xff binary\n\x00", "binary (it holds NUL bytes)"),
    (b"\xff\xfe{not utf-8}\n", "binary (not UTF-8 text)"),
], ids=["newer-schema", "newer-format", "nul-bytes", "not-utf8"])
def test_a_results_file_this_vajra_cannot_own_is_left_alone(tmp_path, content, said):
    path = ResultCache(tmp_path, DEVICE).path
    path.parent.mkdir(parents=True)
    raw = content.encode() if isinstance(content, str) else content
    path.write_bytes(raw)
    cache = ResultCache(tmp_path, DEVICE)
    assert cache.get("k") is None
    cache.put("k", RESULT)
    cache.put("k2", RESULT)
    assert path.read_bytes() == raw  # never truncated nor appended to
    notes = damage.take()
    assert len(notes) == 1 and str(path) in notes[0] and said in notes[0] and "\n" not in notes[0], notes


def test_an_older_results_file_starts_anew(tmp_path):
    path = ResultCache(tmp_path, DEVICE).path
    path.parent.mkdir(parents=True)
    path.write_text(_header(schema_version=SCHEMA_VERSION - 1) + '{"key": "old", "result": {}}\n')
    ResultCache(tmp_path, DEVICE).put("k", RESULT)
    assert ResultCache(tmp_path, DEVICE).get("k").median_ms == 1.0
    assert path.read_text().splitlines()[0] == _header().strip()
    assert damage.take() == []


def test_an_entry_after_a_line_cut_by_a_kill_is_kept(tmp_path):
    first = ResultCache(tmp_path, DEVICE)
    first.put("k1", RESULT)
    with first.path.open("a") as f:
        f.write('{"key": "k-cut", "result": {"id": "B", "na')  # killed mid-line
    again = ResultCache(tmp_path, DEVICE)
    again.put("k2", RESULT.model_copy(update={"median_ms": 2.0}))
    read = ResultCache(tmp_path, DEVICE)
    assert read.get("k1").median_ms == 1.0 and read.get("k2").median_ms == 2.0
    assert read.get("k-cut") is None
    assert first.path.read_text().endswith("\n")


def test_two_caches_of_one_device_both_keep_their_results(tmp_path):
    """Lanes of one run each hold a cache of the same file: the second never truncates the first's."""
    a, b = ResultCache(tmp_path, DEVICE), ResultCache(tmp_path, DEVICE)
    assert a.get("x") is None and b.get("x") is None
    a.put("a", RESULT)
    b.put("b", RESULT)
    read = ResultCache(tmp_path, DEVICE)
    assert read.get("a") is not None and read.get("b") is not None

"""The ``--export`` claim after its run was killed: a lock naming a process id that another
process now has (ids are soon reused, in containers above all) is stale, not a live run.

The lock recorded the id only, so after kill -9 (or SIGTERM past the cleanup) a later run was
refused for as long as any process had that id, and the refusal did not say which file to remove.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vajra_tui.engine.export.claim import LOCK_NAME, ExportClaim, _start_time
from vajra_tui.engine.run.output_paths import OutputPathError

linux_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="start times come from /proc")


@pytest.fixture
def other_process():
    """A live process that is not this one (the id a killed run's lock might name)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc
    proc.kill()
    proc.wait()


@linux_proc
def test_the_lock_names_the_process_and_its_start_time(tmp_path):
    claim = ExportClaim.take(tmp_path / "out")
    try:
        pid, started = claim.lock.read_text().split()
        assert int(pid) == os.getpid() and int(started) == _start_time(os.getpid())
    finally:
        claim.release()


@linux_proc
def test_a_lock_whose_process_id_was_reused_is_taken_over(tmp_path, other_process):
    out = tmp_path / "out"
    out.mkdir()
    started = _start_time(other_process.pid)
    assert started is not None
    (out / LOCK_NAME).write_text(f"{other_process.pid} {started - 1}\n")  # the killed run's start time
    claim = ExportClaim.take(out)
    try:
        assert claim.lock.read_text().split()[0] == str(os.getpid())
    finally:
        claim.release()


@pytest.mark.parametrize("recorded", ["start", "id only"])
def test_a_live_holder_is_refused_naming_the_lock_file(tmp_path, other_process, recorded):
    """Its own start time, or an older Vajra's lock that names the id only: a live run."""
    out = tmp_path / "out"
    out.mkdir()
    started = _start_time(other_process.pid)
    if recorded == "start" and started is None:
        pytest.skip("no start times here")
    (out / LOCK_NAME).write_text(f"{other_process.pid} {started}\n" if recorded == "start"
                                 else f"{other_process.pid}\n")
    with pytest.raises(OutputPathError) as info:
        ExportClaim.take(out)
    said = str(info.value)
    assert f"process {other_process.pid}" in said and str(out / LOCK_NAME) in said and "\n" not in said
    assert (out / LOCK_NAME).exists()  # a live run's claim is never taken


def test_a_lock_whose_process_is_gone_is_taken_over(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).write_text(f"{done.stdout.strip()} 12345\n")
    ExportClaim.take(out).release()
    assert not (out / LOCK_NAME).exists()

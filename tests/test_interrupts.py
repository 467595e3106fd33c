"""Ctrl-C and SIGTERM in the middle of a headless tune: one line, the status a shell expects,
the recording kept, and with ``--json`` still one document on stdout. The TUI's session ended
by SIGTERM or a hangup, and a GPU worker whose parent was killed.

Before, SIGTERM ended the process where it stood (no line, nothing on stdout for a script,
the GPU worker left to notice on its own), and Ctrl-C exited 130 without a word.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time

from conftest import cache_with_this_runs_calibration, read_pty


def _tune_then(signum: int, tmp_path, *flags: str) -> subprocess.CompletedProcess[str]:
    """Start a library tune, send ``signum`` once generation 1 has begun, and collect it."""
    env = {**os.environ, "VAJRA_CACHE_DIR": str(cache_with_this_runs_calibration(tmp_path / "cache")),
           "PYTHONUNBUFFERED": "1"}
    argv = [sys.executable, "-m", "vajra_tui", "tune", "-w", "sgemm", "--size", "128", "--source", "library",
            "--reps", "3", "--warmup", "0", "--record", str(tmp_path / "run.jsonl"), *flags]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    deadline = time.monotonic() + 120
    for line in proc.stderr:  # progress lines (stderr is a pipe, so plain lines, not a bar)
        seen.append(line)
        if "-- generation 1" in line or time.monotonic() > deadline:
            break
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(argv, proc.returncode, out, "".join(seen) + err)


def test_ctrl_c_mid_tune_is_one_line_and_still_one_json_document(tmp_path):
    done = _tune_then(signal.SIGINT, tmp_path, "--json")
    assert done.returncode == 130, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == "vajra-tui: interrupted: kernels measured before it are kept (--resume skips them)"
    doc = json.loads(done.stdout)  # one document, whatever ended the run
    assert doc["winner"] is None and doc["incomplete"] == "interrupted"
    assert any(r["name"] == "baseline" and r["status"] == "verified" for r in doc["results"])
    assert (tmp_path / "run.jsonl").is_file(), "the recording is kept"


def test_sigterm_mid_tune_ends_it_as_ctrl_c_does(tmp_path):
    done = _tune_then(signal.SIGTERM, tmp_path, "--no-cache")  # no cache: nothing said to be kept
    assert done.returncode == 143, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == "vajra-tui: terminated (SIGTERM)"
    assert (tmp_path / "run.jsonl").is_file(), "the recording is kept"



def test_a_program_that_calls_main_keeps_its_own_sigterm_handler(capsys):
    """The routing lasts as long as the command: an embedding's handler is put back after it."""
    from vajra_tui.cli.main import main

    seen: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        mine = signal.getsignal(signal.SIGTERM)
        assert main(["config", "show"]) == 0  # a headless command: SIGTERM was routed while it ran
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, before)


HANG = os.path.join(os.path.dirname(__file__), "kernels", "hang.wgsl")


def _workers_of(parent: int) -> list[int]:
    """The GPU workers ``parent`` started (its children running the worker module)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = open(f"/proc/{entry}/stat").read()
            cmdline = open(f"/proc/{entry}/cmdline", "rb").read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent and b"vajra_tui.engine.gpu.worker" in cmdline:
            found.append(int(entry))
    return found


def _cpu_s(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's exit is reaped by whatever adopted it, maybe never)."""
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_worker_inside_a_hung_kernel_ends_when_its_parent_is_killed(tmp_path):
    """kill -9 of the command, or an SSH session's hangup, mid-kernel. An idle worker sees its
    pipe close; one inside a kernel that never returns never reads it again, and before this
    it held the GPU (and here a core) until the machine restarted."""
    env = {**os.environ, "VAJRA_CACHE_DIR": str(cache_with_this_runs_calibration(tmp_path / "cache"))}
    argv = [sys.executable, "-m", "vajra_tui", "bench", "-w", "sgemm", "--size", "64", "--kernel", HANG,
            "--deadline", "600", "--reps", "3", "--warmup", "0", "-q"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        busy, streak, deadline = None, 0, time.monotonic() + 120
        while streak < 4 and time.monotonic() < deadline and proc.poll() is None:
            # inside the hang lavapipe spins without pause; start-up and the baseline's few
            # dispatches at 64x64x64 are over in well under the four busy seconds asked for
            workers = _workers_of(proc.pid)
            try:
                before = {pid: _cpu_s(pid) for pid in workers}
                time.sleep(1.0)
                spun = [pid for pid in workers if _cpu_s(pid) - before[pid] > 0.6]
            except OSError:
                spun = []
            streak = streak + 1 if spun and spun[0] == busy else (1 if spun else 0)
            busy = spun[0] if spun else None
        assert streak >= 4, "no GPU worker ran the hanging kernel"
    finally:
        proc.kill()
        proc.wait()
    ends = time.monotonic() + 15
    while _running(busy) and time.monotonic() < ends:
        time.sleep(0.2)
    still = _running(busy)
    if still:
        os.kill(busy, signal.SIGKILL)
    assert not still, "the GPU worker outlived its parent inside a hung kernel"


def test_a_hangup_mid_run_publishes_the_recording_and_ends_the_app(tmp_path):
    """The SSH session that ran the TUI goes away mid-run (the terminal closes: SIGHUP). Python's
    default ended the process where it stood, the recording left `.partial`; handled, the app
    then blocked for good writing to the gone terminal. Now the session is saved as q saves
    it, and the process ends with 129 a moment later, its GPU worker with it."""
    from vajra_tui.engine.store.record import Recording

    record = tmp_path / "run.jsonl"
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30", "XDG_RUNTIME_DIR": "/tmp",
           "VAJRA_CONFIG_DIR": str(tmp_path / "config"), "VAJRA_DATA_DIR": str(tmp_path / "data"),
           "VAJRA_CACHE_DIR": str(cache_with_this_runs_calibration(tmp_path / "cache"))}
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real entry point, in the pty
        os.execvpe(sys.executable, [sys.executable, "-m", "vajra_tui", "-w", "sgemm", "--size", "128",
                                    "--source", "library", "--record", str(record)], env)
    out, status, worker = bytearray(), None, None
    try:
        deadline = time.monotonic() + 60
        while b"pick a workload" not in out and time.monotonic() < deadline:
            read_pty(fd, 0.3, out)
        read_pty(fd, 1.0, out)
        os.write(fd, b"\r")  # run sgemm
        while worker is None and time.monotonic() < deadline:
            read_pty(fd, 0.3, out)
            worker = next(iter(_workers_of(pid)), None)
        assert worker is not None, "the run never started a GPU worker"
        read_pty(fd, 1.0, out)
        os.close(fd)  # the terminal goes away
        ends = time.monotonic() + 30
        while status is None and time.monotonic() < ends:
            done, got = os.waitpid(pid, os.WNOHANG)
            status = got if done else None
            time.sleep(0.1)
    finally:
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    assert status is not None, "the app outlived its terminal"
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 128 + signal.SIGHUP, status
    assert record.exists() and not record.with_name(record.name + ".partial").exists()
    assert Recording(record).check() is not None
    for _ in range(50):
        if not _running(worker):
            break
        time.sleep(0.1)
    assert not _running(worker), "the GPU worker outlived the app"

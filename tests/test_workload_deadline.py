"""A workload's own code (make_inputs, reference) runs under a deadline of its own.

It used to share the worker's 900 s Prepare deadline: a ``make_inputs`` that never returns
held ``bench`` for a quarter of an hour and then said "GPU worker failed". Now the limit is
``timing.prepare_deadline_s`` and the message names it, in one line, exit 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cache_with_this_runs_calibration
from vajra_tui.settings import Settings, TimingSettings

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "workloads" / "transpose.py"


def _sleeper(tmp_path: Path) -> Path:
    """The example workload, with a make_inputs that never returns."""
    path = tmp_path / "sleeper.py"
    path.write_text(EXAMPLE.read_text() + "\n\nimport time as _time\n\n\n"
                    "def _forever(size, rng):\n    while True:\n        _time.sleep(3600)\n\n\n"
                    "import dataclasses\nWORKLOAD = dataclasses.replace(WORKLOAD, make_inputs=_forever)\n")
    return path


def test_a_make_inputs_that_never_returns_is_stopped_by_its_deadline(tmp_path):
    env = {**os.environ, "VAJRA_TIMING__PREPARE_DEADLINE_S": "3", "XDG_RUNTIME_DIR": "/tmp"}
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "vajra_tui", "bench", "-w", str(_sleeper(tmp_path)),
                           "--size", "ROWS=32,COLS=32", "-q"],
                          capture_output=True, text=True, env=env, timeout=240)
    took = time.monotonic() - began
    err = done.stderr.strip()
    assert done.returncode == 2, err
    assert err.count("\n") == 0 and "Traceback" not in err and "GPU worker failed" not in err
    assert "make_inputs/reference ran past its 3 s deadline (timing.prepare_deadline_s)" in err
    assert took < 120  # a worker start, a calibration and 3 s; it was 900 s before


def test_the_deadline_is_a_setting_with_a_shorter_default(monkeypatch):
    assert TimingSettings().prepare_deadline_s == 300
    monkeypatch.setenv("VAJRA_TIMING__PREPARE_DEADLINE_S", "1200")
    assert Settings().timing.prepare_deadline_s == 1200  # a large reference may be given longer
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            TimingSettings(prepare_deadline_s=bad)



def _bench_one_line(tmp_path: Path, workload: Path) -> str:
    """``bench -w workload`` in a child under a 3 s deadline: its one stderr line, exit 2 asserted."""
    env = {**os.environ, "VAJRA_TIMING__PREPARE_DEADLINE_S": "3", "XDG_RUNTIME_DIR": "/tmp",
           "VAJRA_CACHE_DIR": str(cache_with_this_runs_calibration(tmp_path / "cache"))}
    done = subprocess.run([sys.executable, "-m", "vajra_tui", "bench", "-w", str(workload),
                           "--size", "ROWS=32,COLS=32", "-q"], capture_output=True, text=True, env=env, timeout=240)
    err = done.stderr.strip()
    assert done.returncode == 2, err
    assert err.count("\n") == 0 and "Traceback" not in err and "GPU worker failed" not in err, err
    return err


def test_a_workload_file_whose_import_never_returns_is_stopped_by_the_deadline(tmp_path):
    """Module-level code that loops forever held `bench` (and the TUI's picker) for good: the
    import had no deadline, only the functions did."""
    path = tmp_path / "hangs.py"
    path.write_text(EXAMPLE.read_text() + "\n\nwhile True:\n    pass\n")
    began = time.monotonic()
    err = _bench_one_line(tmp_path, path)
    assert "importing it ran past its 3 s deadline" in err and "hangs.py" in err
    assert time.monotonic() - began < 60


@pytest.mark.parametrize("ending, said", [
    ("raise KeyboardInterrupt", "make_inputs or reference raised KeyboardInterrupt"),
    ("raise GeneratorExit", "make_inputs or reference raised GeneratorExit"),
    ("import os; os._exit(0)", "the GPU worker ended while preparing this workload"),
])
def test_a_make_inputs_that_ends_the_worker_its_own_way_is_the_workloads_error(tmp_path, ending, said):
    """KeyboardInterrupt, GeneratorExit or os._exit from make_inputs killed the worker and read
    'GPU worker failed: ... died during prepare', exit 1: the workload's fault, said as such."""
    path = tmp_path / "ends.py"
    path.write_text(EXAMPLE.read_text() + f"\n\ndef _ends(size, rng):\n    {ending}\n\n\n"
                    "import dataclasses\nWORKLOAD = dataclasses.replace(WORKLOAD, make_inputs=_ends)\n")
    assert said in _bench_one_line(tmp_path, path)


# ---- the picker while a folder file imports ------------------------------------------------
def _folder_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> Path:
    """A workloads folder of its own (the config dir this test alone uses), holding ``files``."""
    config = tmp_path / "config"
    (config / "workloads").mkdir(parents=True)
    for name, text in files.items():
        (config / "workloads" / name).write_text(text)
    monkeypatch.setenv("VAJRA_CONFIG_DIR", str(config))
    return config / "workloads"


def _example_named(name: str, top_level: str) -> str:
    """The example workload under ``name``, with ``top_level`` code run when it is imported."""
    return EXAMPLE.read_text().replace('name="transpose"', f'name="{name}"') + f"\n\n{top_level}\n"


HANGS = _example_named("hangs", "import time as _time\n_time.sleep(3600)")


def _picker_rows(app) -> list[tuple[str, str]]:
    from textual.widgets import DataTable

    table = app.screen.query_one("#workloads", DataTable)
    return [(str(table.get_row_at(i)[0]), str(table.get_row_at(i)[1])) for i in range(table.row_count)]


def _slow_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed package (a dist-info on sys.path) registering ``slowplug``, whose module
    never finishes importing."""
    from vajra_tui.engine.workloads import registry

    site = tmp_path / "site"
    (site / "vajra_slow_plugin").mkdir(parents=True)
    (site / "vajra_slow_plugin" / "__init__.py").write_text(
        _example_named("slowplug", "import time as _time\n_time.sleep(3600)"))
    info = site / "vajra_slow_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: vajra-slow-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[vajra_tui.workloads]\nslowplug = vajra_slow_plugin:WORKLOAD\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(registry, "_REGISTERED", None)  # read anew here, and again after the test


async def test_a_file_or_plugin_whose_import_hangs_never_freezes_the_picker(tmp_path, monkeypatch):
    """The picker imported the folder, and other packages' registered workloads, on the UI
    thread: one whose top-level code never returned froze the whole TUI (no key, no redraw,
    not even q), until the prepare deadline for a file (300 s by default) and for good for a
    plugin. Their rows now say loading… at once, a built-in can be chosen and read meanwhile,
    a file after the hanging one loads without waiting for it, and at the deadline each
    hanging row gets its one-line error."""
    from textual.widgets import Static

    from test_app import fast_settings, wait_for
    from vajra_tui.engine.workloads import timed_import
    from vajra_tui.tui.app import VajraApp

    deadline = 8.0  # far past the app's start on a loaded machine: the rows are seen loading before it
    monkeypatch.setattr(timed_import, "deadline_s", deadline)
    _folder_with(tmp_path, monkeypatch, {"hangs.py": HANGS, "later.py": _example_named("later", "")})
    _slow_plugin(tmp_path, monkeypatch)
    began = time.monotonic()
    app = VajraApp(fast_settings(), source="library")
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.pause(0.1)
        rows = _picker_rows(app)
        listed_after = time.monotonic() - began
        assert listed_after < deadline, f"the picker was held {listed_after:.1f} s by an import"
        assert rows[0][0] == "sgemm" and rows[-3:-1] == [("slowplug", "loading…"), ("hangs (yours)", "loading…")]
        await pilot.press("down")  # the UI answers keys while they import
        await pilot.pause(0.1)
        assert str(app.screen.query_one("#workload-what", Static).render()).startswith("softmax")
        # a file after the hanging one in the folder is not held back by it
        await wait_for(pilot, lambda: _picker_rows(app)[-1][1] not in ("loading…", ""), "later.py to load", 30)
        assert app.screen.still_importing, "the imports ended before the test could see them load"
        assert _picker_rows(app)[-1][0] == "later (yours)" and time.monotonic() - began < deadline
        await wait_for(pilot, lambda: not app.screen.still_importing, "the imports' deadlines", 90)
        assert [row[1] for row in _picker_rows(app)[-3:-1]] == ["broken", "broken"]
        for row, named in ((len(rows) - 3, "entry point 'slowplug'"), (len(rows) - 2, "hangs.py")):
            app.screen.query_one("#workloads").move_cursor(row=row)
            await pilot.pause(0.1)
            what = str(app.screen.query_one("#workload-what", Static).render())
            assert f"importing it ran past its {deadline:g} s deadline" in what and named in what, what


async def test_enter_on_a_loading_row_runs_it_once_it_has_loaded(tmp_path, monkeypatch):
    """Enter pressed while the row's file still imports is not lost: the picker says so in one
    line, and the run starts when the import finishes, on that workload (start_live is
    recorded, not run: what is under test is which run the picker asks for, and when)."""
    from test_app import fast_settings, wait_for
    from vajra_tui.tui.app import VajraApp

    _folder_with(tmp_path, monkeypatch, {"slow.py": _example_named("slow", "import time as _time\n_time.sleep(4)")})
    app = VajraApp(fast_settings(), source="library", size="ROWS=40,COLS=24")
    started: list = []
    monkeypatch.setattr(app, "start_live", lambda *args: started.append(args))
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.pause(0.1)
        table = app.screen.query_one("#workloads")
        table.move_cursor(row=table.row_count - 1)
        await pilot.pause(0.1)
        assert app.screen.still_importing, "the file's import ended before the test could press Enter"
        await pilot.press("enter")
        await pilot.pause(0.1)
        assert not started and app.current == "picker"
        assert "slow.py is still loading" in str(app.screen.query_one("#picker-error").render())
        await wait_for(pilot, lambda: bool(started), "the run to start once slow.py loaded", 60)
        key, size, _ = started[0]
        assert key.endswith("slow.py") and size == "ROWS=40,COLS=24", started
        assert str(app.screen.query_one("#picker-error").render()) == ""


QUIT_BESIDE_A_HANG = """
import asyncio, sys
from vajra_tui.engine.workloads import timed_import
from vajra_tui.settings import Settings
from vajra_tui.tui.app import VajraApp

timed_import.set_deadline(300)


async def main():
    app = VajraApp(Settings(), source="library", probe=lambda: None)
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.pause(0.3)
        assert app.screen.still_importing
        await pilot.press("q")
    print("quit", flush=True)

asyncio.run(main())
"""


def test_quitting_beside_a_hanging_import_ends_the_process_at_once(tmp_path, monkeypatch):
    """The imports ran on asyncio's executor, whose threads the interpreter waits for at exit:
    q beside a hanging file left the process running until the import's deadline (300 s)."""
    from conftest import child_pythonpath

    _folder_with(tmp_path, monkeypatch, {"hangs.py": HANGS})
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-c", QUIT_BESIDE_A_HANG], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": child_pythonpath(), "XDG_RUNTIME_DIR": "/tmp"})
    took = time.monotonic() - began
    assert done.returncode == 0 and "quit" in done.stdout, done.stderr[-2000:]
    assert took < 60, f"the process outlived its app by {took:.0f} s"


QUIT_BESIDE_A_HANGING_PROBE = """
import asyncio, time
from vajra_tui.settings import Settings
from vajra_tui.tui.app import VajraApp


async def main():
    app = VajraApp(Settings(), source="library", probe=lambda: time.sleep(90))
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("q")
    print("quit", flush=True)

asyncio.run(main())
"""


def test_quitting_while_the_adapter_probe_hangs_ends_the_process_at_once():
    """A driver that hangs while the picker asks for the adapter: the probe ran on asyncio's
    executor, so q left the process waiting for the probe's own timeout (120 s)."""
    from conftest import child_pythonpath

    began = time.monotonic()
    done = subprocess.run([sys.executable, "-c", QUIT_BESIDE_A_HANGING_PROBE], capture_output=True, text=True,
                          timeout=150, env={**os.environ, "PYTHONPATH": child_pythonpath(), "XDG_RUNTIME_DIR": "/tmp"})
    took = time.monotonic() - began
    assert done.returncode == 0 and "quit" in done.stdout, done.stderr[-2000:]
    assert took < 60, f"the process outlived its app by {took:.0f} s"

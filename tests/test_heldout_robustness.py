"""Held-out robustness: a reps count past any sensible one, and a timeout past what poll() takes.

``vajra-tui bench -w gemv --reps 10000`` (also ``VAJRA_TIMING__REPS`` or ``[timing] reps``)
ended in ``OverflowError: timeout is too large`` from ``conn.poll``: the batch's timeout is a
dispatch deadline times every kernel's warm-up and timed dispatches. Now reps and warm-ups
are bounded (settings.MAX_REPS, MAX_WARMUP) with one line and exit status 2, and one exchange
with a GPU worker waits a day at most, whatever timeout it is given.
"""

from __future__ import annotations

import math
from multiprocessing import Pipe
from pathlib import Path

import pytest

from conftest import one_error_line

from vajra_tui.cli.main import main
from vajra_tui.engine.gpu.protocol import Dropped, Drop
from vajra_tui.engine.gpu.standby import MAX_EXCHANGE_TIMEOUT_S, bounded_timeout, exchange
from vajra_tui.settings import MAX_REPS, MAX_WARMUP, TimingSettings


def test_the_bounds_are_what_the_help_says():
    assert MAX_REPS == 1000 and MAX_WARMUP == 1000
    assert TimingSettings(reps=MAX_REPS, warmup=MAX_WARMUP).reps == MAX_REPS
    with pytest.raises(ValueError, match="1000"):
        TimingSettings(reps=MAX_REPS + 1)


@pytest.mark.parametrize("command", ["bench", "tune"])
@pytest.mark.parametrize("flag,value", [("--reps", "10000"), ("--reps", "1001"), ("--warmup", "1001"),
                                        ("--reps", "9" * 40)])
def test_a_reps_count_over_the_bound_is_one_line(capsys, command, flag, value):
    assert main([command, "-w", "gemv", flag, value]) == 2
    line = one_error_line(capsys)
    assert flag in line and "1000" in line, line


@pytest.mark.parametrize("name", ["VAJRA_TIMING__REPS", "VAJRA_REPS"])
def test_a_reps_count_over_the_bound_in_the_environment_is_one_line(capsys, monkeypatch, name):
    monkeypatch.setenv(name, "10000")
    assert main(["bench", "-w", "gemv"]) == 2
    line = one_error_line(capsys)
    assert name in line and "1000" in line, line


def test_a_reps_count_over_the_bound_in_the_config_is_one_line(tmp_path: Path, capsys, monkeypatch):
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "config.toml").write_text("[timing]\nreps = 10000\n")
    monkeypatch.setenv("VAJRA_CONFIG_DIR", str(folder))
    assert main(["bench", "-w", "gemv"]) == 2
    line = one_error_line(capsys)
    assert "config.toml:2" in line and "timing.reps" in line and "1000" in line, line


def test_the_help_names_the_bound(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    assert "at most 1000" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("timeout", [3e9, 1e20, 1e300, math.inf, math.nan])
def test_an_exchange_takes_any_timeout(timeout):
    """poll() refused 3e9 s ("timeout is too large") and 1e20 s ("timestamp too large")."""
    ours, worker = Pipe()
    try:
        worker.send(Dropped(rss_mb=1.0))  # the reply is there already: the wait ends at once
        assert exchange(ours, Drop(), timeout) == Dropped(rss_mb=1.0)
        assert worker.recv() == Drop()
    finally:
        ours.close()
        worker.close()


@pytest.mark.parametrize("given,bounded", [
    (12.5, 12.5), (0.0, 0.0), (-3.0, 0.0), (3e9, MAX_EXCHANGE_TIMEOUT_S), (math.inf, MAX_EXCHANGE_TIMEOUT_S),
    (math.nan, MAX_EXCHANGE_TIMEOUT_S), (10 ** 400, MAX_EXCHANGE_TIMEOUT_S),
])
def test_bounded_timeout(given, bounded):
    assert bounded_timeout(given) == bounded
    assert MAX_EXCHANGE_TIMEOUT_S * 1000 < 2 ** 31  # within what poll() takes, in milliseconds

"""config.toml: values out of range, a byte order mark, and paths that are not files.

Each goes through ``main(["config", "show"])``: a mistake is one line naming the file,
exit status 2; a file a Windows editor saved with a BOM is read as the user meant it; a
path that is a device or a FIFO is refused at once instead of hanging every command.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from conftest import one_error_line

from vajra_tui.cli.main import main
from vajra_tui.config_file import MAX_CONFIG_BYTES, read_config


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own config folder (the suite's is shared by every test of a run)."""
    folder = tmp_path / "config"
    folder.mkdir()
    monkeypatch.setenv("VAJRA_CONFIG_DIR", str(folder))
    return folder / "config.toml"


@pytest.mark.parametrize("body,words", [
    ("[llm]\ntemperature = -1\n", "greater than or equal to 0"),
    ("[llm]\ntemperature = 2.5\n", "less than or equal to 2"),
    ("[llm]\ntemperature = nan\n", "llm.temperature"),
    ("[llm]\nmax_tokens = 1e23\n", "llm.max_tokens"),
    ("[llm]\nmax_tokens = 2000000\n", "less than or equal to 1000000"),
    ("[llm]\nmax_tokens = 0\n", "greater than or equal to 1"),
    ("[llm]\nmax_tokens = -5\n", "greater than or equal to 1"),
    ("[timing]\nreps = 1001\n", "less than or equal to 1000"),
    ("[timing]\nwarmup = 100000\n", "less than or equal to 1000"),
], ids=["temperature-negative", "temperature-above-2", "temperature-nan", "max-tokens-1e23",
        "max-tokens-2e6", "max-tokens-0", "max-tokens-negative", "reps-1001", "warmup-1e5"])
def test_an_out_of_range_value_is_one_line(config, capsys, body, words):
    config.write_text(body)
    assert main(["config", "show"]) == 2
    line = one_error_line(capsys)
    assert "config.toml:2" in line and words in line, line


@pytest.mark.parametrize("name,value,words", [
    ("VAJRA_LLM__TEMPERATURE", "-1", "llm.temperature"),
    ("VAJRA_LLM__MAX_TOKENS", "100000000000000000000000", "llm.max_tokens"),
])
def test_an_out_of_range_environment_value_is_one_line(config, capsys, monkeypatch, name, value, words):
    monkeypatch.setenv(name, value)
    assert main(["config", "show"]) == 2
    line = one_error_line(capsys)
    assert name in line and words in line, line


def test_values_in_range_are_taken(config, capsys):
    config.write_text("[llm]\ntemperature = 0\nmax_tokens = 1000000\n[timing]\nreps = 1000\n")
    assert main(["config", "show"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["llm"]["temperature"] == 0 and shown["llm"]["max_tokens"] == 1_000_000
    assert shown["timing"]["reps"] == 1000


def test_a_byte_order_mark_is_dropped(config, capsys):
    config.write_bytes(b"\xef\xbb\xbf" + b'theme = "nord"\n[timing]\nreps = 3\n')
    assert main(["config", "show"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["theme"] == "nord" and shown["timing"]["reps"] == 3
    # a mistake after the BOM is still said on its own line number
    config.write_bytes(b"\xef\xbb\xbf" + b"[timing]\nreps = 0\n")
    assert main(["config", "show"]) == 2
    assert "config.toml:2" in one_error_line(capsys)


def _run_bounded(argv: list[str], seconds: float = 10.0) -> int:
    """``main(argv)`` on a thread: a hang fails the test instead of holding the suite."""
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, f"{argv} still running after {seconds} s"
    return result[0]


@pytest.mark.parametrize("make", [
    lambda p: p.symlink_to("/dev/zero"),
    lambda p: os.mkfifo(p),
    lambda p: p.mkdir(),
], ids=["symlink-to-dev-zero", "fifo", "directory"])
def test_a_config_path_that_is_not_a_regular_file_is_refused(config, capsys, make):
    make(config)
    began = time.monotonic()
    assert _run_bounded(["config", "show"]) == 2
    line = one_error_line(capsys)
    assert "config.toml" in line and ("not a regular file" in line or "a directory" in line), line
    assert time.monotonic() - began < 5


def test_a_huge_config_file_is_refused_unread(config, capsys):
    config.write_bytes(b"# " + b"x" * MAX_CONFIG_BYTES + b"\n")
    assert main(["config", "show"]) == 2
    line = one_error_line(capsys)
    assert "larger than 1 MB" in line, line


def test_read_config_of_no_file_is_empty(tmp_path):
    assert read_config(tmp_path / "absent.toml") == ({}, {})

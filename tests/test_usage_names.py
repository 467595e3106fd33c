"""Mistakes named for what they are, through the real entry point (one line, exit status 2).

A typo in a top-level flag used to be reported as an unknown command (its value taken for
one); an unknown flag of a subcommand pointed at the top-level help; a short settings alias
silently beat its nested name; ``--csv`` created a folder a typo named. None needs the GPU.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from vajra_tui.cli.main import main

README = Path(__file__).resolve().parents[1] / "README.md"


def one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "Traceback" not in err, err
    assert err.startswith("vajra-tui: ")
    return err


@pytest.mark.parametrize("argv,flag,hint", [
    (["--wrkload", "sgemm"], "--wrkload", "--workload"),
    (["--sise", "64"], "--sise", "--size"),
    (["-w", "sgemm", "--sise", "64"], "--sise", "--size"),
    (["--wrkload=sgemm"], "--wrkload", "--workload"),
])
def test_a_typo_in_a_top_level_flag_is_named(capsys, argv, flag, hint):
    err = one_line_exit_2(capsys, argv)
    assert "invalid choice" not in err and "command" not in err, err
    assert f"unrecognized arguments: {flag}" in err and f"did you mean {hint}?" in err, err
    assert err.endswith("see 'vajra-tui --help'"), err


def test_a_mistyped_command_is_still_a_command(capsys):
    assert "did you mean 'tune'?" in one_line_exit_2(capsys, ["tun", "-w", "sgemm", "--generations", "1"])


@pytest.mark.parametrize("argv,hint,help_of", [
    (["replay", "--hedless"], "--headless", "vajra-tui replay --help"),
    (["replay", "x.jsonl", "--hedless"], "--headless", "vajra-tui replay --help"),
    (["tune", "-w", "sgemm", "--sise", "64"], "--size", "vajra-tui tune --help"),
    (["lock", "merge", "a.json", "--frce"], "--force", "vajra-tui lock merge --help"),
])
def test_a_subcommands_unknown_flag_points_at_its_own_help(capsys, argv, hint, help_of):
    err = one_line_exit_2(capsys, argv)
    assert f"did you mean {hint}?" in err and err.endswith(f"see '{help_of}'"), err


def test_every_registered_workload_is_in_the_help(capsys):
    from vajra_tui.engine.workloads.loader import entry_point_names

    names = entry_point_names()
    assert {"attention", "fft", "fft2"} <= set(names)
    for command in ("tune", "bench"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        listed = re.search(r"a name \(([^)]*), or one from your workloads folder\)", text)
        assert listed and listed.group(1).split(", ") == names, text


def test_a_short_alias_and_its_nested_name_that_disagree_are_refused(capsys, monkeypatch):
    monkeypatch.setenv("VAJRA_WARMUP", "2")
    monkeypatch.setenv("VAJRA_TIMING__WARMUP", "3")
    err = one_line_exit_2(capsys, ["config", "show"])
    assert "VAJRA_WARMUP" in err and "VAJRA_TIMING__WARMUP" in err and "timing.warmup" in err, err
    monkeypatch.delenv("VAJRA_TIMING__WARMUP")
    monkeypatch.setenv("VAJRA_TIMING", '{"warmup": 3}')
    assert "VAJRA_TIMING set timing.warmup" in one_line_exit_2(capsys, ["config", "show"])


def test_a_short_alias_and_its_nested_name_that_agree_are_one_setting(capsys, monkeypatch):
    import json

    monkeypatch.setenv("VAJRA_WARMUP", "3")
    monkeypatch.setenv("VAJRA_TIMING__WARMUP", "3")
    assert main(["config", "show"]) == 0
    assert json.loads(capsys.readouterr().out)["timing"]["warmup"] == 3


def test_the_evolution_budget_is_a_setting_the_cli_and_the_tui_read(capsys, monkeypatch):
    """VAJRA_BUDGET (or ``budget`` in config.toml) sets the TUI's `e` round, which has no flag,
    and tune's default; out of range it is refused in one line, exit 2."""
    import argparse
    import json

    from vajra_tui.cli.commands import run_request
    from vajra_tui.settings import load_settings

    monkeypatch.setenv("VAJRA_BUDGET", "3")
    assert main(["config", "show"]) == 0
    assert json.loads(capsys.readouterr().out)["budget"] == 3
    args = argparse.Namespace(workload="sgemm", size=None, source="library", generations=1, budget=None,
                              record=None)
    assert run_request(args, load_settings(), "tune").budget == 3
    args.budget = 5  # the flag wins
    assert run_request(args, load_settings(), "tune").budget == 5
    for bad in ("0", "many"):
        monkeypatch.setenv("VAJRA_BUDGET", bad)
        assert "VAJRA_BUDGET" in one_line_exit_2(capsys, ["config", "show"])


def test_the_readme_documents_limits_and_the_folders():
    text = README.read_text()
    for name in ("VAJRA_LIMITS", "VAJRA_CACHE_DIR", "VAJRA_DATA_DIR", "VAJRA_CONFIG_DIR"):
        assert f"`{name}`" in text, name
    assert re.search(r"^\| `limits` \| `VAJRA_LIMITS`", text, re.M)


@pytest.mark.parametrize("command", [["tune", "-w", "sgemm"], ["bench", "-w", "sgemm"],
                                     ["replay", "lavapipe-sgemm", "--headless"]])
def test_csv_into_a_folder_that_does_not_exist_is_refused(capsys, tmp_path, command):
    folder = tmp_path / "no" / "such"
    err = one_line_exit_2(capsys, [*command, "--csv", str(folder / "x.csv")])
    assert "--csv" in err and "does not exist" in err, err
    assert not (tmp_path / "no").exists()


def test_csv_into_a_folder_that_exists_is_written(capsys, tmp_path):
    out = tmp_path / "x.csv"
    assert main(["replay", "lavapipe-sgemm", "--headless", "--csv", str(out)]) == 0
    assert out.read_text().startswith("device,")


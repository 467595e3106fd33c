"""The mistakes people make, through the real entry point: one line on stderr, exit status 2.

Bad flags and values, the same values from the config file or the environment,
and broken config files (malformed, wrong type, unknown key, unreadable). None
of these needs the GPU: every one is refused before a worker starts.
"""

from __future__ import annotations

import os

import pytest

from vajra_tui.cli.main import main


def one_line_exit_2(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err and "\n" not in err and "Traceback" not in err, err
    assert err.startswith("vajra-tui: ")
    return err


@pytest.mark.parametrize("argv,needle", [
    (["tune", "-w", "sgemm", "--generations", "-1"], "--generations: -1 is less than 0"),
    (["bench", "-w", "sgemm", "--deadline", "0"], "--deadline: '0' is not a number of seconds"),
    (["bench", "-w", "sgemm", "--deadline", "nan"], "--deadline: 'nan'"),
    (["bench", "-w", "sgemm", "--deadline", "inf"], "--deadline: 'inf'"),
    (["bench", "-w", "sgemm", "--deadline", "soon"], "'soon' is not a number"),
    (["bench", "-w", "sgemm", "--reps", "0"], "--reps: 0 is less than 1"),
    (["bench", "-w", "sgemm", "--warmup", "-3"], "--warmup: -3 is less than 0"),
    (["tune", "-w", "sgemm", "--budget", "0"], "--budget: 0 is less than 1"),
    (["replay", "x.jsonl", "--speed", "-1"], "--speed: '-1' is not a speed"),
    (["replay", "x.jsonl", "--speed", "nan"], "--speed: 'nan'"),
    (["bench", "-w", "sgemm", "--repz", "3"], "did you mean --reps?"),
    (["tune", "-w", "sgemm", "--generatoins", "3"], "did you mean --generations?"),
    (["bnech", "-w", "sgemm"], "did you mean 'bench'?"),
    (["bench"], "the following arguments are required: --workload/-w"),
    (["bench", "-w", "sgemm", "--cache", "hot"], "invalid choice: 'hot'"),
    (["replay"], "replay needs a recording file"),
])
def test_bad_flags_are_one_line(capsys, argv, needle):
    assert needle in one_line_exit_2(capsys, argv)


@pytest.mark.parametrize("env,value,needle", [
    ("VAJRA_REPS", "0", "VAJRA_REPS='0': timing.reps"),
    ("VAJRA_WARMUP", "-1", "VAJRA_WARMUP='-1': timing.warmup"),
    ("VAJRA_DEADLINE", "0", "VAJRA_DEADLINE='0': timing.deadline_s"),
    ("VAJRA_DEADLINE", "nan", "VAJRA_DEADLINE='nan'"),
    ("VAJRA_DEADLINE", "inf", "VAJRA_DEADLINE='inf'"),
    ("VAJRA_TIMING__REPS", "many", "VAJRA_TIMING__REPS='many': timing.reps"),
    # the group as JSON: it was blamed on VAJRA_WARMUP, which nobody had set
    ("VAJRA_TIMING", '{"warmup": "a"}', """VAJRA_TIMING='{"warmup": "a"}': timing.warmup"""),
])
def test_bad_values_from_the_environment(capsys, monkeypatch, env, value, needle):
    """VAJRA_REPS=0 used to "crash" the baseline with no reason and exit 0."""
    monkeypatch.setenv(env, value)
    assert needle in one_line_exit_2(capsys, ["bench", "-w", "sgemm", "--size", "16"])


CONFIGS = {
    "malformed": ('theme = "textual-light"\n[timing\nreps = 3\n', ":2:", "malformed TOML"),
    "wrong type": ('[timing]\nreps = "many"\n', ":2:", "timing.reps = 'many': input should be a valid integer"),
    "out of range": ('[timing]\nwarmup = 2\nreps = 0\n', ":3:", "timing.reps = 0"),
    "deadline zero": ('[timing]\ndeadline_s = 0\n', ":2:", "timing.deadline_s = 0"),
    "deadline nan": ('[timing]\ndeadline_s = nan\n', ":2:", "timing.deadline_s = nan"),
    "unknown key": ('[timing]\nrep = 3\n', ":2:", "unknown key 'timing.rep' (did you mean 'timing.reps'?)"),
    "unknown table": ('[timmig]\nreps = 3\n', ":1:", "unknown key 'timmig' (did you mean 'timing'?)"),
    "dotted key": ('timing.reps = -2\n', ":1:", "timing.reps = -2"),
    "wrong section type": ('llm = 5\n', ":1:", "llm = 5"),
    "not utf-8": (b'theme = "\xff"\n', ":1:", "not UTF-8"),
}


@pytest.mark.parametrize("kind", list(CONFIGS))
def test_config_mistakes_name_file_key_and_line(capsys, user_dirs, kind):
    text, line, needle = CONFIGS[kind]
    path = user_dirs / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    try:
        for argv in (["config", "show"], ["bench", "-w", "sgemm"], ["tune", "-w", "sgemm"]):
            err = one_line_exit_2(capsys, argv)
            assert f"{path}{line}" in err and needle in err, err
        # the command that tells a user where the file is works with a broken one
        assert main(["config", "path"]) == 0
        assert capsys.readouterr().out.strip() == str(path)
    finally:
        path.unlink()


def test_unreadable_config_is_one_line(capsys, user_dirs):
    path = user_dirs / "config" / "config.toml"
    path.mkdir(parents=True)  # a folder where the file should be: unreadable even for root
    try:
        err = one_line_exit_2(capsys, ["config", "show"])
        assert str(path) in err and "cannot read" in err
        assert main(["config", "path"]) == 0
    finally:
        path.rmdir()


def test_good_config_and_environment_apply(capsys, user_dirs, monkeypatch):
    path = user_dirs / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('theme = "textual-light"\n[timing]\nreps = 4\n')
    monkeypatch.setenv("VAJRA_WARMUP", "2")
    try:
        assert main(["config", "show"]) == 0
        shown = capsys.readouterr().out
        assert '"reps": 4' in shown and '"warmup": 2' in shown and "textual-light" in shown
    finally:
        path.unlink()


def test_shell_completion_from_the_parser(capsys):
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert "vajra-tui" in script and "--generations" in script and "setup-node" in script
    assert main(["completion", "zsh"]) == 0
    assert "--deadline" in capsys.readouterr().out


def test_runtime_dir_is_provided_when_unset(monkeypatch):
    from vajra_tui.runtime_env import ensure_runtime_dir

    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    path = ensure_runtime_dir()
    assert path and os.environ["XDG_RUNTIME_DIR"] == path and os.path.isdir(path)
    assert ensure_runtime_dir() is None  # a value that is set is left alone

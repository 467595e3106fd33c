"""Inputs of the wrong kind, each refused in one line before anything runs.

- ``vajra_tui.bench("sgemm", [5])`` (or ``[b"..."]``) raised a bare TypeError; ``[""]`` said
  "kernel file . is a directory".
- A binary workload file said ``w.py:None: syntax error: source code string cannot contain
  null bytes``.
- config.toml's ``[timing] warmup = true`` ran with 1 warm-up, ``reps = "3"`` with 3: the
  README says a value of the wrong type is refused. The environment's values are strings,
  and ``VAJRA_REPS=3`` still reads as 3.
"""

from __future__ import annotations

import pytest

import vajra_tui
from conftest import one_error_line
from vajra_tui.cli.main import main
from vajra_tui.engine.errors import UsageError

WANT = "kernels take file paths, WGSL strings or a {name: source} dict"


# ---- 4. the Python API's kernels= ----------------------------------------------------------
@pytest.mark.parametrize("kernels,said", [
    ([5], "kernel 1 is 5 (type int)"),
    ([b"\xff"], "kernel 1 is b'\\xff' (type bytes)"),
    (["fn main() {}", None], "kernel 2 is None (type NoneType)"),
    (5, "kernels= is 5 (type int)"),
    (b"x", "kernels= is b'x' (type bytes)"),
    ({"mine": 5}, "kernel 'mine' is 5 (type int), not WGSL source"),
    ([""], "kernel 1 is an empty string, not a kernel"),
    (["  "], "kernel 1 is an empty string, not a kernel"),
])
def test_kernels_of_the_wrong_kind_are_one_usage_error(kernels, said):
    with pytest.raises(UsageError) as info:
        vajra_tui.bench("sgemm", kernels)
    assert str(info.value) == f"{said}: {WANT}"


def test_an_empty_kernel_in_the_tui_is_a_candidate_that_says_why():
    from vajra_tui.engine.run.kernels import user_kernels

    [cand] = user_kernels([""], strict=False)
    assert "empty string" in cand.no_kernel_reason and not cand.source


# ---- 5. a binary workload file ---------------------------------------------------------------
@pytest.mark.parametrize("content,said", [
    (b"WORKLOAD = 1\n\xff\xfe\x00\x00junk", "holds NUL bytes (the first is byte 16)"),
    (b'x = "\xff"\nWORKLOAD = 1\n', "not UTF-8 text (byte 6 is 0xff)"),
], ids=["nul-bytes", "not-utf8"])
def test_a_binary_workload_file_is_said_as_what_it_is(tmp_path, capsys, content, said):
    path = tmp_path / "w_binary.py"
    path.write_bytes(content)
    assert main(["bench", "-w", str(path)]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"vajra-tui: {path}: {said}") and ":None" not in line, line


def test_a_syntax_error_still_names_its_line(tmp_path, capsys):
    path = tmp_path / "w_syntax.py"
    path.write_text("WORKLOAD = (\n")
    assert main(["bench", "-w", str(path)]) == 2
    assert f"{path}:1: syntax error" in one_error_line(capsys)


# ---- 6. config.toml values of the wrong type -------------------------------------------------
@pytest.mark.parametrize("body,said", [
    ("[timing]\nwarmup = true\n", "timing.warmup = True: input should be a valid integer"),
    ('[timing]\nreps = "3"\n', "timing.reps = '3': input should be a valid integer"),
    ("[timing]\nreps = 3.0\n", "timing.reps = 3.0: input should be a valid integer"),
    ("[timing]\nclock_bring_up = 1\n", "timing.clock_bring_up = 1: input should be a valid boolean"),
], ids=["bool-warmup", "string-reps", "float-reps", "int-switch"])
def test_a_config_value_of_the_wrong_type_is_refused(user_dirs, capsys, body, said):
    path = user_dirs / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    try:
        assert main(["config", "show"]) == 2
        assert f"{path}:2: {said}" in one_error_line(capsys)
    finally:
        path.unlink()


@pytest.mark.parametrize("name", ["VAJRA_REPS", "VAJRA_TIMING__REPS"])
def test_the_environment_still_reads_numbers_from_strings(user_dirs, capsys, monkeypatch, name):
    path = user_dirs / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[timing]\nwarmup = 2\n[llm]\ntemperature = 1\n")  # an int fills a float field
    monkeypatch.setenv(name, "3")
    try:
        assert main(["config", "show"]) == 0
        shown = capsys.readouterr().out
        assert '"reps": 3' in shown and '"warmup": 2' in shown and '"temperature": 1.0' in shown
    finally:
        path.unlink()

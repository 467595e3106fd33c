"""The Python API holds its arguments to what the CLI's flags are held to, in one line each.

A held-out CI script found: ``size={"M": 64}`` for softmax ran at the seed size without a
word, ``{"ROWS": "x"}`` was a bare TypeError, bad timing values were pydantic's four-line
report with its URL, ``seeds=()`` an IndexError, ``seeds=(1, 1)`` verified twice on one
input set, and ``generations=-1``/``budget=0`` ran although the CLI refuses both. Nothing
here reaches the GPU: every refusal comes before a worker starts.
"""

from __future__ import annotations

import pytest

import vajra_tui
from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.workloads import get_workload


@pytest.mark.parametrize("size, said", [
    ({"M": 64}, "unknown dimension 'M' for softmax: ROWS, COLS"),
    ({"ROWS": 64.5, "COLS": 64}, "bad value for ROWS: 64.5"),
    ({"ROWS": True, "COLS": 4}, "bad value for ROWS: True"),
    ({"ROWS": "x", "COLS": 4}, "bad value for ROWS: 'x'"),
    ({"ROWS": 4, "rows": 8}, "ROWS is given twice"),
])
def test_a_size_dict_is_checked_as_a_size_string_is(size, said):
    with pytest.raises(ValueError) as info:
        get_workload("softmax").size(size)
    assert said in str(info.value) and "\n" not in str(info.value)
    assert get_workload("softmax").size({"rows": 64}) == {"ROWS": 64, "COLS": 1024}  # any case, as --size


@pytest.mark.parametrize("kwargs, said", [
    ({"reps": 0}, "reps=0:"), ({"warmup": -1}, "warmup=-1:"), ({"deadline": float("nan")}, "deadline=nan:"),
    ({"timing": "x"}, "timing='x':"), ({"cache": "hot"}, "cache='hot':"), ({"limits": "x"}, "limits='x': choose"),
    ({"seeds": ()}, "seeds=():"), ({"seeds": (1, 1)}, "seeds=(1, 1): a seed given twice"), ({"seeds": (-1, "a")}, "seeds=(-1, 'a')"),
])
def test_bench_refuses_bad_arguments_in_one_line(kwargs, said):
    with pytest.raises(UsageError) as info:
        vajra_tui.bench("softmax", **kwargs)
    assert str(info.value).startswith(said) and "\n" not in str(info.value) and "pydantic" not in str(info.value)


@pytest.mark.parametrize("kwargs, said", [
    ({"generations": -1}, "generations=-1: want an integer of at least 0"),
    ({"budget": 0}, "budget=0: want an integer of at least 1"),
    ({"shootouts": "x"}, "shootouts='x': choose every or last"),
])
def test_tune_refuses_what_the_cli_refuses(kwargs, said):
    with pytest.raises(UsageError) as info:
        vajra_tui.tune("softmax", **kwargs)
    assert str(info.value) == said


@pytest.mark.parametrize("kwargs, said", [
    (lambda t: {"export": t / "afile"}, "export='{t}/afile' is a file, not a directory"),
    (lambda t: {"record": t}, "record='{t}' is a directory; give a file name"),
    (lambda t: {"record": t / "afile"}, "{t}/afile exists; choose another file for record="),
    (lambda t: {"source": "params"}, "source='params' needs kernels=: a kernel whose"),
])
def test_a_refusal_names_the_argument_not_a_cli_flag(tmp_path, kwargs, said):
    """The API has no flags: "--export directory" sent a script's author to the CLI's help."""
    (tmp_path / "afile").write_text("mine")
    with pytest.raises(UsageError) as info:
        vajra_tui.tune("softmax", **kwargs(tmp_path))
    assert str(info.value).startswith(said.format(t=tmp_path)) and "--" not in str(info.value), str(info.value)
    assert (tmp_path / "afile").read_text() == "mine"

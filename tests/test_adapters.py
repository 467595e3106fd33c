"""Adapters you can choose: every adapter by index, an exact choice, and clear refusals.

Real adapters (lavapipe here); the choice rules are also checked on entries built from
a two-identical-GPU host's listing, which no CI machine has.
"""

from __future__ import annotations

import json

import pytest

from vajra_tui.cli.main import main
from vajra_tui.engine.gpu.adapters import (
    AdapterChoiceError, AdapterEntry, choose, choose_lanes, entries_from, list_adapters,
)
from vajra_tui.engine.scale.local import lane_labels

H200 = dict(name="NVIDIA H200", backend="Vulkan", adapter_type="DiscreteGPU", driver="NVIDIA 570.86",
            vendor_id=0x10DE, device_id=0x2335)
TWO_H200 = [AdapterEntry(index=0, **H200), AdapterEntry(index=1, **H200),
            AdapterEntry(index=2, **{**H200, "backend": "OpenGL"}),
            AdapterEntry(index=3, name="llvmpipe (LLVM 15)", backend="Vulkan", adapter_type="CPU", software=True)]


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return list_adapters()


def test_devices_lists_every_adapter_with_its_index(capsys, rows):
    assert main(["devices", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [d["index"] for d in listed] == list(range(len(rows))) and listed
    assert all(d["adapter_index"] == d["index"] and d["backend"] and d["name"] for d in listed)
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    assert all(f"[{d['index']}] {d['name']}" in out for d in listed)


def test_choose_by_index_and_by_unique_name(rows):
    entries = entries_from(rows)
    assert choose("0", entries).index == 0 and choose(0, entries) == entries[0]
    assert choose("h200 ", TWO_H200[2:3] + TWO_H200[3:]).index == 2
    assert choose("LLVMPIPE", TWO_H200).index == 3  # case-insensitive substring
    with pytest.raises(AdapterChoiceError, match=r"matches 3 adapters.*#0 NVIDIA H200 \(Vulkan.*#2"):
        choose("h200", TWO_H200)
    with pytest.raises(AdapterChoiceError, match=r"no adapter matches 'amd'.*#3 llvmpipe"):
        choose("amd", TWO_H200)
    with pytest.raises(AdapterChoiceError, match="no adapter 4"):
        choose("4", TWO_H200)


def test_gpus_takes_the_model_of_the_chosen_adapter(rows):
    assert [e.index for e in choose_lanes("all", TWO_H200)] == [0, 1]  # not the GL twin, not llvmpipe
    assert [e.index for e in choose_lanes("1", TWO_H200)] == [0]
    assert [e.index for e in choose_lanes("0,0,1", TWO_H200)] == [0, 0, 1]
    assert [e.index for e in choose_lanes("all", TWO_H200, adapter="2")] == [2]
    assert lane_labels([0, 0, 1]) == ["gpu0", "gpu0.2", "gpu1"]
    for bad in ("3", "x", "0,9", "0", "0,2", "1,3"):  # 0,2: a card and its GL twin
        with pytest.raises(AdapterChoiceError):
            choose_lanes(bad, TWO_H200)
    software_only = entries_from(rows)
    assert choose_lanes("all", software_only)[0].index == 0  # nothing else: the software adapter


@pytest.mark.parametrize("argv, needle", [
    (["bench", "-w", "sgemm", "--adapter", "no-such-gpu"], "no adapter matches 'no-such-gpu': #0 "),
    (["bench", "-w", "sgemm", "--adapter", "99"], "no adapter 99: #0 "),
    (["tune", "-w", "sgemm", "--gpus", "0,99"], "--gpus: no adapter 99"),
    (["tune", "-w", "sgemm", "--gpus", "many"], "--gpus 'many': use all"),
])
def test_a_choice_that_names_nothing_is_one_line_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_an_ambiguous_name_lists_the_candidates(capsys, rows):
    names = [r["name"] for r in rows]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is None:
        pytest.skip("every adapter here has a name of its own")
    assert main(["bench", "-w", "sgemm", "--adapter", twice]) == 2
    err = capsys.readouterr().err
    assert "choose one by index" in err and "#0 " in err and "#1 " in err and err.count("\n") == 1


def test_the_chosen_index_is_what_runs_and_what_is_recorded(capsys, rows, tmp_path):
    index = next(r["index"] for r in rows if r["backend"] == "Vulkan")
    record = tmp_path / "run.jsonl"
    code = main(["bench", "-w", "sgemm", "--size", "64", "--adapter", str(index), "--reps", "2",
                 "--warmup", "1", "--json", "-q", "--record", str(record)])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["device"]["adapter_index"] == index and doc["device"]["backend"] == "Vulkan"
    base = doc["results"][0]
    assert base["adapter_index"] == index and base["lane"] == f"gpu{index}"
    started = json.loads(record.read_text().splitlines()[1])
    assert started["type"] == "session_started" and started["device"]["adapter_index"] == index


def test_probe_skips_cleanly_without_nvml(capsys):
    assert main(["devices", "--probe", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed and all(d["nvml"] is None for d in listed if d["vendor_id"] != 0x10DE)


def test_the_busy_probe_names_the_gpu_that_got_busy(monkeypatch):
    """The probe's kernel runs on the real adapter; NVML is the one thing stood in for here
    (no NVIDIA driver on CI): GPU 1's utilization rises while the kernel runs."""
    from types import SimpleNamespace

    from vajra_tui.engine.gpu import identify
    from vajra_tui.engine.gpu.adapters import enumerate_here

    monkeypatch.setattr(identify, "WORKGROUPS", 4)  # a CPU adapter: keep the busy loop small
    monkeypatch.setattr(identify, "PROBE_S", 0.2)
    samples = {"n": 0}

    def utilization(handle):
        samples["n"] += 1
        return SimpleNamespace(gpu=60.0 if handle == "h1" and samples["n"] > 2 else 3.0)

    nvml = SimpleNamespace(nvmlDeviceGetUtilizationRates=utilization)
    gpus = [{"index": i, "handle": f"h{i}", "name": "NVIDIA H200", "pci_bus_id": f"00000000:0{6 + i}:00.0",
             "uuid": f"GPU-{i}"} for i in range(2)]
    match = identify.probe_one(nvml, gpus, enumerate_here()[0])
    assert match is not None and match.index == 1 and match.pci_bus_id.endswith("07:00.0")
    assert match.rise == 57.0 and match.runner_up == 0.0

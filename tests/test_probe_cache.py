"""The NVML probe's mapping, kept for the boot: hits, the changes that must miss, damage.

No NVIDIA GPU here, so the probe itself never runs: the cache is exercised through its
functions on a two-H200 listing (shaped like a real one) and on this machine's own listing,
and ``tune --gpus`` lane resolution with the child process stood in for.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from vajra_tui.cli.main import main
from vajra_tui.engine.events import NvmlMatch
from vajra_tui.engine.gpu import probe_cache
from vajra_tui.engine.gpu.adapters import AdapterEntry, entries_from, list_adapters
from vajra_tui.engine.scale import local

H200 = dict(name="NVIDIA H200", backend="Vulkan", adapter_type="DiscreteGPU", driver="580.159.04",
            vendor_id=0x10DE, device_id=0x2335)
LISTING = [AdapterEntry(index=0, **H200), AdapterEntry(index=1, **H200),
           AdapterEntry(index=2, **{**H200, "backend": "OpenGL", "driver": "4.6.0 NVIDIA 580.159.04"}),
           AdapterEntry(index=3, name="llvmpipe (LLVM 15.0.6, 256 bits)", backend="Vulkan",
                        adapter_type="CPU", driver="Mesa 22.3.6 (LLVM 15.0.6)", vendor_id=0x10005,
                        software=True)]


def gpu(index: int) -> NvmlMatch:
    return NvmlMatch(index=index, pci_bus_id=f"00000000:00:0{6 + index}.0", uuid=f"GPU-{index}",
                     name="NVIDIA H200", rise=22.0, probed_at=1_700_000_000.0 + index)


@pytest.fixture(autouse=True)
def boot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A boot id of our own and a cache folder of this test's own."""
    boot_id = tmp_path / "boot_id"
    boot_id.write_text("2f6a0c1e-0000-4000-8000-000000000001\n")
    monkeypatch.setattr(probe_cache, "BOOT_ID", boot_id)
    monkeypatch.setenv("VAJRA_CACHE_DIR", str(tmp_path / "cache"))
    for name in probe_cache.ENV_KEYS:
        monkeypatch.delenv(name, raising=False)
    return boot_id


def test_a_stored_mapping_loads_back_marked_cached():
    probe_cache.store(LISTING, [0, 1], {0: gpu(1), 1: gpu(0)})  # Vulkan's 0 is NVML's 1
    found = probe_cache.load(LISTING, [0, 1])
    assert found[0].index == 1 and found[1].uuid == "GPU-0" and found[1].pci_bus_id == "00000000:00:06.0"
    assert all(m.cached for m in found.values()) and found[0].probed_at == gpu(1).probed_at
    assert found[0].model_copy(update={"cached": False}) == gpu(1)
    stored = json.loads(probe_cache.path().read_text())
    assert not any(m["cached"] for e in stored["keys"].values() for m in e["matches"].values())


def test_this_machines_own_listing_round_trips():
    entries = entries_from(list_adapters())
    probe_cache.store(entries, [entries[0].index], {entries[0].index: gpu(0)})
    assert probe_cache.load(entries, [entries[0].index])[entries[0].index].uuid == "GPU-0"


def test_another_boot_misses_and_its_entries_are_dropped(boot: Path):
    probe_cache.store(LISTING, [0, 1], {0: gpu(0), 1: gpu(1)})
    boot.write_text("2f6a0c1e-0000-4000-8000-000000000002\n")
    assert probe_cache.load(LISTING, [0, 1]) == {}
    probe_cache.store(LISTING, [0], {0: gpu(1)})
    assert len(json.loads(probe_cache.path().read_text())["keys"]) == 1


def test_no_boot_id_no_cache(boot: Path):
    boot.unlink()
    probe_cache.store(LISTING, [0, 1], {0: gpu(0), 1: gpu(1)})
    assert probe_cache.load(LISTING, [0, 1]) == {} and not probe_cache.path().exists()


@pytest.mark.parametrize("name", ["CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "VK_ICD_FILENAMES",
                                  "VK_LOADER_DEVICE_SELECT", "MESA_VK_DEVICE_SELECT"])
def test_an_enumeration_variable_misses(name: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(name, "0,1")
    probe_cache.store(LISTING, [0, 1], {0: gpu(0), 1: gpu(1)})
    assert len(probe_cache.load(LISTING, [0, 1])) == 2
    monkeypatch.setenv(name, "1")
    assert probe_cache.load(LISTING, [0, 1]) == {}
    monkeypatch.delenv(name)
    assert probe_cache.load(LISTING, [0, 1]) == {}
    monkeypatch.setenv(name, "0,1")  # and the first environment is still kept
    assert len(probe_cache.load(LISTING, [0, 1])) == 2


def test_choosing_an_adapter_is_not_an_enumeration_change(monkeypatch: pytest.MonkeyPatch):
    probe_cache.store(LISTING, [0, 1], {0: gpu(0), 1: gpu(1)})
    monkeypatch.setenv("VAJRA_ADAPTER", "1")
    assert len(probe_cache.load(LISTING, [0, 1])) == 2


@pytest.mark.parametrize("changed", [
    LISTING[:1] + LISTING[2:],  # a GPU gone
    [e.model_copy(update={"driver": "580.200.01"}) for e in LISTING],  # a driver update
    [LISTING[1].model_copy(update={"index": 0}), LISTING[0].model_copy(update={"index": 1}),
     LISTING[3].model_copy(update={"index": 2}), LISTING[2].model_copy(update={"index": 3})],  # reordered
])
def test_a_changed_adapter_list_misses(changed: list[AdapterEntry]):
    probe_cache.store(LISTING, [0, 1], {0: gpu(0), 1: gpu(1)})
    assert probe_cache.load(changed, [0, 1]) == {}


@pytest.mark.parametrize("damage", [
    b"\x00\xff\xfe garbage \x80", b"{\"version\": 1, \"keys\": ", b"[1, 2, 3]",
    b"{\"version\": 1, \"keys\": []}", b"{\"version\": 99, \"keys\": {}}",
])
def test_a_damaged_file_is_a_miss_and_is_rewritten(damage: bytes):
    probe_cache.path().parent.mkdir(parents=True, exist_ok=True)
    probe_cache.path().write_bytes(damage)
    assert probe_cache.load(LISTING, [0, 1]) == {}
    probe_cache.store(LISTING, [0, 1], {0: gpu(0), 1: gpu(1)})
    assert len(probe_cache.load(LISTING, [0, 1])) == 2


def test_a_damaged_entry_is_a_miss_for_that_adapter_only():
    probe_cache.store(LISTING, [0, 1], {0: gpu(0), 1: gpu(1)})
    data = json.loads(probe_cache.path().read_text())
    matches = next(iter(data["keys"].values()))["matches"]
    matches["0"] = {"index": "not a number"}
    matches["1"]["extra"] = "ignored"
    probe_cache.path().write_text(json.dumps(data))
    assert list(probe_cache.load(LISTING, [0, 1])) == [1]
    next(iter(data["keys"].values()))["matches"] = "not a mapping"
    probe_cache.path().write_text(json.dumps(data))
    assert probe_cache.load(LISTING, [0, 1]) == {}


def test_a_subset_is_served_and_new_probes_merge_in():
    probe_cache.store(LISTING, [1], {1: gpu(0)})
    assert list(probe_cache.load(LISTING, [0, 1])) == [1]
    assert probe_cache.load(LISTING, [0]) == {}
    probe_cache.store(LISTING, [0], {0: gpu(1)})
    found = probe_cache.load(LISTING, [1, 0])
    assert found[0].index == 1 and found[1].index == 0


def test_a_fresh_probe_replaces_and_a_failed_one_forgets():
    probe_cache.store(LISTING, [0, 1], {0: gpu(0), 1: gpu(1)})
    probe_cache.store(LISTING, [0, 1], {0: gpu(1)})  # adapter 1 blurred this time: no answer
    found = probe_cache.load(LISTING, [0, 1])
    assert list(found) == [0] and found[0].index == 1


def test_nothing_probed_writes_no_file():
    probe_cache.store(LISTING, [3], {})
    assert not probe_cache.path().exists()


def test_devices_probe_keeps_a_file_only_for_what_it_matched(capsys):
    """Without NVML (or without an NVIDIA adapter) nothing is probed and no file is written;
    on a GPU host the probe's matches are kept (the H200 runs of the suite have NVML)."""
    assert main(["devices", "--probe", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and probe_cache.path().exists() == any(row.get("nvml") for row in rows)


# ---- tune --gpus: the cache first, a probing child only for what it lacks ------------
class FakeChild:
    """``list_adapters`` as the child process answers it on a two-H200 host."""

    def __init__(self) -> None:
        self.probed: list[list[int]] = []

    def __call__(self, probe=(), timeout: float = 0.0) -> list[dict]:
        rows = [e.model_dump() for e in LISTING]
        if probe:
            wanted = list(probe)
            self.probed.append(wanted)
            found = {i: gpu(1 - i).model_copy(update={"probed_at": time.time()}) for i in wanted}
            for index, match in found.items():
                rows[index]["nvml"] = match.model_dump()
            probe_cache.store(LISTING, wanted, found)  # as adapters._main does
        return rows


def test_lanes_probe_once_then_reuse_the_cache(monkeypatch: pytest.MonkeyPatch):
    child = FakeChild()
    monkeypatch.setattr(local, "list_adapters", child)
    first = local.local_lanes("all")
    assert child.probed == [[0, 1]] and [c.nvml.index for c in first] == [1, 0]
    assert not any(c.nvml.cached for c in first)
    again = local.local_lanes("0,1")
    assert child.probed == [[0, 1]] and [c.nvml.index for c in again] == [1, 0]
    assert all(c.nvml.cached and c.nvml.probed_at for c in again)


def test_only_the_uncached_adapter_is_probed(monkeypatch: pytest.MonkeyPatch):
    child = FakeChild()
    monkeypatch.setattr(local, "list_adapters", child)
    assert local.resolve_adapter("1")[1].index == 0 and child.probed == [[1]]
    lanes = local.local_lanes("all")
    assert child.probed == [[1], [0]]
    assert [(c.nvml.index, c.nvml.cached) for c in lanes] == [(1, False), (0, True)]


def test_a_listing_that_changed_under_the_probe_claims_nothing(monkeypatch: pytest.MonkeyPatch):
    child = FakeChild()

    def moved(probe=(), timeout: float = 0.0) -> list[dict]:
        rows = child(probe, timeout)
        return rows[:1] + rows[2:] if probe else rows  # GPU 1 vanished between the two children

    monkeypatch.setattr(local, "list_adapters", moved)
    assert all(c.nvml is None for c in local.local_lanes("all"))

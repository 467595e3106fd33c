"""The adapters of this host as lanes: ``--adapter`` and ``tune --gpus`` resolved exactly.

The parent asks a child process for the adapter list (gpu/adapters.py), chooses by index
or name (an unknown or ambiguous name is an :class:`AdapterChoiceError`, which the CLI
prints as one line, exit 2), and hands each worker an *index*, so the worker runs on
exactly the adapter that was chosen. NVIDIA adapters are identified by a short NVML
probe first (gpu/identify.py), so each lane's telemetry samples its own GPU; the probe runs
once per boot and environment (gpu/probe_cache.py), later runs reuse its answer.
"""

from __future__ import annotations

from collections import Counter

from vajra_tui.engine.events import NvmlMatch
from vajra_tui.engine.gpu import probe_cache
from vajra_tui.engine.gpu.adapters import AdapterChoiceError, AdapterEntry, choose, choose_lanes, entries_from, list_adapters
from vajra_tui.engine.gpu.client import GPUClient
from vajra_tui.engine.gpu.identify import NVIDIA_VENDOR_ID


def _entries() -> tuple[list[AdapterEntry], list[dict]]:
    try:
        rows = list_adapters()
    except Exception as exc:  # noqa: BLE001 - wgpu missing or broken: one line, not a traceback
        raise AdapterChoiceError(f"could not list the adapters: {exc}") from None
    return entries_from(rows), rows


def _probed(chosen: list[AdapterEntry], entries: list[AdapterEntry]) -> dict[int, NvmlMatch]:
    """NVML identities of the chosen NVIDIA adapters ({} without NVML: lavapipe, AMD...).

    Read from this boot's probe cache where it has them; only the others are probed, by a
    second child (the probe needs the adapters in the process that loads the driver).
    """
    wanted = sorted({e.index for e in chosen if e.vendor_id == NVIDIA_VENDOR_ID and not e.software})
    if not wanted:
        return {}
    found = probe_cache.load(entries, wanted)
    missing = [i for i in wanted if i not in found]
    return {**found, **_probe_now(missing, entries)} if missing else found


def _probe_now(indices: list[int], entries: list[AdapterEntry]) -> dict[int, NvmlMatch]:
    """Probe ``indices`` now (the child also stores the answer in the probe cache)."""
    try:
        rows = list_adapters(probe=indices)
    except Exception:  # noqa: BLE001 - no identity is a missing identity, not a failed run
        return {}
    if entries_from(rows) != entries:  # the list changed since the choice: an index may
        return {}  # name another GPU now, so claim no identity rather than a wrong one
    return {r["index"]: NvmlMatch.model_validate(r["nvml"]) for r in rows
            if r.get("nvml") and r["index"] in indices}


def resolve_adapter(spec: str | None) -> tuple[int | None, NvmlMatch | None]:
    """``--adapter INDEX|NAME`` as (index, NVML identity); (None, None) for the default."""
    if spec is None or not str(spec).strip():
        return None, None
    entries, _ = _entries()
    entry = choose(spec, entries)
    return entry.index, _probed([entry], entries).get(entry.index)


def lane_labels(indices: list[int]) -> list[str]:
    """``gpu0``, ``gpu1``; a repeated index gets ``gpu0.2``, ``gpu0.3`` (two workers, one adapter)."""
    seen: Counter[int] = Counter()
    labels = []
    for index in indices:
        seen[index] += 1
        labels.append(f"gpu{index}" if seen[index] == 1 else f"gpu{index}.{seen[index]}")
    return labels


def local_lanes(gpus: str, adapter: str | None = None, nice: int = 0) -> list[GPUClient]:
    """One (unstarted) GPUClient per adapter ``--gpus`` names (see adapters.choose_lanes)."""
    entries, _ = _entries()
    chosen = choose_lanes(gpus, entries, adapter)
    nvml = _probed(chosen, entries)
    labels = lane_labels([e.index for e in chosen])
    return [GPUClient(e.index, nice=nice, label=label, nvml=nvml.get(e.index))
            for e, label in zip(chosen, labels)]

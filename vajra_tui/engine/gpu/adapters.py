"""Which adapter runs a kernel: every adapter wgpu sees, by index, and an exact choice.

On a host with identical GPUs, wgpu reports the same name, vendor and device ids and
driver string for each, and no PCI bus id or UUID; an OpenGL adapter may name the same
card again. A name therefore cannot pick one of them, and asking for a name that is not
there must not fall back to whatever adapter exists (it used to: llvmpipe, exit 0).

The *index* is the position in ``wgpu.gpu.enumerate_adapters_sync()``. It is stable for
the same environment and driver only: a driver update, a different ``CUDA_VISIBLE_DEVICES``
or another loader may reorder (measured on 2xH200: index 0 was nvidia-smi's GPU 1 and,
with ``CUDA_VISIBLE_DEVICES=1``, GPU 0). Where NVML exists, :mod:`.identify` tells which
NVML GPU an index really is by a short busy probe (kept for the boot: :mod:`.probe_cache`);
nothing else is guaranteed.

The parent never loads a driver itself (drivers print to stderr and take memory): it asks
``python -m vajra_tui.engine.gpu.adapters`` for the list. The worker resolves the same
index in its own process with :func:`pick`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Iterable

from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.child import child_env, module_command
# AdapterEntry lives below this module (identify.py and probe_cache.py use it too); callers import it from here
from vajra_tui.engine.gpu.adapter_entry import SOFTWARE_HINTS, AdapterEntry

LIST_TIMEOUT_S = 120.0


class AdapterChoiceError(UsageError):
    """``--adapter``/``--gpus`` named no adapter, or more than one: one line with the candidates."""


# ---- in the process that loads the driver -----------------------------------
def entry_of(index: int, info: Any) -> AdapterEntry:
    """An :class:`AdapterEntry` from wgpu's adapter info (a dict-like)."""
    name = info.get("device", "") or info.get("description", "") or "unknown adapter"
    kind = str(info.get("adapter_type", ""))
    return AdapterEntry(index=index, name=str(name), backend=str(info.get("backend_type", "")),
                        adapter_type=kind, driver=str(info.get("description", "")),
                        vendor_id=int(info.get("vendor_id", 0) or 0),
                        device_id=int(info.get("device_id", 0) or 0),
                        software=kind.lower() == "cpu" or any(h in str(name).lower() for h in SOFTWARE_HINTS))


def enumerate_here() -> list[Any]:
    """wgpu's adapters in enumeration order: position = index (loads the driver)."""
    import wgpu

    return list(wgpu.gpu.enumerate_adapters_sync())


def pick(spec: str | int | None = None) -> tuple[int, Any]:
    """(index, adapter) for ``spec``: an index, a name substring, or None for the default.

    The default is wgpu's high-performance adapter, taken from the enumerated list (the
    first with the same info), so its index is known and recorded.
    """
    adapters = enumerate_here()
    if not adapters:
        raise RuntimeError("no WebGPU adapter found")
    entries = [entry_of(i, a.info) for i, a in enumerate(adapters)]
    if spec is None or str(spec).strip() == "":
        # a host-wide default for scripts and CI (the README's test command on a shared GPU host)
        spec = os.environ.get("VAJRA_ADAPTER", "").strip() or None
    if spec is None:
        index = default_index(adapters, entries)
        return index, adapters[index]
    chosen = choose(spec, entries)
    return chosen.index, adapters[chosen.index]


def default_index(adapters: list[Any], entries: list[AdapterEntry]) -> int:
    import wgpu

    wanted = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    if wanted is not None:
        info = dict(wanted.info)
        for index, adapter in enumerate(adapters):
            if dict(adapter.info) == info:
                return index
    hardware = [e for e in entries if not e.software]
    return (hardware or entries)[0].index


# ---- anywhere: choosing among entries -----------------------------------------
def choose(spec: str | int, entries: list[AdapterEntry]) -> AdapterEntry:
    """The one adapter ``spec`` names: an index, or a case-insensitive name substring.

    A name that matches several adapters is always refused: identical GPUs are exactly
    the case where a name cannot choose. Errors list the candidates.
    """
    text = str(spec).strip()
    if not entries:
        raise AdapterChoiceError("no WebGPU adapter found (install a Vulkan driver, e.g. mesa-vulkan-drivers)")
    if text.lstrip("-").isdigit():
        index = int(text)
        if 0 <= index < len(entries):
            return entries[index]
        raise AdapterChoiceError(f"no adapter {index}: {candidates(entries)}")
    if not text:
        raise AdapterChoiceError(f"an empty adapter name matches every adapter: {candidates(entries)}")
    found = [e for e in entries if text.lower() in e.name.lower()]
    if len(found) == 1:
        return found[0]
    if not found:
        raise AdapterChoiceError(f"no adapter matches {text!r}: {candidates(entries)}")
    raise AdapterChoiceError(f"{text!r} matches {len(found)} adapters, choose one by index: "
                             f"{candidates(found)}")


def candidates(entries: Iterable[AdapterEntry]) -> str:
    return "; ".join(e.describe() for e in entries)


def same_model(entries: list[AdapterEntry], first: AdapterEntry) -> list[AdapterEntry]:
    """Every adapter of ``first``'s device model and backend (the GL duplicate is another backend)."""
    return [e for e in entries if e.model == first.model]


def choose_lanes(gpus: str, entries: list[AdapterEntry], adapter: str | None = None) -> list[AdapterEntry]:
    """The adapters ``--gpus`` asks for, one lane each (a repeated index is one more lane).

    ``all``: every adapter of the device model of the ``--adapter`` one (else of the first
    hardware adapter; software only when there is nothing else). ``N``: the first N of
    those. ``i,j,...``: exactly these indices, all of one model (else speedups from
    different lanes would not compare), repeats allowed (``0,0`` = two workers on adapter
    0, how tests exercise two lanes on one real adapter).
    """
    text = gpus.strip().lower()
    if "," in text:
        chosen = [choose(part, entries) for part in text.split(",") if part.strip() != ""] or _bad_gpus(gpus)
        if len({e.model for e in chosen}) > 1:  # speedups on different models do not compare
            raise AdapterChoiceError(f"--gpus {gpus}: not one device model: {candidates(chosen)}")
        return chosen
    if adapter is not None and str(adapter).strip():
        first = choose(adapter, entries)
    else:
        hardware = [e for e in entries if not e.software]
        first = (hardware or entries or [None])[0]  # type: ignore[list-item]
        if first is None:
            raise AdapterChoiceError("no WebGPU adapter found")
    pool = same_model(entries, first)
    if text == "all":
        return pool
    if not text.isdigit() or int(text) < 1:
        return _bad_gpus(gpus)
    if int(text) > len(pool):
        raise AdapterChoiceError(f"--gpus {text}: only {len(pool)} adapter(s) of {first.name} "
                                 f"({first.backend}): {candidates(pool)}")
    return pool[:int(text)]


def _bad_gpus(gpus: str) -> list[AdapterEntry]:
    raise AdapterChoiceError(f"--gpus {gpus!r}: use all, a count (2) or adapter indices (0,1)")


# ---- the parent: ask a subprocess --------------------------------------------
def list_adapters(probe: Iterable[int] | bool = (), timeout: float = LIST_TIMEOUT_S) -> list[dict[str, Any]]:
    """Every adapter as a dict: an AdapterEntry's fields, ``device`` (its DeviceInfo) and,
    for the NVIDIA adapters among ``probe`` (indices, or True: all), ``nvml`` (identify.py).

    Asked of a child process, so this process never loads a driver.
    """
    which = "all" if probe is True else ",".join(str(i) for i in (probe or []))
    args = module_command("vajra_tui.engine.gpu.adapters", *(["--probe", which] if which else []))
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, env=child_env())
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        errors = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        raise RuntimeError(errors[-1] if errors else "wgpu could not list adapters")
    return json.loads(lines[-1])


def entries_from(rows: list[dict[str, Any]]) -> list[AdapterEntry]:
    return [AdapterEntry.model_validate(r) for r in rows]


def _main(argv: list[str]) -> int:
    """``python -m vajra_tui.engine.gpu.adapters [--probe all|i,j]``: the list as one JSON line."""
    from vajra_tui.engine.gpu.adapter_info import device_info

    adapters = enumerate_here()
    rows = []
    for index, adapter in enumerate(adapters):
        row = entry_of(index, adapter.info).model_dump()
        row["device"] = device_info(adapter, index=index).model_dump()
        rows.append(row)
    if "--probe" in argv:
        from vajra_tui.engine.gpu import probe_cache
        from vajra_tui.engine.gpu.identify import probe_all

        which = argv[argv.index("--probe") + 1] if len(argv) > argv.index("--probe") + 1 else "all"
        entries = entries_from(rows)
        targets = [e for e in entries if which == "all" or str(e.index) in which.split(",")]
        found = probe_all(adapters, targets)
        for index, match in found.items():
            rows[index]["nvml"] = match.model_dump()
        # always a fresh probe here (``devices --probe`` refreshes); what it found is kept for the boot
        probe_cache.store(entries, [e.index for e in targets], found)
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))

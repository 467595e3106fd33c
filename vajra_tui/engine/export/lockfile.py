"""Lockfiles: where, how fast and how correct a kernel was measured, mergeable across machines.

Entries are keyed by device, workload, size and the kernel's sha256, so the same kernel
measured on several adapters can be compared after ``merge_locks`` (lock_merge.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from vajra_tui import __version__
from vajra_tui.safe_text import deeper_than, one_line
from vajra_tui.engine.events import CandidateResult, DeviceInfo, WorkloadInfo
from vajra_tui.engine.export.names import passes as checked_passes
from vajra_tui.engine.export.program import lock_fields
from vajra_tui.engine.export.wgsl import browser_enables

LOCK_NAME = "vajra.lock.json"
LOCK_SCHEMA = "vajra.lock"
LOCK_SCHEMA_VERSION = 1

# A lockfile nests about six levels (lock > entries > entry > kernel > params > value); deeper
# is damage or an attack, refused before validation, sorting or printing walk it recursively.
MAX_LOCK_DEPTH = 32
# A lockfile entry is about 2 KB: 256 MiB is a hundred thousand of them and more. A larger file
# (or a device that never ends) is not read into memory.
MAX_LOCK_BYTES = 256 << 20

_TIMING_FIELDS = ("median_ms", "iqr_ms", "p25_ms", "p75_ms", "min_ms", "max_ms")
_DEVICE_FIELDS = ("vendor", "name", "driver", "backend", "adapter_type", "software",
                  "vendor_id", "device_id")


# ---- lock entries --------------------------------------------------------------
def device_key(device: DeviceInfo | dict[str, Any]) -> str:
    """The adapter identity entries are compared by (same form as the calibration cache)."""
    d = device.model_dump() if isinstance(device, DeviceInfo) else device
    return (f"{d.get('name', '')}|{d.get('driver', '')}|{d.get('backend', '')}|"
            f"{int(d.get('vendor_id') or 0):x}:{int(d.get('device_id') or 0):x}")


def size_label(size: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in size.items())


def entry_key(entry: dict[str, Any]) -> str:
    """``device | workload | size | sha256``: one measurement slot in a lockfile."""
    return " / ".join((
        device_key(entry["device"]), entry["workload"]["name"],
        size_label(entry["workload"]["size"]), entry["kernel"]["sha256"],
    ))


def _finite(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _sha256(text: str) -> str:
    return sha256_bytes(text.encode())


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def verified_sha(result: CandidateResult) -> str:
    """The kernel's sha256; refuses results that cannot be exported faithfully."""
    if result.status != "verified":
        raise ValueError(f"only verified kernels can be exported: {result.name!r} is {result.status}")
    if not result.stitched_source:
        raise ValueError(f"{result.name!r} has no stitched source to export")
    if len(result.grid) != 3 or min(result.grid) < 1:
        raise ValueError(f"{result.name!r} has no dispatch grid (got {result.grid})")
    from vajra_tui.engine.admission.contract import kernel_identity

    # source (and override values); a multi-pass result's identity holds its other modules too
    others = "".join(f"\n// pass {p['entry']}\n{p['source']}" for p in checked_passes(list(result.passes))
                     if not p["own"])
    sha = kernel_identity(result.stitched_source + others, result.constants)
    if result.source_sha256 and result.source_sha256 != sha:
        raise ValueError(f"{result.name!r}: stitched source does not match its sha256 "
                         f"{result.source_sha256[:12]}…")
    return sha


def _adapter(result: CandidateResult, device: DeviceInfo) -> dict[str, Any]:
    """Which adapter timed the entry (its index holds for one environment and driver only;
    with several GPUs, the lane that timed it). Never part of the key: identical GPUs are one
    device to a lockfile."""
    index = result.adapter_index if result.adapter_index is not None else device.adapter_index
    out: dict[str, Any] = {"adapter_index": index,
                           "adapter": f"#{index} {device.name} ({device.backend}, {device.driver})"
                           if index is not None else f"{device.name} ({device.backend}, {device.driver})"}
    if result.lane:
        out["lane"] = result.lane
    if device.nvml is not None and (result.adapter_index is None or result.adapter_index == device.adapter_index):
        out["nvml"] = {"index": device.nvml.index, "pci_bus_id": device.nvml.pci_bus_id, "uuid": device.nvml.uuid}
    return out


def portability_block(result: CandidateResult, limits: str | None) -> dict[str, Any]:
    """What the kernel was crowned by (``limits``: "portable", WebGPU's default limits, or
    "adapter"; None: not known, an older recording) and whether it fits the defaults, with why not."""
    return {"limits": limits, "portable": result.portable, "problems": list(result.portability)}


def lock_entry(result: CandidateResult, device: DeviceInfo, workload: WorkloadInfo,
               limits: str | None = None, seeds: Sequence[int] = (), timed_seed: int | None = None) -> dict[str, Any]:
    """One lockfile entry: which kernel, on which adapter, how fast, how verified, and how portable."""
    sha = verified_sha(result)
    entry: dict[str, Any] = {
        "device": {"key": device_key(device), **{f: getattr(device, f) for f in _DEVICE_FIELDS},
                   **_adapter(result, device)},
        "workload": {"name": workload.name, "size": dict(workload.size),
                     "flops": workload.flops, "min_bytes": workload.min_bytes},
        "kernel": {
            "sha256": sha, "name": result.name, "strategy": result.strategy,
            "origin": result.origin, "generation": result.generation,
            "workgroup_size": list(result.workgroup_size), "grid": list(result.grid),
            # a params-search winner: its `override` values (pipeline constants) and the
            # sha256 of the source they were set on
            **({"constants": dict(result.constants), "source_sha256": _sha256(result.stitched_source),
                "params": {k: v for k, v in result.params.items() if k != "key"}}
               if result.constants else {}),
            # the directives the exported .wgsl carries (subgroups added back for browsers)
            "enables": browser_enables(result.stitched_source)[0],
            **lock_fields(result),
        },
        "timing": {
            **{f: _finite(getattr(result, f)) for f in _TIMING_FIELDS},
            "method": result.timing, "samples": len(result.times_ms),
            "warmup": result.warmup, "batch": result.batch, "cache": result.cache_state,
        },
        "verification": {"status": result.status, "max_rel_error": _finite(result.max_rel_error),
                         "atol": workload.atol, "rtol": workload.rtol,
                         # the inputs it verified on, and the run's own seed it was timed (and
                         # checked) on: what a script needs to reproduce the verdict
                         **({"seeds": list(seeds)} if seeds else {}),
                         **({"timed_on_seed": timed_seed} if timed_seed is not None else {})},
        "throughput": {"gflops": _finite(result.gflops), "gbps": _finite(result.gbps),
                       "pct_of_roofline": _finite(result.pct_of_roofline),
                       "speedup_vs_baseline": _finite(result.speedup)},
        "portability": portability_block(result, limits),
        "tool_version": __version__,
        "exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }
    return {"key": entry_key(entry), **entry}


# ---- lockfiles -----------------------------------------------------------------
def build_lock(entries: list[dict[str, Any]], files: dict[str, str] | None = None) -> dict[str, Any]:
    """A lockfile from entries: one per key (the newest wins), plus the kernels index.

    ``files`` (export folders only) maps each exported file name to the sha256
    of the kernel it holds now.
    """
    by_key: dict[str, dict[str, Any]] = {}
    for entry in entries:
        key = entry_key(entry)
        # the device key is derived from the device fields, never trusted as stored
        entry = {"key": key, **{k: v for k, v in entry.items() if k != "key"}}
        entry["device"] = {**entry["device"], "key": device_key(entry["device"])}
        old = by_key.get(key)  # same slot: the newest export wins, a later file on a tie
        if old is None or str(entry.get("exported_at", "")) >= str(old.get("exported_at", "")):
            by_key[key] = entry
    ordered = sorted(by_key.values(), key=lambda e: (
        e["workload"]["name"], size_label(e["workload"]["size"]), e["kernel"]["sha256"],
        e["device"]["key"]))
    kernels: dict[str, dict[str, Any]] = {}
    for e in ordered:
        k = kernels.setdefault(e["kernel"]["sha256"], {
            "workload": e["workload"]["name"], "size": e["workload"]["size"],
            "name": e["kernel"].get("name", ""), "devices": []})
        k["devices"].append({
            "key": e["device"]["key"], "name": e["device"].get("name", ""),
            "backend": e["device"].get("backend", ""), "software": e["device"].get("software", False),
            "median_ms": e["timing"].get("median_ms"), "method": e["timing"].get("method"),
            "status": e["verification"].get("status"),
        })
    for k in kernels.values():
        timed = [d for d in k["devices"] if d["median_ms"] is not None]
        k["fastest"] = min(timed, key=lambda d: d["median_ms"])["key"] if timed else None
    lock = {
        "schema": LOCK_SCHEMA,
        "schema_version": LOCK_SCHEMA_VERSION,
        "tool": "vajra-tui",
        "tool_version": __version__,
    }
    if files is not None:
        lock["files"] = dict(sorted(files.items()))
    return {
        **lock,
        "entries": ordered,
        "kernels": kernels,
    }


def dump_lock(lock: dict[str, Any]) -> str:
    return json.dumps(lock, indent=2, ensure_ascii=False) + "\n"


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _shown(value: Any) -> str:
    """A value from the file, quoted in a message: one short line."""
    return one_line(repr(value), 40)


# Fields that are compared, sorted and printed as text: a list, a number or null there used
# to end in a TypeError (unhashable, or an int sorted beside a string).
_TEXT_FIELDS = (("workload", "name"), ("kernel", "name"), ("device", "name"), ("device", "key"))


def _text_problem(entry: dict[str, Any]) -> str | None:
    for section, field in _TEXT_FIELDS:
        if field in entry[section] and not isinstance(entry[section][field], str):
            return f"has a '{section}.{field}' that is not a string (got {_shown(entry[section][field])})"
    return None


def _median_problem(median: Any) -> str | None:
    if median is None:
        return None
    if not isinstance(median, (int, float)) or isinstance(median, bool):
        return "has a 'timing.median_ms' that is not a number"
    try:
        finite = math.isfinite(float(median))
    except OverflowError:  # an integer past a float's range
        finite = False
    if not finite:
        return f"has a 'timing.median_ms' that is not a finite number (got {_shown(median)})"
    if median <= 0:  # no kernel runs in no time: a negative or zero median is damage or a forgery
        return f"has a 'timing.median_ms' of {_shown(median)}: a time must be greater than 0 ms"
    return None


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return "is not an object"
    for section, fields in (("device", ("name",)), ("workload", ("name", "size")),
                            ("kernel", ("sha256",)), ("timing", ()), ("verification", ())):
        part = entry.get(section)
        if not isinstance(part, dict):
            return f"lacks {section!r}"
        for f in fields:
            if f not in part:
                return f"lacks '{section}.{f}'"
    text = _text_problem(entry)
    if text:
        return text
    size = entry["workload"]["size"]
    if not isinstance(size, dict) or not all(isinstance(v, int) for v in size.values()):
        return "has a 'workload.size' that is not an object of integers"
    for f in ("vendor_id", "device_id"):
        if not isinstance(entry["device"].get(f, 0), int):
            return f"has a 'device.{f}' that is not an integer"
    sha = entry["kernel"]["sha256"]
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        return "has a 'kernel.sha256' that is not a sha256"
    median = _median_problem(entry["timing"].get("median_ms"))
    if median:
        return f"({shown_key(entry)}) {median}"
    return None


def shown_key(entry: dict[str, Any]) -> str:
    """An entry's slot as a user reads it: device, workload, size and the kernel (its name and
    the first 12 digits of its sha256), on one line."""
    kernel = entry["kernel"]
    name = kernel.get("name") if isinstance(kernel.get("name"), str) else ""
    return one_line(f"{entry['device'].get('name', '?')} / {entry['workload']['name']} / "
                    f"{size_label(entry['workload']['size'])} / kernel {name + ' ' if name else ''}"
                    f"{str(kernel['sha256'])[:12]}", 200)


def _parse(path: Path, text: str) -> Any:
    """The JSON document; bad JSON, a number past Python's digit limit or nesting past
    :data:`MAX_LOCK_DEPTH` is a one-line ValueError naming the file."""
    too_deep = f"{path}: nested deeper than {MAX_LOCK_DEPTH} levels: not a Vajra lockfile"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(_one_line(f"{path}: not valid JSON (line {exc.lineno}, column "
                                   f"{exc.colno}: {exc.msg})")) from None
    except RecursionError:
        raise ValueError(too_deep) from None
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
        raise ValueError(f"{path}: not a Vajra lockfile: {one_line(str(exc).split(';')[0], 120)}") from None
    if deeper_than(data, MAX_LOCK_DEPTH):
        raise ValueError(too_deep)
    return data


def _read_text(path: Path) -> str:
    """The lockfile's text: a regular file (a FIFO or /dev/zero named by mistake would block
    or never end) of at most :data:`MAX_LOCK_BYTES`, opened without blocking and checked
    through the descriptor it was opened as."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise ValueError(_one_line(f"{path}: cannot read lockfile: {exc.strerror or exc}")) from None
    try:
        with os.fdopen(fd, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if stat.S_ISDIR(mode):
                raise ValueError(f"{path}: is a directory, not a lockfile")
            if not stat.S_ISREG(mode):
                raise ValueError(f"{path}: not a regular file (a device, FIFO or socket), not a lockfile")
            raw = handle.read(MAX_LOCK_BYTES + 1)
    except OSError as exc:
        raise ValueError(_one_line(f"{path}: cannot read lockfile: {exc.strerror or exc}")) from None
    if len(raw) > MAX_LOCK_BYTES:
        raise ValueError(f"{path}: larger than {MAX_LOCK_BYTES // (1 << 20)} MiB: not a Vajra lockfile")
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")  # a BOM, as Windows editors write
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: cannot read lockfile: not UTF-8 text (byte {exc.start + 1})") from None


def load_lock(path: Path) -> dict[str, Any]:
    """Read and validate a lockfile; any problem is a one-line ValueError naming the file."""
    path = Path(path)
    text = _read_text(path)
    data = _parse(path, text)
    if not isinstance(data, dict) or data.get("schema") != LOCK_SCHEMA:
        raise ValueError(f"{path}: not a Vajra lockfile (no \"schema\": \"{LOCK_SCHEMA}\")")
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"{path}: bad schema_version {_shown(version)}")
    if version > LOCK_SCHEMA_VERSION:
        raise ValueError(f"{path}: schema_version {version} is newer than this Vajra reads "
                         f"({LOCK_SCHEMA_VERSION}); upgrade vajra-tui")
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise ValueError(f"{path}: 'entries' is not a list")
    for number, entry in enumerate(entries):
        problem = _entry_problem(entry)
        if problem:
            raise ValueError(_one_line(f"{path}: entry {number} {problem}"))
    return data

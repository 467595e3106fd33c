"""Export a crowned kernel: the exact WGSL, a TypeScript dispatch module and a lockfile.

``<workload>.wgsl`` holds the stitched source byte for byte as it was timed, so
its sha256 is the kernel's identity. ``<workload>.ts`` wraps the same string
with everything a WebGPU application needs to run it: the explicit bind group
layout, the buffer sizes of the exported problem size and the dispatch grid
the engine actually used. ``vajra.lock.json`` records where and how fast the
kernel was measured; lockfiles from several machines merge with
:func:`merge_locks` into one table keyed by kernel sha256.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from vajra_tui.engine.store.atomic import write_together
from vajra_tui.engine.events import CandidateResult, DeviceInfo, WorkloadInfo
from vajra_tui.engine.export.ts import export_program, typescript_module
from vajra_tui.engine.export.lock_merge import merge_locks
from vajra_tui.engine.export.lockfile import (
    LOCK_NAME, LOCK_SCHEMA_VERSION, build_lock, sha256_bytes, device_key, dump_lock, entry_key,
    load_lock, lock_entry,
)
from vajra_tui.engine.export.names import json_text, recorded_names
from vajra_tui.engine.export.wgsl import browser_text


# ---- export --------------------------------------------------------------------
def _existing_lock(path: Path, overwrite: bool) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Entries and file map of a lockfile already in ``out_dir``; a foreign file is refused."""
    if not path.exists():
        return [], {}
    try:
        data = load_lock(path)
        files = data.get("files")
        return data["entries"], ({k: str(v) for k, v in files.items()}
                                 if isinstance(files, dict) else {})
    except ValueError:
        if overwrite:
            return [], {}
        raise FileExistsError(f"{path} exists and is not a Vajra lockfile") from None


def export_winner(result: CandidateResult, device: DeviceInfo, workload: WorkloadInfo,
                  out_dir: Path, overwrite: bool = False, limits: str | None = None,
                  seeds: Sequence[int] = (), timed_seed: int | None = None) -> list[Path]:
    """Write ``<workload>.wgsl``, ``<workload>.ts`` and add the kernel to ``vajra.lock.json``.

    Existing ``.wgsl``/``.ts`` files are refused (FileExistsError naming the
    file, before anything is written) unless ``overwrite``; an existing Vajra
    lockfile is updated in place (the entry for the same device, workload,
    size and kernel is replaced), other entries kept, and its ``files`` map
    gives each exported file's own sha256 (the ``.wgsl``'s is the kernel's identity,
    since it holds the stitched source byte for byte).

    The FileExistsError message names the file and nothing else: the caller says how
    its user overwrites (``--force`` in the CLI, a checkbox in the TUI). Files are
    created with the user's umask, as any other program's would be.
    """
    out_dir = Path(out_dir)
    # a recording from elsewhere names them: the workload never a path, the rest never code
    recorded_names(workload.name, dict(workload.size), dict(result.constants))
    entry = lock_entry(result, device, workload, limits, seeds, timed_seed)  # limits: what crowned it
    # tuned through `override`s: the values it won with become the defaults (the .ts passes
    # them as pipeline constants instead); otherwise the timed source, byte for byte, with
    # the `enable`s a browser needs that wgpu refused (subgroups) in front of its first line.
    # A pass the result left to the workload's own module is <workload>.<label>.wgsl beside it.
    wgsl = {out_dir / f"{workload.name}.wgsl": browser_text(result.stitched_source, result.constants),
            **_pass_files(result, workload, out_dir)}
    ts_path = out_dir / f"{workload.name}.ts"
    lock_path = out_dir / LOCK_NAME
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"{out_dir} is not a directory")
    if not overwrite:
        for path in (*wgsl, ts_path):
            if path.exists():
                raise FileExistsError(f"{path} already exists")
    entries, files = _existing_lock(lock_path, overwrite)
    module = typescript_module(result, device, workload)
    files.update({path.name: sha256_bytes(text.encode()) for path, text in wgsl.items()})
    files[ts_path.name] = sha256_bytes(module.encode())
    lock = build_lock([*entries, entry], files)
    for path, text in wgsl.items():
        if sha256_bytes(text.encode("utf-8")) != files[path.name]:
            raise RuntimeError(f"{path}: the bytes to write differ from the exported source")
    # all or none: the lockfile last, so it never names a file that is not there
    write_together({**wgsl, ts_path: module, lock_path: json_text(dump_lock(lock))},
                   fresh=() if overwrite else [*wgsl, ts_path])
    for path in wgsl:
        if sha256_bytes(path.read_bytes()) != files[path.name]:
            raise RuntimeError(f"{path}: the written bytes differ from the exported source "
                               "(a non-UTF-8 or newline-translating platform encoding?)")
    first = next(iter(wgsl))
    return [first, ts_path, lock_path, *[p for p in wgsl if p != first]]


def _pass_files(result: CandidateResult, workload: WorkloadInfo, out_dir: Path) -> dict[Path, str]:
    """``<workload>.<label>.wgsl`` for each pass from another module than the result's own,
    its override values (from the size, as the .ts passes them) set as defaults. Labels are
    checked file name parts (names.PASS_LABEL), so none is a path; each carries its enables."""
    program = export_program(result, workload)
    return {out_dir / f"{workload.name}.{p.label}.wgsl": browser_text(program.modules[p.module], p.constants)
            for p in program.passes if not p.own}


__all__ = [
    "LOCK_NAME", "LOCK_SCHEMA_VERSION", "device_key", "dump_lock", "entry_key", "export_winner",
    "load_lock", "lock_entry", "merge_locks", "typescript_module",
]

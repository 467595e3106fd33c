"""Python child processes that import what this process imports, wherever the user stands.

``python -m`` and ``python -c`` put the current folder first on the child's ``sys.path``.
A user's ``wgpu.py`` or ``numpy.py`` in that folder, or a clone of another Vajra version
(its ``vajra_tui/``), would then be what the GPU worker imported: the first killed the
worker at start ("the GPU worker died while starting"), the second ran one version's
worker under another's engine. And a folder a script put on ``sys.path`` at run time was
missing there, so the worker could not import a workload module the script could.

A child made here starts with this process's ``sys.path`` as it is now, so both import
the same modules (the current folder only where this process has it too, as
``python -m vajra_tui`` from a clone does).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[2])  # the folder this vajra_tui package is in
PATH_VARIABLE = "VAJRA_SYS_PATH"  # the parent's sys.path, as JSON: read (and removed) by the child
_BOOT = (f"import json, os, sys; sys.path[:] = json.loads(os.environ.pop({PATH_VARIABLE!r}, 'null')) "
         "or sys.path; ")


def module_command(module: str, *args: str) -> list[str]:
    """Run ``module`` as ``__main__`` (as ``python -m`` would), with ``args`` as its
    ``sys.argv[1:]``; started with :func:`child_env`'s environment."""
    run = "import runpy; runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)"
    return [sys.executable, "-c", _BOOT + run, module, *args]


def code_command(code: str, *args: str) -> list[str]:
    """Run ``code`` (as ``python -c`` would), with ``args`` as its ``sys.argv[1:]``; started
    with :func:`child_env`'s environment."""
    return [sys.executable, "-c", _BOOT + code, *args]


def child_env(**extra: str) -> dict[str, str]:
    """This environment, with this process's ``sys.path`` for the child (and the folder this
    package was imported from, last, so nothing beside it there shadows anything), and
    without an empty ``PYTHONPATH`` entry: that means the current folder while the child
    starts, before its path is set (a ``sitecustomize.py`` there)."""
    env = {**os.environ, **extra}
    parts = [p for p in env.pop("PYTHONPATH", "").split(os.pathsep) if p]
    if parts:
        env["PYTHONPATH"] = os.pathsep.join(parts)
    env[PATH_VARIABLE] = json.dumps(list(sys.path) + ([] if ROOT in sys.path else [ROOT]))
    return env


# Bytes the shader-cache probe writes. Mesa maps its cache index (~1.3 MB) from a sparse
# file, so in a folder that cannot take even this much the worker can die on its first
# compile ("the GPU worker died during calibrate") instead of compiling without a cache.
SHADER_CACHE_PROBE_BYTES = 64 << 10


def shader_cache_folder(env: dict[str, str]) -> Path:
    """Where Mesa keeps its shader cache under ``env``: the folder it creates its own in."""
    for name in ("MESA_SHADER_CACHE_DIR", "MESA_GLSL_CACHE_DIR", "XDG_CACHE_HOME"):
        if env.get(name):
            return Path(env[name])
    return Path(env.get("HOME") or Path.home()) / ".cache"


def _writable(folder: Path) -> str | None:
    """Why ``folder`` cannot take a file of SHADER_CACHE_PROBE_BYTES (made if missing), or None."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".vajra-probe-")
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        block = memoryview(b"\0" * SHADER_CACHE_PROBE_BYTES)
        while block:  # a write that reaches the limit is short; only the next one fails
            block = block[os.write(fd, block):]
        os.fsync(fd)
    except OSError as exc:
        return exc.strerror or str(exc)
    finally:
        os.close(fd)
        Path(probe).unlink(missing_ok=True)
    return None


def shader_cache_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a GPU worker: Mesa's shader cache turned off when its folder cannot take
    files (full, read-only, a file in the way); noted once. Kernels only compile a bit slower."""
    if env.get("MESA_SHADER_CACHE_DISABLE"):  # the user's own choice stands
        return env
    folder = shader_cache_folder(env)
    problem = _writable(folder)
    if problem is None:
        return env
    from vajra_tui.engine.store import damage
    from vajra_tui.safe_text import one_line

    damage.note(f"Mesa's shader cache folder {one_line(folder)} cannot take files ({one_line(problem, 80)}): "
                "the GPU worker runs with the shader cache off")
    return {**env, "MESA_SHADER_CACHE_DISABLE": "true"}

"""``vajra-tui doctor``: what works on this machine, and what to do about what does not.

It runs with a broken config (it reports it), asks for adapters in a child
process (a driver that prints or hangs cannot spoil the report), never prints a
key (only whether its variable is set), and exits 0 when at least one adapter
can run kernels.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass

from vajra_tui.cli.console import Console
from rich.table import Table
from rich.text import Text

from vajra_tui import __version__
from vajra_tui.engine.child import child_env, code_command
from vajra_tui.engine.gpu.loop_limit import LLVMPIPE_LOOP_STEPS, is_llvmpipe
from vajra_tui.safe_text import clean, one_line

MARKS = {"ok": ("✓", "green"), "warn": ("!", "yellow"), "fail": ("✗", "red"), "info": ("·", "dim")}

_ADAPTERS = ("import json, wgpu; from vajra_tui.engine.gpu.runtime import device_info; "
             "print(json.dumps([device_info(a, index=i).model_dump() "
             "for i, a in enumerate(wgpu.gpu.enumerate_adapters_sync())]))")


@dataclass
class Check:
    name: str
    state: str  # ok | warn | fail | info
    detail: str


def _adapters() -> list[Check]:
    try:
        proc = subprocess.run(code_command(_ADAPTERS), capture_output=True, text=True,
                              timeout=120, stdin=subprocess.DEVNULL, env=child_env())
        lines = proc.stdout.strip().splitlines()
        infos = json.loads(lines[-1]) if proc.returncode == 0 and lines else None
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return [Check("adapter", "fail", f"probing adapters failed: {one_line(exc, 120)}")]
    if infos is None:
        err = [line for line in proc.stderr.splitlines() if line.strip()]
        return [Check("adapter", "fail", "wgpu could not load: " + one_line(err[-1] if err else "no output", 120))]
    if not infos:
        return [Check("adapter", "fail", "no WebGPU adapter: install a Vulkan driver (Debian: "
                      "mesa-vulkan-drivers for lavapipe); recordings still play")]
    out = []
    for d in infos:
        kind = "SOFTWARE adapter: CPU timings" if d.get("software") else d.get("adapter_type", "")
        out.append(Check("adapter", "warn" if d.get("software") else "ok",
                         one_line(f"[{d.get('adapter_index')}] {d['name']} · {d.get('backend', '')} · {kind} · "
                                  f"driver {d.get('driver') or '?'}")))
        stamps = "yes: device timestamps" if d.get("timestamp_query") else "no: wall clock around each dispatch"
        out.append(Check("timestamps", "ok" if d.get("timestamp_query") else "warn", stamps))
        if is_llvmpipe(d["name"], d.get("driver") or ""):
            out.append(Check("loops", "warn", f"at most {LLVMPIPE_LOOP_STEPS:,} loop steps an invocation, "
                             "all loops together: a kernel that loops longer fails verification here"))
    return out


def _version(cmd: list[str]) -> str | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def _node() -> list[Check]:
    from vajra_tui.engine.browser.sidecar import status

    node = shutil.which("node")
    version = _version([node, "--version"]) if node else None
    checks = [Check("node", "ok" if version else "warn",
                    f"{version} ({node})" if version else "not found: browser (Tint) checks are off")]
    ok, what = status()
    checks.append(Check("dawn/tint", "ok" if ok else "warn", what))
    return checks


def _browser(setup_said: bool = False) -> list[Check]:
    """The first judge of exports: a Chromium that playwright-python drives, and a transpiler.
    ``setup_said``: the dawn/tint line already says to run setup-node, which installs the
    transpiler too, so this one points there instead of saying it again."""
    from vajra_tui.engine.browser.find import find_browser
    from vajra_tui.engine.browser.transpile import NO_TRANSPILER, find_transpiler

    found = find_browser()
    checks = [Check("chromium", "ok" if found.ok else "warn",
                    f"{found.describe()}: judges exports (WebGPU with --enable-unsafe-webgpu)" if found.ok
                    else f"{found.reason}; exports are judged by Node/Dawn instead")]
    kind, path = find_transpiler()
    missing = NO_TRANSPILER
    if setup_said:
        missing = ("no TypeScript transpiler: setup-node (see dawn/tint) installs esbuild with Dawn, "
                   "or put esbuild or typescript on PATH / in node_modules")
    checks.append(Check("ts→js", "ok" if kind else "warn", f"{kind} ({path})" if kind else missing))
    return checks


def _package(name: str, module: str, why: str) -> Check:
    if importlib.util.find_spec(module) is None:
        return Check(name, "info", f"not installed ({why})")
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        version = "installed"
    return Check(name, "ok", version)


def _nvml() -> Check:
    try:
        import pynvml
    except ImportError:
        return Check("nvml", "info", "nvidia-ml-py is not installed: no GPU telemetry")
    try:
        pynvml.nvmlInit()
        try:
            count = pynvml.nvmlDeviceGetCount()
            driver = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # NVMLError_LibraryNotFound and friends: no NVIDIA driver here
        return Check("nvml", "info", "no NVIDIA driver: clocks, power and temperature are not sampled")
    driver = driver.decode() if isinstance(driver, bytes) else driver
    return Check("nvml", "ok", f"{count} NVIDIA GPU(s), driver {driver}: telemetry on")


def _paths() -> list[Check]:
    from vajra_tui.config_file import ConfigError
    from vajra_tui.engine.browser.sidecar import node_dir
    from vajra_tui.settings import cache_dir, config_path, data_dir, load_settings

    path = config_path()
    try:
        settings = load_settings()
        state, detail = ("ok", f"{path}") if path.exists() else ("info", f"{path} (none: defaults)")
    except ConfigError as exc:
        settings, state, detail = None, "fail", one_line(exc)
    checks = [Check("config", state, detail)]
    for name, folder in (("cache", cache_dir()), ("recordings", data_dir() / "recordings"),
                         ("node dir", node_dir())):
        checks.append(Check(name, "info", str(folder)))
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    checks.append(Check("runtime dir", "info" if runtime else "warn", runtime or "XDG_RUNTIME_DIR is not set"))
    if settings is not None:
        for label, group in (("llm key", settings.llm), ("tavily key", settings.tavily)):
            has = group.api_key() is not None
            checks.append(Check(label, "ok" if has else "info",
                                f"${group.api_key_env} is {'set' if has else 'not set'}"
                                + ("" if has else (" (library candidates only)" if label == "llm key"
                                                   else " (no grounding)"))))
    return checks


def run_checks() -> list[Check]:
    checks = [Check("vajra-tui", "info", f"{__version__} · Python {sys.version.split()[0]} ({sys.executable})")]
    checks += _adapters()
    checks += _node()
    from vajra_tui.engine.browser.sidecar import SETUP_NODE

    checks += _browser(setup_said=any(SETUP_NODE in c.detail for c in checks))
    checks.append(_package("ray", "ray", "optional: only for fleet runs"))
    checks.append(_nvml())
    checks += _paths()
    return checks


def doctor(args: argparse.Namespace) -> int:
    checks = run_checks()
    usable = any(c.name == "adapter" and c.state in ("ok", "warn") for c in checks)
    if args.json:
        print(json.dumps({"usable": usable, "checks": [asdict(c) for c in checks]}, indent=2))
        return 0 if usable else 1
    console = Console(highlight=False)
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True, style="bold")
    table.add_column(overflow="fold")
    for c in checks:
        mark, style = MARKS[c.state]
        table.add_row(Text(mark, style=style), c.name, Text(clean(c.detail)))  # paths, errors: data
    console.print(table)
    if not usable:
        console.print(Text("no adapter can run kernels here; `vajra-tui replay --list` shows "
                           "recordings you can still play", style="yellow"))
    return 0 if usable else 1

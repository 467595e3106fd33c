"""TypeScript to JavaScript for the browser judge, offline, with the tools the Node route has.

The exported ``<workload>.ts`` is what the user gets; a browser runs JavaScript. The Node
route runs it with ``tsx``, which strips types with esbuild: the same esbuild (installed
with the sidecar by ``vajra-tui setup-node``) makes the module the browser imports, so
both judges run one transpilation of the same bytes. The npm ``typescript`` package is
taken where esbuild is missing. Neither touches the network.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from vajra_tui.engine.browser import sidecar

NO_TRANSPILER = (f"no TypeScript transpiler: {sidecar.SETUP_NODE} (installs esbuild with Dawn), "
                 "or put esbuild or typescript on PATH / in node_modules")

_TSC_SCRIPT = """
const ts = require(process.argv[1]);
let src = ''; process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { src += c; });
process.stdin.on('end', () => {
  const out = ts.transpileModule(src, { reportDiagnostics: true, compilerOptions: {
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } });
  const errors = (out.diagnostics || []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\\n'));
  if (errors.length) { process.stderr.write(errors.join('\\n')); process.exit(1); }
  process.stdout.write(out.outputText);
});
"""


class TranspileError(RuntimeError):
    """The module could not be turned into JavaScript (one line)."""


def _folders() -> list[Path]:
    """node_modules folders to look in: the sidecar's, then the current folder's."""
    return [sidecar.node_dir() / "node_modules", Path.cwd() / "node_modules"]


def find_transpiler() -> tuple[str, str]:
    """``(kind, path)``: ("esbuild", its binary) or ("typescript", its typescript.js); ("", "") if none."""
    for folder in _folders():
        for candidate in (folder / ".bin" / "esbuild", folder / "esbuild" / "bin" / "esbuild"):
            if candidate.is_file():
                return "esbuild", str(candidate)
    on_path = shutil.which("esbuild")
    if on_path:
        return "esbuild", on_path
    if shutil.which("node"):
        for folder in _folders():
            script = folder / "typescript" / "lib" / "typescript.js"
            if script.is_file():
                return "typescript", str(script)
    return "", ""


def transpile(source: str, timeout: float = 60.0) -> str:
    """The ES module JavaScript of one TypeScript module (types stripped, nothing bundled)."""
    kind, path = find_transpiler()
    if not kind:
        raise TranspileError(NO_TRANSPILER)
    if kind == "esbuild":
        cmd = [path, "--loader=ts", "--format=esm", "--target=es2022", "--log-level=error"]
    else:
        cmd = [shutil.which("node") or "node", "-e", _TSC_SCRIPT, path]
    try:
        proc = subprocess.run(cmd, input=source, capture_output=True, text=True, timeout=timeout,
                              check=False, encoding="utf-8")
    except subprocess.TimeoutExpired:
        raise TranspileError(f"{kind} did not finish in {timeout:.0f} s") from None
    except OSError as exc:
        raise TranspileError(f"cannot run {kind}: {exc}") from None
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["failed"])[0]
        raise TranspileError(f"{kind} could not transpile the module: {first}"[:300])
    return proc.stdout


__all__ = ["NO_TRANSPILER", "TranspileError", "find_transpiler", "transpile"]

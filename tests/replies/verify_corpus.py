"""Check the reply corpus against a real GPU adapter (not part of the pytest run).

For every manifest entry: extract the slot's kernel with ``extract_for``, bench it
with ``vajra-tui bench`` (one bench per workload and size), and compare with the
manifest: ``correct`` must come back ``verified`` on the expected grid, ``broken``
must be a ``compile_error`` whose first diagnostic has ``error_line`` and
``error_substring``; ``truncated`` and ``no_kernel`` must extract nothing.

    XDG_RUNTIME_DIR=/tmp .venv/bin/python tests/replies/verify_corpus.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).parent
REPO = ROOT.parent.parent
sys.path.insert(0, str(REPO))

from vajra_tui.engine.sources.llm.extract import extract_for  # noqa: E402


def main() -> int:
    manifest = json.loads((ROOT / "manifest.json").read_text())["replies"]
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, m in manifest.items():
            got = extract_for((ROOT / name).read_bytes().decode(), m["strategy"])
            if m["expect"] in ("truncated", "no_kernel"):
                ok = got.source == "" and not got.complete
                print(f"{'ok ' if ok else 'BAD'} {name}: source={'empty' if not got.source else 'present'}")
                failures += not ok
                continue
            path = Path(tmp) / (Path(name).stem + ".wgsl")
            path.write_text(got.source)
            groups[(m["workload"], m["size"])].append(name)
        bench = [str(REPO / ".venv/bin/vajra-tui"), "bench", "--reps", "1", "--warmup", "0",
                 "--json", "--no-cache", "-q"]
        for (workload, size), names in groups.items():
            kernels = [a for n in names for a in ("-k", str(Path(tmp) / (Path(n).stem + ".wgsl")))]
            out = subprocess.run([*bench, "-w", workload, "--size", size, *kernels],
                                 capture_output=True, text=True, check=False)
            results = {r["name"]: r for r in json.loads(out.stdout)["results"]}
            for name in names:
                m, r = manifest[name], results[Path(name).stem]
                if m["expect"] == "correct":
                    ok = r["status"] == "verified" and r["grid"][:2] == m["grid"]
                    detail = f"{r['status']} grid={r['grid'][:2]} err={r['max_rel_error']}"
                else:
                    d = r["diagnostics"][0] if r["diagnostics"] else {}
                    ok = (r["status"] == "compile_error" and d.get("line") == m["error_line"]
                          and m["error_substring"] in d.get("message", ""))
                    detail = f"{r['status']} {d.get('line')}:{d.get('column')} {d.get('message')}"
                print(f"{'ok ' if ok else 'BAD'} {name}: {detail}")
                failures += not ok
    print(f"{len(manifest) - failures}/{len(manifest)} as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Does pipeline creation run in parallel on this adapter? A one-off probe for issue #13.

Builds distinct sgemm and conv1d library kernels at seed size (stitched as the engine
stitches them) and times their compiles one after another against the same number in
a thread pool, on fresh sources each time so no driver cache helps either side.

    .venv/bin/python benchmarks/parallel_compile_probe.py [--threads 8] [--per 8]
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from concurrent.futures import ThreadPoolExecutor

import wgpu

from vajra_tui.engine.admission.contract import stitch
from vajra_tui.engine.sources.library import MODULES
from vajra_tui.engine.workloads import WORKLOADS


def sources(name: str, count: int) -> list[str]:
    w = WORKLOADS[name]
    size = w.size("seed")
    out: list[str] = []
    rng = random.Random(3)
    for t in MODULES[name].TEMPLATES:
        combos = list(itertools.product(*t.axes.values()))
        rng.shuffle(combos)
        for vals in combos[:count]:
            p = dict(zip(t.axes, vals))
            if t.check(p, size, None) is None:
                try:
                    out.append(stitch(w, size, t.render(p, size, None), 65535, 49152).source)
                except Exception:  # noqa: BLE001 - a probe: skip what does not stitch
                    pass
    rng.shuffle(out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--per", type=int, default=8)
    args = parser.parse_args()
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    device = adapter.request_device_sync()

    def build(src: str) -> object:
        module = device.create_shader_module(code=src)
        return device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})

    build("@compute @workgroup_size(1) fn main() {}")
    for name in ("sgemm", "conv1d"):
        pool = sources(name, 12)
        n = args.per
        for label, chunk in (("serial", pool[:n]), ("threads", pool[n:2 * n]),
                             ("serial", pool[2 * n:3 * n]), ("threads", pool[3 * n:4 * n])):
            began = time.perf_counter()
            if label == "serial":
                for src in chunk:
                    build(src)
            else:
                with ThreadPoolExecutor(args.threads) as ex:
                    list(ex.map(build, chunk))
            print(f"{name:<7} {label:<8} {len(chunk):>3} kernels {time.perf_counter() - began:7.3f} s", flush=True)


if __name__ == "__main__":
    main()

"""A plain copy of the same bytes, timed with cold caches: what "cold" can reach at a size.

Issue #13 asks that a winner timed cold come within 1.25x of (launch floor + bytes / copy
bandwidth). At L2-resident sizes a short kernel cannot reach the copy bandwidth measured
on 512 MB, so the copy itself is timed here the way the engine times a cold candidate
(the L2 overwritten outside the timestamps before each dispatch), on the same adapter:
the ratio of the winner to this copy separates the kernel's cost from the floor's.

    python benchmarks/cold_copy.py --bytes 33554432 [--adapter 0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import wgpu

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vajra_tui.engine.gpu.calibrate import COPY, _grid, _pipeline  # noqa: E402
from vajra_tui.engine.gpu.runtime import Runtime  # noqa: E402


def cold_copy_ms(nbytes: int, adapter: int | str | None = None, reps: int = 9, warmup: int = 3) -> float:
    """Median device time of copying ``nbytes / 2`` bytes to another buffer (``nbytes`` moved
    in all), each dispatch after the L2 was overwritten. One shape only (one vec4 per
    invocation): at 256 MB it runs 1.29x the floor where the calibration's fastest shape
    reaches it: at large sizes it is no reference, and at L2-resident sizes another shape
    might copy faster still."""
    rt = Runtime(adapter)
    half = max(16, (nbytes // 2) // 16 * 16)
    src = rt.device.create_buffer(size=half, usage=wgpu.BufferUsage.STORAGE)
    dst = rt.device.create_buffer(size=half, usage=wgpu.BufferUsage.STORAGE)
    pipe, group = _pipeline(rt, COPY.replace("PER", "1"), [src, dst])
    grid = _grid(-(-half // 16 // 256))
    rt.set_cache_state("cold")
    assert rt.flusher is not None
    times = []
    for k in range(warmup + reps):
        enc = rt.device.create_command_encoder()
        rt.flusher.record(enc)
        rt.queue.submit([enc.finish()])
        rt.wait()
        timing = rt.dispatch(pipe, grid, group)
        if k >= warmup:
            times.append(timing.ts_ms if timing.ts_ms else timing.wall_ms)
    rt.set_cache_state("warm")
    for buf in (src, dst):
        buf.destroy()
    return float(np.median(times))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, required=True, help="bytes moved: half read, half written")
    parser.add_argument("--adapter", default=None)
    args = parser.parse_args()
    print(f"{cold_copy_ms(args.bytes, args.adapter):.5f} ms")

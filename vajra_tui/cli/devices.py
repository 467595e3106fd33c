"""Adapters on the command line: ``devices``, ``--adapter INDEX|NAME`` and ``tune --gpus``.

A choice that names no adapter, or several, is a :class:`UsageError` (one line, exit 2)
listing the candidates, before any worker starts; see engine/gpu/adapters.py for what an
index does and does not guarantee.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.gpu.client import GPUClient
from vajra_tui.safe_text import clean, one_line
from vajra_tui import fmt


def lanes_for(args: argparse.Namespace) -> list[GPUClient]:
    """The worker(s) a run asks for: the default adapter, ``--adapter``, or ``tune --gpus``."""
    from vajra_tui.cli.options import adapter_flag
    from vajra_tui.engine.run.builder import Placement, open_lanes

    with adapter_flag(args):
        return open_lanes(Placement(adapter=args.adapter, gpus=getattr(args, "gpus", None)))


def print_lanes(summary: dict[str, Any]) -> None:
    """Each lane's adapter, baseline and share of the work; the spread between them."""
    for lane in summary["lanes"]:
        base = fmt.ms(lane["baseline_median_ms"]) if lane["baseline_median_ms"] else "-"
        lost = f"  LOST (in flight: {', '.join(lane['lost']) or 'nothing'})" if lane["state"] == "lost" else ""
        print(clean(f"lane {lane['label']}: adapter #{lane['adapter_index']} {lane['name']}, baseline "
                    f"{base} over {len(lane['baseline_medians_ms'])} batches, {lane['timed']} "
                    f"kernels timed{lost}"))
    spread = summary["baseline_spread"]
    print(f"baseline spread across lanes (max/min): {f'{spread:.3f}x' if spread else '-'}; "
          f"the shoot-out was timed on {summary['final_lane']}")


def devices(args: argparse.Namespace) -> int:
    """Every adapter by its index (what --adapter and --gpus take), and what it offers.

    The index is wgpu's enumeration order: stable for this environment and driver only.
    ``--probe`` names the NVML GPU (bus id, UUID) each NVIDIA adapter really runs on.
    """
    from vajra_tui.engine.gpu.adapters import list_adapters

    try:
        rows = list_adapters(probe=bool(args.probe))
    except Exception as exc:  # noqa: BLE001 - wgpu missing or broken: one line, not a traceback
        print(f"vajra-tui: could not list adapters: {one_line(exc)}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([{**r["device"], "index": r["index"], "nvml": r.get("nvml")} for r in rows], indent=2))
        return 0
    if not rows:
        print("no WebGPU adapter found (install a Vulkan driver, e.g. Debian's mesa-vulkan-drivers)")
        return 1
    for row in rows:
        info = DeviceInfo.model_validate(row["device"])
        kind = "SOFTWARE" if info.software else info.adapter_type
        print(clean(f"[{row['index']}] {info.name}\n  backend {info.backend}, type {kind}, vendor "
                    f"{info.vendor or '-'} ({info.vendor_id:#x}), driver {info.driver}"))
        if row.get("nvml"):
            m = row["nvml"]
            rise = f", +{m['rise']:.0f}% vs +{m['runner_up']:.0f}%" if m["method"] == "utilization" else ""
            print(clean(f"  NVML GPU {m['index']} (bus {m['pci_bus_id']}, {m['uuid']}; {m['method']}{rise})"))
        print(f"  timestamps {'yes' if info.timestamp_query else 'no'}, subgroups "
              f"{'yes' if info.subgroups else 'no'}")
        for key, value in info.limits.items():
            print(f"  {key}: {value}")
        print(clean(f"  features: {', '.join(info.features)}"))
    if args.probe and not any(row.get("nvml") for row in rows):  # say so: silence reads as "probed"
        print("probe: nothing probed (NVML names NVIDIA adapters only, and no adapter here was matched "
              "to an NVML GPU)", file=sys.stderr)
    print("choose one with --adapter INDEX (or a name only it contains); indices hold for this "
          "environment and driver only", file=sys.stderr)
    return 0

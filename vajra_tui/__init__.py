"""Vajra: a terminal auto-tuner for WebGPU compute kernels.

The public Python API (Kernel Tuner-style: your kernel, your parameters, your
reference answer)::

    from vajra_tui import Binding, Pass, Workload, bench, tune

Names load on first use, so ``vajra-tui --version`` never imports numpy or the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_PUBLIC = {
    "Workload": "vajra_tui.engine.workloads.base",
    "Binding": "vajra_tui.engine.workloads.base",
    "Pass": "vajra_tui.engine.workloads.base",
    "WorkloadError": "vajra_tui.engine.workloads.base",
    "bench": "vajra_tui.api",
    "tune": "vajra_tui.api",
    "Report": "vajra_tui.api",
}

if TYPE_CHECKING:
    from vajra_tui.api import Report, bench, tune
    from vajra_tui.engine.workloads.base import Binding, Pass, Workload, WorkloadError


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        import importlib

        value = getattr(importlib.import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'vajra_tui' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])


__all__ = ["Binding", "Report", "Workload", "WorkloadError", "__version__", "bench", "tune"]

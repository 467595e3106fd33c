"""The workload registry: adding a workload is one module and one line here."""

from __future__ import annotations

from .base import Binding, Size, SizeError, Workload
from .conv1d import CONV1D
from .sgemm import SGEMM
from .sobel import SOBEL
from .softmax import SOFTMAX

WORKLOADS: dict[str, Workload] = {w.name: w for w in (SGEMM, SOFTMAX, CONV1D, SOBEL)}


class UnknownWorkload(KeyError):
    def __str__(self) -> str:
        return f"unknown workload {self.args[0]!r}; choose one of: {', '.join(WORKLOADS)}"


def get_workload(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise UnknownWorkload(name) from None


__all__ = ["Binding", "Size", "SizeError", "Workload", "WORKLOADS", "get_workload", "UnknownWorkload"]

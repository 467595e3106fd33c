"""Seconds per named step: ``prepare`` reports where its time went (benchmarks/harness.py)."""

from __future__ import annotations

import time


class Clock:
    """Seconds per named step (``prepare`` reports where its time went)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def __call__(self, name: str) -> "Clock":
        self._name = name
        return self

    def __enter__(self) -> None:
        self._began = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.seconds[self._name] = self.seconds.get(self._name, 0.0) + time.perf_counter() - self._began

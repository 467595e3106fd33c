"""A workload is data plus three functions: inputs, reference and baseline source.

The session never branches on a workload's name; everything it needs to stitch,
dispatch, verify and score a kernel is declared here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable, Literal

import numpy as np

from ..events import WorkloadInfo

Size = dict[str, int]
Access = Literal["read", "read_write"]


class SizeError(ValueError):
    """A size string that does not fit the workload."""


@dataclass(frozen=True)
class Binding:
    index: int
    name: str
    access: Access

    @property
    def is_output(self) -> bool:
        return self.access == "read_write"


@dataclass(frozen=True)
class Workload:
    name: str
    summary: str
    dims: tuple[str, ...]  # size constant names, in the order --size fills them
    presets: dict[str, Size]
    bindings: tuple[Binding, ...]
    atol: Callable[[Size], float]
    buffer_len: Callable[[Size], dict[str, int]]  # f32 elements per binding name
    make_inputs: Callable[[Size, np.random.Generator], dict[str, np.ndarray]]
    reference: Callable[[Size, dict[str, np.ndarray]], np.ndarray]  # float64, flat
    flops: Callable[[Size], float]
    output_grid: Callable[[Size], tuple[int, int]]  # (x, y) output elements
    baseline: str  # WGSL body under the contract; sizes come from the prelude
    broadcast: tuple[str, ...] = ()  # dims that one bare number sets together
    defaults: Size = field(default_factory=dict)  # dims a shorter --size leaves alone

    # ---- sizes -------------------------------------------------------------
    def size(self, spec: str | Size | None = None) -> Size:
        """Resolve 'seed', 'large', '2048', '4096x1024' or 'M=64,N=32,K=16'."""
        if spec is None or spec == "":
            return dict(self.presets["seed"])
        if isinstance(spec, dict):
            return self._checked({**self.presets["seed"], **spec})
        text = spec.strip().lower()
        if text in self.presets:
            return dict(self.presets[text])
        if "=" in text:
            return self._checked(self._named(text))
        parts = re.split(r"[x×,]", text)
        try:
            values = [int(p.replace("_", "")) for p in parts]
        except ValueError:
            raise SizeError(f"bad size {spec!r} for {self.name}: expected {self.size_hint()}")
        if len(values) > len(self.dims):
            raise SizeError(f"bad size {spec!r}: {self.name} has {len(self.dims)} dims")
        out = {**self.presets["seed"], **self.defaults}
        if len(values) == 1 and self.broadcast:
            out.update({d: values[0] for d in self.broadcast})
        else:
            out.update(dict(zip(self.dims, values)))
        return self._checked(out)

    def _named(self, text: str) -> Size:
        out = dict(self.presets["seed"])
        for item in text.split(","):
            key, _, value = item.partition("=")
            key = key.strip().upper()
            if key not in self.dims:
                raise SizeError(f"unknown dimension {key!r} for {self.name}: {', '.join(self.dims)}")
            try:
                out[key] = int(value)
            except ValueError:
                raise SizeError(f"bad value for {key}: {value!r}")
        return out

    def _checked(self, size: Size) -> Size:
        for dim in self.dims:
            if size.get(dim, 0) < 1:
                raise SizeError(f"{self.name}: {dim} must be a positive integer")
            if size[dim] > 1 << 30:
                raise SizeError(f"{self.name}: {dim}={size[dim]} is too large")
        return {d: int(size[d]) for d in self.dims}

    def size_hint(self) -> str:
        seed = "x".join(str(self.presets["seed"][d]) for d in self.dims)
        return f"seed | large | {seed} ({'x'.join(self.dims)})"

    # ---- derived -----------------------------------------------------------
    @property
    def inputs(self) -> tuple[Binding, ...]:
        return tuple(b for b in self.bindings if not b.is_output)

    @property
    def output(self) -> Binding:
        return next(b for b in self.bindings if b.is_output)

    def min_bytes(self, size: Size) -> float:
        return 4.0 * sum(self.buffer_len(size).values())

    def info(self, size: Size) -> WorkloadInfo:
        return WorkloadInfo(
            name=self.name,
            size=size,
            flops=self.flops(size),
            min_bytes=self.min_bytes(size),
            output_grid=list(self.output_grid(size)),
            atol=self.atol(size),
        )

    def label(self, size: Size) -> str:
        return "x".join(str(size[d]) for d in self.dims)


def signed_uniform(rng: np.random.Generator, n: int, scale: float = 1.0) -> np.ndarray:
    return (rng.uniform(-scale, scale, n)).astype(np.float32)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def isqrt_ceil(n: int) -> int:
    return math.isqrt(n - 1) + 1 if n > 0 else 0

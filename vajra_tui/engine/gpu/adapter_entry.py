"""One adapter as enumerated (:class:`AdapterEntry`), and the names that mark a software one.

A module of its own, below adapters.py, identify.py and probe_cache.py: the probe and
its cache describe adapters with this type, and adapters.py runs both of them in its
child process, so the type cannot live in adapters.py without an import circle.
adapters.py re-exports it: callers keep importing it from there.
"""

from __future__ import annotations

from pydantic import BaseModel

# Adapter names of CPU rasterizers (a driver may not report the adapter type as "cpu").
SOFTWARE_HINTS = ("llvmpipe", "lavapipe", "swiftshader", "software", "warp")


class AdapterEntry(BaseModel):
    """One adapter as enumerated: enough to tell it apart from the others, and to pick it."""

    index: int
    name: str
    backend: str = ""
    adapter_type: str = ""
    driver: str = ""
    vendor_id: int = 0
    device_id: int = 0
    software: bool = False

    @property
    def model(self) -> tuple[str, int, int, str]:
        """What identical GPUs share (the same card through another backend does not)."""
        return (self.name, self.vendor_id, self.device_id, self.backend)

    def describe(self) -> str:
        kind = "software" if self.software else (self.adapter_type or "?")
        return f"#{self.index} {self.name} ({self.backend or '?'}, {kind})"

"""What the engine needs from one adapter's GPU worker, wherever that worker runs.

A :class:`Lane` is the interface of :class:`vajra_tui.engine.gpu.client.GPUClient`
that a :class:`vajra_tui.engine.session.Session` uses. A local client is a lane; so is a
Ray actor's handle wrapped to look like one (:mod:`.ray_lanes`). The multi-adapter
orchestrator (:mod:`.lanes`) only ever sees lanes, so ``--gpus`` and ``--ray`` share it.

Faults keep the client's meaning: a lane whose worker (or actor, or node) died raises
``WorkerCrashed`` from ``acall``; a request past its deadline raises ``WorkerTimeout``
after the lane's own watchdog killed the worker; a failed request raises ``WorkerError``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from vajra_tui.engine.events import DeviceInfo


@runtime_checkable
class Lane(Protocol):
    #: the adapter's DeviceInfo once started (None before)
    device: DeviceInfo | None

    @property
    def label(self) -> str:
        """Short, unique among the lanes of a run: ``gpu0``, ``node-2/gpu1``."""
        ...

    async def astart(self) -> DeviceInfo: ...

    async def acall(self, op: str, timeout: float, **kwargs: Any) -> dict[str, Any]: ...

    def interrupt(self, forget: list[str] | tuple[str, ...] = ()) -> None: ...

    def restart(self) -> None: ...

    def close(self) -> None: ...

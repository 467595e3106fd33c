"""What the engine needs from one adapter's GPU worker, wherever that worker runs.

A :class:`Lane` is the interface of :class:`vajra_tui.engine.gpu.client.GPUClient`
that a :class:`vajra_tui.engine.session.Session` uses. A local client is a lane; so is a
Ray actor's handle wrapped to look like one (:mod:`.ray_lanes`). The multi-adapter
orchestrator (:mod:`.lanes`) only ever sees lanes, so ``--gpus`` and ``--ray`` share it.

A lane is asked one way: ``await lane.request(Compile(...), timeout)`` with a request of
:mod:`vajra_tui.engine.gpu.protocol`, answered with that request's typed reply. Faults keep
the client's meaning: a lane whose worker (or actor, or node) died raises ``WorkerCrashed``;
a request past its deadline raises ``WorkerTimeout`` after the lane's own watchdog killed
the worker; the workload's own fault raises ``WorkloadError``; any other failed request
raises ``WorkerError``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from vajra_tui.engine.events import DeviceInfo
from vajra_tui.engine.gpu.protocol import R, Request


@runtime_checkable
class Lane(Protocol):
    #: the adapter's DeviceInfo once started (None before)
    device: DeviceInfo | None

    @property
    def label(self) -> str:
        """Short, unique among the lanes of a run: ``gpu0``, ``node-2/gpu1``."""
        ...

    async def astart(self) -> DeviceInfo: ...

    async def request(self, request: Request[R], timeout: float) -> R: ...

    def interrupt(self, forget: list[str] | tuple[str, ...] = ()) -> None: ...

    def restart(self) -> None: ...

    def close(self) -> None: ...

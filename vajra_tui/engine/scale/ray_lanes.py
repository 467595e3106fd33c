"""One adapter of a Ray cluster as a lane: an actor that owns a local GPU worker.

Why an actor per adapter, and not Ray's GPU scheduling: Vulkan does not honour
``CUDA_VISIBLE_DEVICES`` (measured: the mask changes Vulkan's enumeration order and hides
nothing), so ``num_gpus`` cannot say which adapter a process drives. Each actor is
therefore pinned to its node (``NodeAffinitySchedulingStrategy``, hard), asks for no GPU,
and is *given* its adapter index, which its own :class:`~..gpu.client.GPUClient` passes to
its worker exactly as ``--gpus`` does on one host.

The watchdog stays next to the GPU: the actor's client enforces every deadline, so a hung
kernel is killed by the node that runs it (``WorkerTimeout`` comes back as a reply), and
the network never decides whether a kernel hung. What the network can decide is whether
the actor (or its node) is gone: that is ``WorkerCrashed``, and the orchestrator
(:mod:`.lanes`) retries the lane's in-flight candidates once elsewhere.

Workload files travel with ``Prepare``: a spec that names a ``.py`` file is sent with the
file's bytes (a :class:`ShippedFile` beside the request, never inside it), and a node where
that path does not hold the same bytes writes them to a folder of its user's cache
(``shipped/``) and imports them from there. Only that one file
travels: a workload file that imports its own sibling modules, and ``package.module:ATTR``
specs, need the package installed on every node (as ``vajra-tui`` itself must be).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, TypeVar

from vajra_tui.engine.events import DeviceInfo, NvmlMatch
from vajra_tui.engine.gpu.client import STARTUP_TIMEOUT_S, GPUClient, WorkerCrashed, WorkerError
from vajra_tui.engine.gpu.protocol import Failure, Prepare, R, Reply, Request

T = TypeVar("T")

#: past the client's own deadline, time for the remote client to kill and replace its
#: worker (a fresh worker replays ``prepare`` and every ``compile``) before the lane is
#: declared unresponsive
RESTART_GRACE_S = STARTUP_TIMEOUT_S * 6
CLOSE_TIMEOUT_S = 10.0
_FILE_SPEC = re.compile(r"^(?P<path>.+\.py)(?::(?P<attr>\w+))?$")


@dataclass(frozen=True)
class ShippedFile:
    """A workload file's bytes, sent with its ``Prepare`` for a node that lacks the file."""

    data: bytes
    sha256: str


# ---- on the node: the actor's body ---------------------------------------------------
class LaneServer:
    """The actor: a :class:`GPUClient` on one adapter of this node, serving requests.

    Runs with ``max_concurrency`` > 1 so ``interrupt`` reaches the client while a
    ``request`` waits on the worker (the client's own lock orders the rest). Faults come
    back as :class:`~vajra_tui.engine.gpu.protocol.Failure` records, never as exceptions:
    the lane raises the client's own exception types again on the other side.
    """

    def __init__(self, index: int, label: str, nvml: dict[str, Any] | None = None) -> None:
        from vajra_tui.settings import cache_dir

        node_environment()
        self.client = GPUClient(index, label=label, nvml=NvmlMatch.model_validate(nvml) if nvml else None)
        self.shipped = cache_dir() / "shipped"  # the user's own folder: what is imported stays theirs

    def start(self) -> DeviceInfo | Failure:
        return _outcome(self.client.start)

    def request(self, request: Request[Any], timeout: float,
                shipped: ShippedFile | None = None) -> Reply | Failure:
        """The client's reply to ``request`` (``shipped``: its workload file, for a ``Prepare``)."""
        if isinstance(request, Prepare) and shipped is not None:
            request = self._localized(request, shipped)
        return _outcome(lambda: self.client.request_blocking(request, timeout))

    def interrupt(self, forget: list[str]) -> None:
        self.client.interrupt(forget)

    def restart(self) -> None | Failure:
        return _outcome(self.client.restart)

    def close(self) -> None:
        self.client.close()

    def _localized(self, request: Prepare, shipped: ShippedFile) -> Prepare:
        """``request`` with a workload file this node can import (see the module docstring)."""
        match = _FILE_SPEC.match(request.workload)
        if match is None or _file_digest(Path(match["path"])) == shipped.sha256:
            return request
        folder = self.shipped / shipped.sha256[:16]
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = folder / Path(match["path"]).name
        if _file_digest(path) != shipped.sha256:
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(shipped.data)
            tmp.replace(path)
        return replace(request, workload=str(path) + (f":{match['attr']}" if match["attr"] else ""))


def _outcome(fn: Callable[[], T]) -> T | Failure:
    """What ``fn`` returned, or the record of what it raised (raised again by :class:`RayLane`)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - a worker fault and a failed start alike: one record back
        return Failure.of(exc)


def node_environment() -> None:
    """What a Ray worker process lacks for a GPU worker child: a runtime dir (raylets rarely
    have one, and Mesa complains without it), this package on the child's path, and no empty
    GPU mask (Ray may set ``CUDA_VISIBLE_DEVICES=""`` for ``num_gpus=0``; Vulkan does not hide
    adapters for it but reorders them, so the index would no longer be the one listed)."""
    from vajra_tui.runtime_env import ensure_runtime_dir

    ensure_runtime_dir()
    _export_package_path()
    if os.environ.get("CUDA_VISIBLE_DEVICES") == "":
        del os.environ["CUDA_VISIBLE_DEVICES"]


def _export_package_path() -> None:
    """The GPU worker is ``python -m vajra_tui...`` in a child: it must find this same package."""
    root = str(Path(__file__).resolve().parents[3])
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *parts])


def _file_digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


# ---- on the driver: the lane -----------------------------------------------------------
class RayLane:
    """A :class:`~.lane.Lane` over a :class:`LaneServer` actor on some node of the cluster."""

    def __init__(self, ray: Any, actor: Any, label: str, adapter_index: int, host: str, node_id: str) -> None:
        self._ray, self.actor, self._label = ray, actor, label
        self.adapter_index, self.host, self.node_id = adapter_index, host, node_id
        self.device: DeviceInfo | None = None
        self.closed = False

    @property
    def label(self) -> str:
        return self._label

    async def astart(self) -> DeviceInfo:
        self.device = await self._get(self.actor.start.remote(), STARTUP_TIMEOUT_S + RESTART_GRACE_S, "start")
        return self.device

    async def request(self, request: Request[R], timeout: float) -> R:
        """The remote client's reply; its faults are raised here as their own types."""
        shipped = shipped_file(request) if isinstance(request, Prepare) else None
        ref = self.actor.request.remote(request, timeout, shipped)
        return await self._get(ref, timeout + RESTART_GRACE_S, request.op)

    def interrupt(self, forget: list[str] | tuple[str, ...] = ()) -> None:
        """The remote client kills its worker; nothing here waits for it."""
        if not self.closed:
            self.actor.interrupt.remote(list(forget))

    def restart(self) -> None:
        _unwrap(self._ray.get(self.actor.restart.remote(), timeout=STARTUP_TIMEOUT_S * 6))

    def close(self) -> None:
        """Quit the remote worker, then end the actor (a dead one is simply gone)."""
        if self.closed:
            return
        self.closed = True
        try:
            self._ray.get(self.actor.close.remote(), timeout=CLOSE_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - a lost actor or node has nothing left to close
            pass
        try:
            self._ray.kill(self.actor)
        except Exception:  # noqa: BLE001
            pass

    async def _get(self, ref: Any, timeout: float, op: str) -> Any:
        """The actor's reply; a dead or unreachable actor is ``WorkerCrashed``."""
        exc_types = self._ray.exceptions
        try:  # awaited on the loop itself: no thread per lane in flight (a large cluster has many)
            reply = await asyncio.wait_for(asyncio.wrap_future(ref.future()), timeout)
        except (asyncio.TimeoutError, exc_types.GetTimeoutError):
            self._abandon()
            raise WorkerCrashed(f"{self.label} did not answer {op} within {timeout:.0f} s") from None
        except exc_types.RayTaskError as exc:  # a bug in the actor's own code, not a lost node
            raise WorkerError(f"{self.label}: {str(exc).strip().splitlines()[-1]}") from None
        except exc_types.RayError as exc:  # actor died, node died, actor unavailable
            raise WorkerCrashed(f"{self.label} is gone during {op} ({type(exc).__name__})") from None
        return _unwrap(reply)

    def _abandon(self) -> None:
        """An actor past every deadline (its node stalled): never asked again."""
        try:
            self._ray.kill(self.actor)
        except Exception:  # noqa: BLE001
            pass


def _unwrap(outcome: Any) -> Any:
    """The actor's answer, or its Failure raised as the client's own exception type."""
    if isinstance(outcome, Failure):
        raise outcome.exception()
    return outcome


def shipped_file(request: Prepare) -> ShippedFile | None:
    """The workload file a ``Prepare`` names, for nodes that do not share the path."""
    match = _FILE_SPEC.match(request.workload)
    if match is None:
        return None
    try:
        data = Path(match["path"]).read_bytes()
    except OSError:
        return None  # the local run would fail the same way; let the worker say so
    return ShippedFile(data, hashlib.sha256(data).hexdigest())


__all__ = ["LaneServer", "RayLane", "RESTART_GRACE_S", "ShippedFile", "shipped_file"]

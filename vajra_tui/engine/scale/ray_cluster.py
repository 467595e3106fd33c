"""A Ray cluster's adapters: connect, list each node's adapters there, build one lane each.

Ray is optional (``pip install 'ray>=2.60'``; pipx: ``pipx inject vajra-tui 'ray>=2.60'``):
nothing here imports it at module level, and a missing Ray or an unreachable cluster is one
:class:`RayUnavailable` line.

Discovery runs a small task *pinned to each alive node* that lists that node's adapters
in a child process (the same ``gpu/adapters.py`` listing as ``vajra-tui devices``), so the
indices are the ones that node's workers resolve. Which adapters count as devices:

* hardware adapters of the node's native backend (Vulkan, Metal or D3D12): the OpenGL
  view of the same card is not a second device;
* on a node with software adapters only, the first Vulkan one (lavapipe), so a test
  cluster without GPUs still has one lane per node;
* ``backends`` (``--backends vulkan,gl``) overrides both: every adapter of those backends.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Iterable

from vajra_tui.engine.gpu.adapters import AdapterEntry, entries_from
from vajra_tui.engine.scale.ray_lanes import LaneServer, RayLane

INSTALL_HINT = "pip install 'ray>=2.60' (pipx: pipx inject vajra-tui 'ray>=2.60')"
NATIVE_BACKENDS = ("vulkan", "metal", "d3d12")
BACKEND_ALIASES = {"gl": "opengl", "gles": "opengl", "vk": "vulkan", "dx12": "d3d12"}
LIST_TIMEOUT_S = 180.0
CONNECT_PROBE_S = 5.0
ACTOR_CPUS = 0.25  # a lane mostly waits on its GPU worker; the worker is its own process
ACTOR_CONCURRENCY = 4  # interrupt() must reach an actor whose call() is waiting


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached: one line for the user."""


@dataclass(frozen=True)
class ClusterAdapter:
    """One adapter on one node: where a lane's actor goes and what it drives."""

    node_id: str
    host: str
    entry: AdapterEntry
    nvml: dict[str, Any] | None = None

    @property
    def model_label(self) -> str:
        """What identical GPUs share, as people name it: ``NVIDIA H200 (Vulkan)``."""
        e = self.entry
        return f"{e.name} ({e.backend})" if e.backend else e.name


# ---- connecting ---------------------------------------------------------------------
def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable(f"Ray is not installed: {INSTALL_HINT}") from None
    return ray


def connect(address: str) -> tuple[Any, bool]:
    """``ray`` connected to ``auto``, ``ADDRESS`` or ``local`` (a one-machine cluster it
    starts); also whether this call connected (then :func:`disconnect` ends it)."""
    ray = import_ray()
    if ray.is_initialized():  # a script or test already chose its cluster
        return ray, False
    target = None if address == "local" else address
    if target not in (None, "auto"):
        _reachable(target)
    try:
        ray.init(address=target, log_to_driver=False, logging_level=logging.ERROR,
                 include_dashboard=False if target is None else None)
    except Exception as exc:  # noqa: BLE001 - ConnectionError, timeouts, bad addresses alike
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        raise RayUnavailable(f"cannot reach the Ray cluster at {address!r}: "
                             f"{lines[0] if lines else type(exc).__name__}") from None
    return ray, True


def _reachable(address: str) -> None:
    """A TCP handshake with ``host:port`` first: ``ray.init`` waits for minutes on a
    cluster that is not there (measured: over ten on a closed port), a socket says so
    in seconds."""
    import socket

    host, _, port = address.split("://")[-1].rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailable(f"--ray {address!r}: want auto, local, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_PROBE_S).close()
    except OSError as exc:
        raise RayUnavailable(f"cannot reach the Ray cluster at {address!r}: "
                             f"{exc.strerror or type(exc).__name__}") from None


def disconnect(ray: Any, connected: bool) -> None:
    if connected and ray.is_initialized():
        ray.shutdown()


# ---- discovery ------------------------------------------------------------------------
def _node_adapters() -> list[dict[str, Any]]:
    """On the node: its adapters, NVIDIA ones identified through NVML where it exists."""
    from vajra_tui.engine.gpu.adapters import list_adapters
    from vajra_tui.engine.gpu.identify import NVIDIA_VENDOR_ID
    from vajra_tui.engine.scale.ray_lanes import node_environment

    node_environment()  # the same environment as the lanes' actors: the same indices
    rows = list_adapters()
    nvidia = [r["index"] for r in rows if r.get("vendor_id") == NVIDIA_VENDOR_ID and not r.get("software")]
    if nvidia:
        try:
            rows = list_adapters(probe=nvidia)
        except Exception:  # noqa: BLE001 - without an identity, telemetry is just missing
            pass
    return rows


def backends_from(text: str | None) -> tuple[str, ...] | None:
    """``--backends vulkan,gl`` as wgpu names them (lower case); None for the default rule."""
    if not text:
        return None
    names = [BACKEND_ALIASES.get(b.strip().lower(), b.strip().lower()) for b in text.split(",") if b.strip()]
    return tuple(names) or None


def keep(entries: list[AdapterEntry], backends: tuple[str, ...] | None = None) -> list[AdapterEntry]:
    """The adapters of one node that count as devices (see the module docstring)."""
    if backends:
        return [e for e in entries if e.backend.lower() in backends]
    hardware = [e for e in entries if not e.software]
    if hardware:
        present = [e.backend.lower() for e in hardware]
        native = next((b for b in NATIVE_BACKENDS if b in present), present[0])
        return [e for e in hardware if e.backend.lower() == native]
    vulkan = [e for e in entries if e.backend.lower() == "vulkan"]
    return (vulkan or entries)[:1]


def discover(ray: Any, backends: tuple[str, ...] | None = None) -> tuple[list[ClusterAdapter], list[str]]:
    """Every kept adapter of every alive node, and one line per node that could not say."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    task = ray.remote(num_cpus=0)(_node_adapters)
    refs = [task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote()
            for n in nodes]
    found: list[ClusterAdapter] = []
    problems: list[str] = []
    for node, ref in zip(nodes, refs):
        host = str(node.get("NodeManagerAddress", ""))
        try:
            rows = ray.get(ref, timeout=LIST_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - a node that cannot list adapters adds none
            problems.append(f"{node_tag(node['NodeID'])} ({host}): could not list adapters: "
                            f"{str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__}")
            continue
        nvml = {r["index"]: r.get("nvml") for r in rows}
        found += [ClusterAdapter(node["NodeID"], host, e, nvml.get(e.index))
                  for e in keep(entries_from(rows), backends)]
    return found, problems


def node_tag(node_id: str, length: int = 4) -> str:
    return f"node-{node_id[:length]}"


def labels(adapters: list[ClusterAdapter]) -> list[str]:
    """``node-ab12/gpu0``: node ids shortened as far as they stay distinct."""
    ids = sorted({a.node_id for a in adapters})
    length = 4
    while len({i[:length] for i in ids}) < len(ids):
        length += 2
    return [f"{node_tag(a.node_id, length)}/gpu{a.entry.index}" for a in adapters]


def by_model(adapters: Iterable[ClusterAdapter]) -> dict[str, list[ClusterAdapter]]:
    """Adapters grouped by device model, the largest group first (ties: first seen)."""
    groups: dict[str, list[ClusterAdapter]] = {}
    for a in adapters:
        groups.setdefault(a.model_label, []).append(a)
    return dict(sorted(groups.items(), key=lambda kv: -len(kv[1])))


# ---- lanes -----------------------------------------------------------------------------
def build_lanes(ray: Any, adapters: list[ClusterAdapter], names: list[str] | None = None) -> list[RayLane]:
    """One pinned actor per adapter (not started: each Session starts its lane)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    actor_class = ray.remote(LaneServer)
    names = names or labels(adapters)
    lanes = []
    for adapter, label in zip(adapters, names):
        actor = actor_class.options(
            num_cpus=ACTOR_CPUS, num_gpus=0, max_concurrency=ACTOR_CONCURRENCY, max_restarts=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(adapter.node_id, soft=False),
        ).remote(adapter.entry.index, label, adapter.nvml)
        lanes.append(RayLane(ray, actor, label, adapter.entry.index, adapter.host, adapter.node_id))
    return lanes


__all__ = ["ClusterAdapter", "RayUnavailable", "INSTALL_HINT", "connect", "disconnect", "discover", "keep",
           "backends_from", "by_model", "labels", "build_lanes", "import_ray"]

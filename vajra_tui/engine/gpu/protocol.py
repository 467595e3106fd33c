"""What the parent and its GPU worker say to each other: typed requests, replies and failures.

One request class per operation the worker performs, each naming the reply class it is
answered with (``Compile`` is a ``Request[Compiled]``), so a caller reads fields, not
keys, and a type checker knows what ``await lane.request(Compile(...), timeout)`` returns.
A failure is never text to parse: it crosses as a :class:`Failure` record and is raised
again on the other side as an exception type (:meth:`Failure.exception`) — a broken
workload as :class:`~vajra_tui.engine.workloads.base.WorkloadError`, anything else the
worker raised as :class:`WorkerError`.

Every message crosses a multiprocessing Connection, and for Ray lanes Ray's serializer
too, so each is a module-level dataclass of picklable fields (numbers, strings, lists,
dicts and the pydantic models of events/). Requests are frozen: the client keeps
``Prepare`` and the ``Compile`` requests it sent to replay them into a fresh worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, Sequence, TypeVar

from vajra_tui.engine.errors import RunFailed
from vajra_tui.engine.events import BatchTelemetry, Calibration, DeviceInfo
from vajra_tui.engine.workloads.base import WorkloadError


# ---- failures ------------------------------------------------------------------------------
class WorkerError(RunFailed):
    """The worker answered with an error (a Python exception inside it)."""

    prefix = "GPU worker failed: "


class WorkerTimeout(RunFailed):
    """The request ran past its deadline; the worker was killed."""

    prefix = "GPU worker failed: "


class WorkerCrashed(RunFailed):
    """The worker died (device lost, driver crash) while serving a request."""

    prefix = "GPU worker failed: "


FaultKind = Literal["error", "workload", "timeout", "crashed"]


@dataclass(frozen=True)
class Failure:
    """An exception, as it crosses a process (or node) boundary: its kind and its words.

    The worker sends one instead of a reply; a Ray actor returns one for any fault of its
    client. A :class:`WorkloadError` keeps its parts (field, problem, file), so it is raised
    again as the same error, not as a message with the kind written in front.
    """

    kind: FaultKind
    message: str
    field_name: str = ""  # a WorkloadError's field; its problem is the message
    where: str = ""

    @classmethod
    def of(cls, exc: BaseException) -> Failure:
        """The record of ``exc``: worker faults keep their kind, other exceptions name their type."""
        if isinstance(exc, WorkloadError):
            return cls("workload", exc.problem, exc.field, exc.where)
        if isinstance(exc, WorkerTimeout):
            return cls("timeout", str(exc))
        if isinstance(exc, WorkerCrashed):
            return cls("crashed", str(exc))
        if isinstance(exc, WorkerError):
            return cls("error", str(exc))
        return cls("error", f"{type(exc).__name__}: {exc}")

    def exception(self) -> Exception:
        """The exception to raise on this side of the boundary."""
        if self.kind == "workload":
            return WorkloadError(self.field_name, self.message, self.where)
        return {"timeout": WorkerTimeout, "crashed": WorkerCrashed}.get(self.kind, WorkerError)(self.message)


# ---- replies -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reply:
    """Any answer of the worker (what a request is answered with when nothing failed)."""


@dataclass(frozen=True)
class Ready(Reply):
    """The worker's first word: it found its adapter and serves from now on."""


@dataclass(frozen=True)
class Greeting(Reply):
    device: DeviceInfo
    pid: int  # the worker process: tests and health checks see a replaced worker by it


@dataclass(frozen=True)
class Prepared(Reply):
    rss_mb: float
    judge: str  # who judges verification: "gpu", "cpu" or "check" (both)
    seconds: dict[str, float]  # per step of the preparation (inputs, references, uploads)


@dataclass(frozen=True)
class Compiled(Reply):
    compiled: bool
    error: str = ""  # the compiler's message (in Naga's frame) when it did not compile
    zero_init: bool = False  # what runs had its workgroup memory zeroed
    reused: bool = False  # found built: prebuilt, a finalist timed again, or a copy
    built: bool = False  # this kernel's pipeline had to be built for it (or by its prebuild)


@dataclass(frozen=True)
class Prebuilt(Reply):
    queued: int
    threads: int = 0


@dataclass(frozen=True)
class Checked(Reply):
    """The verdict on one dispatch's outputs against the float64 references."""

    passed: bool
    max_rel_error: float | None
    worst_index: int | None
    reason: str = ""
    unwritten: int = 0  # elements still holding the poison pattern
    nonfinite: int = 0  # NaN or Inf the kernel computed and wrote
    judged_by: str = ""  # "gpu", "cpu", "gpu=cpu"; '' when only the per-dispatch check found it
    where: str = ""  # set when the failure was found by the check after every dispatch


@dataclass(frozen=True)
class Parsed(Reply):
    error: str  # '' when the module parses and validates


@dataclass(frozen=True)
class Timed(Reply):
    wall_ms: list[float]
    ts_ms: list[float | None]  # None where the adapter has no timestamps
    verdict: Checked | None = None  # the full check (``check``), or a dispatch found wrong


@dataclass(frozen=True)
class StreamTimed(Reply):
    ts_ms: list[list[float]]  # per kernel, per timed dispatch
    wall_ms: float  # the whole submission
    verdicts: list[Checked]  # per kernel
    telemetry: BatchTelemetry | None = None
    pass_ms: list[list[list[float]]] | None = None  # multi-pass: per kernel, per round, per pass


@dataclass(frozen=True)
class Dropped(Reply):
    rss_mb: float  # the client replaces a worker that keeps growing


@dataclass(frozen=True)
class Calibrated(Reply):
    calibration: Calibration


@dataclass(frozen=True)
class CopyRate(Reply):
    copy_gbps: float


# ---- requests ------------------------------------------------------------------------------
R = TypeVar("R", bound=Reply)


class Request(Generic[R]):
    """A request answered with an ``R``; ``op`` names it in messages (deadlines, crashes)."""

    op: ClassVar[str]


@dataclass(frozen=True)
class Hello(Request[Greeting]):
    """Which adapter, which process: also a lane's health check."""

    op = "hello"


@dataclass(frozen=True)
class Prepare(Request[Prepared]):
    """A workload's buffers, inputs and float64 references at one size, for every seed.

    ``workload`` is a spec the worker's loader resolves (a name, a file, ``pkg.mod:ATTR``).
    """

    op = "prepare"
    workload: str
    size: dict[str, int]
    seeds: Sequence[int]


@dataclass(frozen=True)
class Compile(Request[Compiled]):
    """A candidate's pipeline; what runs is ``source`` with its workgroup memory zeroed.
    ``constants`` set its ``override``s as pipeline constants."""

    op = "compile"
    cid: str
    source: str
    dispatch: Sequence[int]
    constants: dict[str, Any] | None = None
    entry: str = "main"
    more: Sequence["PassSpec"] = ()  # a multi-pass result's other passes, in order after this one
    uniforms: dict[str, bytes] = field(default_factory=dict)  # uniform contents by binding name
    first: int = 0  # where this pass sits among the result's passes (0: the first)
    bind: dict[str, str] = field(default_factory=dict)  # binding -> the buffer it gets in this pass


@dataclass(frozen=True)
class PassSpec:
    """One more pass of a result: its module, entry point, grid, constants, and place."""

    source: str
    entry: str
    dispatch: Sequence[int]
    constants: dict[str, Any] | None = None
    index: int = 0
    bind: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PrebuildItem:
    """One kernel of a prebuild, as its later ``Compile`` will name it."""

    source: str
    constants: dict[str, Any] | None = None
    entry: str = "main"
    bind: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Prebuild(Request[Prebuilt]):
    """A generation's kernels built on threads while it is admitted; ``more``: these join
    the batch's earlier prebuilds (otherwise their leftovers go)."""

    op = "prebuild"
    items: Sequence[PrebuildItem]
    more: bool = False


@dataclass(frozen=True)
class Verify(Request[Checked]):
    """One poisoned dispatch, checked; ``grid`` overrides the planned one (coverage probes),
    ``judge`` ("gpu" or "cpu") who judges it."""

    op = "verify"
    cid: str
    seed: int
    grid: Sequence[int] | None = None
    judge: str | None = None


@dataclass(frozen=True)
class Parse(Request[Parsed]):
    """Only the compiler's front end: does this text parse and validate as a module?"""

    op = "parse"
    source: str


@dataclass(frozen=True)
class Time(Request[Timed]):
    """``n`` dispatches one at a time, each checked after its clock stopped; ``check``
    also verifies the last one in full."""

    op = "time"
    cid: str
    n: int
    seed: int
    check: bool = False
    cache: str = "warm"


@dataclass(frozen=True)
class TimeStream(Request[StreamTimed]):
    """All of a batch's timed dispatches back to back in one submission."""

    op = "time_stream"
    cids: Sequence[str]
    warmup: int
    reps: int
    seed: int
    cache: str = "warm"
    bring_up: bool = False  # bring an idled SM clock up first (TimingSettings.clock_bring_up)


@dataclass(frozen=True)
class Drop(Request[Dropped]):
    """Finished candidates' pipelines released (``cid`` or the batch's ``cids``); ``keep``:
    the session's finalists now, whose pipelines stay for the next shoot-out."""

    op = "drop"
    cid: str | None = None
    cids: Sequence[str] = ()
    keep: Sequence[str] | None = None


@dataclass(frozen=True)
class Calibrate(Request[Calibrated]):
    """The roofline: copy bandwidth, FMA rate, launch floor."""

    op = "calibrate"


@dataclass(frozen=True)
class QuickCopy(Request[CopyRate]):
    """A few copy dispatches: enough to tell whether a cached calibration still holds."""

    op = "quick_copy"
    shape: int | None = None


@dataclass(frozen=True)
class Release(Request[Dropped]):
    """The workload let go (buffers, references, pipelines): a finished run's worker waits
    idle for the next run holding no GPU memory of its own (gpu/idle.py)."""

    op = "release"


@dataclass(frozen=True)
class Quit(Request[Reply]):
    """The worker ends without an answer (the client then reaps it)."""

    op = "quit"


def candidate_of(request: Request[Any]) -> str | None:
    """The candidate a request is about, if one: its pipeline is forgotten when it kills the worker."""
    return getattr(request, "cid", None)

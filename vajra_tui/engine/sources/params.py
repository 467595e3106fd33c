"""Parameter search over a kernel's own WGSL ``override`` constants (``--source params``).

The search space lives in the kernel, in header comments beside the overrides::

    override WG: u32 = 128;
    // tune: WG = 64, 128, 256
    // tune: ROWS_PER_WG = 1, 2, 4        (or a range: 1..4)
    // require: WG * ROWS_PER_WG <= 1024   (Python-like arithmetic; && || ! also read)

Every configuration is a candidate like any other: the same source, compiled with its
values as pipeline ``constants`` (never substituted into the text), verified and timed
beside the baseline. Configurations a ``// require:`` excludes, and those the adapter's
limits rule out (workgroup size, workgroup memory, grid), are skipped before they run
and counted. When the admissible space fits ``--budget`` every configuration is
measured; otherwise Optuna's TPE sampler (a maintained model-based search) picks them
in rounds, told after each round how fast each one ran relative to its batch's baseline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from vajra_tui.engine.candidate import Candidate, GenerationContext
from vajra_tui.engine.admission.contract import ContractError, stitch
from vajra_tui.engine.events import DeviceInfo, Event, Notice
from vajra_tui.engine.wgsl.tokens import workgroup_size
from vajra_tui.engine.workloads import Size, Workload
from vajra_tui.engine.sources.base import STRATEGIES, CandidateSource
from vajra_tui.engine.sources.library.base import limit
from vajra_tui.engine.sources.require import evaluate
from vajra_tui.engine.sources.space import ParamsError, Space, Value, show_value, read_space

COUNT_LIMIT = 200_000  # requires are counted over spaces up to this size
ROUND_MAX = 8
__all__ = ["ParamsError", "ParamsSource", "Space", "evaluate", "read_space", "ruled_out"]


# ---- the adapter's limits ---------------------------------------------------------------
def ruled_out(workload: Workload, size: Size, source: str, config: dict[str, Value],
              device: DeviceInfo | None) -> str | None:
    """Why the adapter cannot run this configuration (None: it can), found without running it."""
    limits = device.limits if device else {}
    empty = _empty_workgroup(workload, size, source, config)
    if empty is not None:
        return empty
    try:
        st = stitch(workload, size, source, limits.get("max-compute-workgroups-per-dimension", 65535),
                    limit(device, "max-compute-workgroup-storage-size"), constants=config)
    except ContractError as exc:
        return str(exc)
    x, y, z = st.workgroup_size
    if x * y * z > limit(device, "max-compute-invocations-per-workgroup"):
        return f"a workgroup of {x * y * z} invocations is over the adapter's limit"
    for axis, value in (("x", x), ("y", y)):
        if value > limit(device, f"max-compute-workgroup-size-{axis}"):
            return f"workgroup size {axis}={value} is over the adapter's limit"
    return None


def _empty_workgroup(workload: Workload, size: Size, source: str, config: dict[str, Value]) -> str | None:
    """A workgroup axis below 1 in this configuration (``@workgroup_size(WG)`` at WG=0, or
    ``TILE / ROWS`` at ROWS > TILE): no adapter runs it, and planning its dispatch would
    divide by it. Read with the same constants the contract reads it with."""
    consts = {dim: size[dim] for dim in workload.dims}
    consts.update({k: v for k, v in config.items() if isinstance(v, int) and not isinstance(v, bool)})
    for axis, value in zip("xyz", workgroup_size(source, consts) or ()):
        if value < 1:
            return f"workgroup size {axis}={value} is not positive (each axis must be at least 1)"
    return None


# ---- the search -------------------------------------------------------------------------
@dataclass
class _Tally:
    space: int = 0
    required_out: int = 0
    limits_out: int = 0
    measured: int = 0
    reasons: dict[str, int] = field(default_factory=dict)


class ParamsSource(CandidateSource):
    """Proposes configurations of the user's kernels: exhaustive within the budget, else Optuna."""

    label = "params"

    def __init__(self, workload: Workload, size: Size, spaces: list[Space], budget: int,
                 emit: Callable[[Event], None] | None = None, seed: int = 0) -> None:
        self.workload, self.size, self.spaces = workload, size, spaces
        self.budget, self.emit, self.seed = max(1, budget), emit or (lambda e: None), seed
        self.tally = _Tally(space=sum(s.size for s in spaces))
        self.search = ""  # "exhaustive" | "optuna"
        self._queue: list[tuple[Space, dict[str, Value]]] = []  # exhaustive: what is left
        self._seen: set[str] = set()
        self._pending: dict[str, tuple[Any, Any]] = {}  # cid -> (study, trial)
        self._trial_of: dict[str, tuple[Any, Any]] = {}  # configuration key -> (study, trial)
        self._studies: list[tuple[Space, Any, dict[str, Any]]] = []
        self.round = 0
        self._admissible: list[tuple[Space, dict[str, Value]]] = []
        self._countable = all(s.size <= COUNT_LIMIT for s in spaces)
        self._plan()

    def _plan(self) -> None:
        """Exhaustive when every configuration the requires admit fits the budget, else Optuna."""
        for space in self.spaces if self._countable else ():
            for config in space.configurations():
                if space.excluded_by(config, self.size):
                    self.tally.required_out += 1
                else:
                    self._admissible.append((space, config))
        exhaustive = self._countable and len(self._admissible) <= self.budget
        self.search = "exhaustive" if exhaustive else "optuna"

    # ---- what the run reports -------------------------------------------------------
    @property
    def exhausted(self) -> str:
        if self.search == "exhaustive":
            return "params: every admissible configuration is measured"
        return f"params: the budget of {self.budget} configurations is spent"

    def summary(self) -> dict[str, Any]:
        t = self.tally
        return {"search": self.search, "space": t.space, "required_out": t.required_out,
                "limits_out": t.limits_out, "measured": t.measured, "budget": self.budget,
                "ruled_out_because": dict(t.reasons)}

    @property
    def planned_rounds(self) -> int:
        """Rounds the whole budget takes (exhaustive: one)."""
        if self.search != "optuna":
            return 1
        return max(1, math.ceil(self.budget / self._round_size))

    @property
    def _round_size(self) -> int:
        return max(1, min(ROUND_MAX, math.ceil(self.budget / 3)))

    # ---- generation 1 -----------------------------------------------------------------
    async def propose(self, ctx: GenerationContext, strategies: Sequence[str] = STRATEGIES) -> list[Candidate]:
        """The first round: every admissible configuration, or Optuna's first picks."""
        device = ctx.device
        if self.search == "exhaustive":
            picks = [(s, c) for s, c in self._admissible if self._admit(s, c, device)]
        else:
            self._start_studies()
            picks = self._ask(device, self._round_size)
        self.emit(Notice(message=self._headline(self._countable, len(self._admissible))))
        return self._candidates(picks, ctx.generation or 1, "P")

    def _headline(self, countable: bool, admissible: int) -> str:
        t = self.tally
        parts = [f"params: {t.space} configuration{'s' if t.space != 1 else ''} in "
                 f"{', '.join(s.kernel for s in self.spaces)}"]
        if t.required_out:
            parts.append(f"{t.required_out} excluded by // require")
        if self.search == "exhaustive":
            if t.limits_out:
                parts.append(f"{t.limits_out} ruled out by this adapter's limits ({self._why()})")
            parts.append(f"exhaustive: {t.measured} measured")
        else:
            left = f"{admissible} admissible, " if countable else ""
            parts.append(f"{left}more than --budget {self.budget}: Optuna (TPE) picks {self.budget} "
                         f"in rounds of {self._round_size}")
        return "; ".join(parts)

    def _why(self) -> str:
        return ", ".join(f"{n}x {r}" if n > 1 else r for r, n in self.tally.reasons.items())

    def _admit(self, space: Space, config: dict[str, Value], device: DeviceInfo | None) -> bool:
        """Not measured yet, and runnable here; a limit that rules it out is counted."""
        key = space.key(config)
        if key in self._seen:
            return False
        self._seen.add(key)
        why = ruled_out(self.workload, self.size, space.source, config, device)
        if why is not None:
            self.tally.limits_out += 1
            self.tally.reasons[why] = self.tally.reasons.get(why, 0) + 1
            return False
        self.tally.measured += 1
        return True

    def _candidates(self, picks: list[tuple[Space, dict[str, Value]]], generation: int,
                    letter: str) -> list[Candidate]:
        self.round += 1
        out = []
        for i, (space, config) in enumerate(picks, 1):
            desc = " ".join(f"{k}={show_value(v)}" for k, v in config.items())
            cid = f"p{self.round}-{i}"
            out.append(Candidate(
                id=cid, name=f"{space.kernel} {desc}".strip() if config else space.kernel,
                strategy="params", generation=generation, source=space.source, constants=dict(config),
                origin=f"params: {space.kernel} {desc} ({self.search})".rstrip(),
                params={**config, "kernel": space.kernel, "key": space.key(config), "search": self.search}))
            if space.key(config) in self._trial_of:
                self._pending[cid] = self._trial_of.pop(space.key(config))
        return out

    # ---- later rounds -----------------------------------------------------------------
    async def evolve(self, ctx: GenerationContext, letter: str) -> list[Candidate]:
        """A later round: Optuna told what the last one measured, asked for the next picks."""
        if self.search != "optuna":
            return []
        self._tell(ctx)
        left = self.budget - self.tally.measured
        if left <= 0:
            return []
        return self._candidates(self._ask(ctx.device, min(left, self._round_size)), ctx.generation, letter)

    def _start_studies(self) -> None:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        startup = max(2, min(10, self.budget // 3))
        for i, space in enumerate(self.spaces):
            sampler = optuna.samplers.TPESampler(seed=self.seed + i, n_startup_trials=startup)
            study = optuna.create_study(direction="minimize", sampler=sampler)
            dists = {a: optuna.distributions.CategoricalDistribution(list(v)) for a, v in space.axes.items()}
            self._studies.append((space, study, dists))

    def _ask(self, device: DeviceInfo | None, want: int) -> list[tuple[Space, dict[str, Value]]]:
        """Up to ``want`` new runnable configurations from the studies, in turn."""
        import optuna

        picks: list[tuple[Space, dict[str, Value]]] = []
        attempts = 0
        while len(picks) < want and attempts < 200 * want and self._studies:
            space, study, dists = self._studies[attempts % len(self._studies)]
            attempts += 1
            trial = study.ask(dists)
            config = {a: trial.params[a] for a in space.axes}
            key = space.key(config)
            if key in self._seen:  # measured or ruled out before: say so, ask again
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                continue
            if space.excluded_by(config, self.size):
                self._seen.add(key)
                self.tally.required_out += 1
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                continue
            if not self._admit(space, config, device):
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
                continue
            self._trial_of[key] = (study, trial)
            picks.append((space, config))
        return picks

    def _tell(self, ctx: GenerationContext) -> None:
        """Each measured configuration's time relative to the baseline of its batch."""
        import optuna

        by_id = {r.id: r for r in ctx.results}
        for cid, (study, trial) in list(self._pending.items()):
            r = by_id.get(cid)
            if r is None:
                continue
            del self._pending[cid]
            if r.status == "verified" and r.speedup:
                study.tell(trial, 1.0 / r.speedup)
            else:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)

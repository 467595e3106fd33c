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

import ast
import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence, Union

from vajra_tui.engine.errors import UsageError
from vajra_tui.engine.candidate import Candidate, GenerationContext
from vajra_tui.engine.admission.contract import ContractError, stitch
from vajra_tui.engine.events import DeviceInfo, Event, Notice
from vajra_tui.engine.wgsl.tokens import override_names
from vajra_tui.engine.workloads import Size, Workload
from vajra_tui.engine.sources.base import STRATEGIES, CandidateSource
from vajra_tui.engine.sources.library.base import limit

Value = Union[bool, int, float]
TUNE = re.compile(r"^\s*//\s*tune:\s*(.*?)\s*$")
REQUIRE = re.compile(r"^\s*//\s*require:\s*(.*?)\s*$")
COUNT_LIMIT = 200_000  # requires are counted over spaces up to this size
ROUND_MAX = 8


class ParamsError(UsageError):
    """A malformed ``// tune:`` or ``// require:`` line: one line naming the kernel and the line."""


@dataclass(frozen=True)
class Space:
    kernel: str  # the kernel's name (its file's stem)
    source: str
    axes: dict[str, tuple[Value, ...]]
    requires: tuple[tuple[int, str], ...] = ()  # (line, expression as written)

    @property
    def size(self) -> int:
        return math.prod(len(v) for v in self.axes.values()) if self.axes else 1

    def configurations(self) -> Iterator[dict[str, Value]]:
        for values in itertools.product(*self.axes.values()):
            yield dict(zip(self.axes, values))

    def key(self, config: dict[str, Value]) -> str:
        return f"{self.kernel} " + " ".join(f"{k}={_show(v)}" for k, v in config.items())

    def excluded_by(self, config: dict[str, Value], size: Size) -> str | None:
        """The ``// require:`` a configuration fails, if any."""
        names = {**size, **config}
        for line, text in self.requires:
            if not evaluate(text, names):
                return f"// require: {text}"
        return None


def read_space(kernel: str, source: str, dims: tuple[str, ...] = ()) -> Space:
    """The space a kernel declares; an empty one (just the kernel) when it has no ``// tune:``."""
    declared = override_names(source)
    axes: dict[str, tuple[Value, ...]] = {}
    requires: list[tuple[int, str]] = []
    for number, line in enumerate(source.splitlines(), 1):
        where = f"{kernel}:{number}"
        tune, require = TUNE.match(line), REQUIRE.match(line)
        if tune:
            name, eq, values = tune.group(1).partition("=")
            name = name.strip()
            if not eq or not re.fullmatch(r"[A-Za-z_]\w*", name):
                raise ParamsError(f"{where}: // tune: want NAME = value, value, ...")
            if name not in declared:
                raise ParamsError(f"{where}: // tune: {name}: the kernel declares no `override {name}`")
            if name in axes:
                raise ParamsError(f"{where}: // tune: {name} is tuned twice")
            axes[name] = _values(values, where)
        elif require:
            requires.append((number, require.group(1)))
    for number, text in requires:  # after every // tune: line: a require may come first
        try:
            unknown = sorted(_names(text) - set(axes) - set(dims))
        except SyntaxError:
            raise ParamsError(f"{kernel}:{number}: // require: cannot read {text!r}") from None
        if unknown:
            raise ParamsError(f"{kernel}:{number}: // require: {', '.join(unknown)} is neither a "
                              "// tune: name nor a size constant")
    return Space(kernel, source, axes, tuple(requires))


def _values(text: str, where: str) -> tuple[Value, ...]:
    text = text.strip()
    span = re.fullmatch(r"(-?\d+)\s*\.\.\s*(-?\d+)", text)
    if span:
        lo, hi = int(span.group(1)), int(span.group(2))
        if hi < lo or hi - lo > 4096:
            raise ParamsError(f"{where}: // tune: range {text} is empty or too long")
        return tuple(range(lo, hi + 1))
    out: list[Value] = []
    for part in (p.strip() for p in text.split(",")):
        if part in ("true", "false"):
            out.append(part == "true")
            continue
        try:
            out.append(int(part.rstrip("ui"), 0) if re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)[ui]?", part)
                       else float(part.rstrip("fh")))
        except ValueError:
            raise ParamsError(f"{where}: // tune: {part!r} is not a number or true/false") from None
    if not out or len(set(out)) != len(out):
        raise ParamsError(f"{where}: // tune: want distinct values")
    return tuple(out)


# ---- // require: a small, safe expression language ------------------------------------
_OPS = (ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div,
        ast.FloorDiv, ast.Mod, ast.Pow, ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift,
        ast.UnaryOp, ast.Not, ast.USub, ast.UAdd, ast.Invert, ast.Compare, ast.Eq, ast.NotEq, ast.Lt,
        ast.LtE, ast.Gt, ast.GtE, ast.Name, ast.Load, ast.Constant, ast.Call)
_FUNCS = {"min": min, "max": max, "abs": abs}


def _python(text: str) -> ast.Expression:
    text = text.replace("&&", " and ").replace("||", " or ")
    text = re.sub(r"!(?!=)", " not ", text)
    text = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", text))
    tree = ast.parse(text.strip(), mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _OPS):
            raise SyntaxError(f"{type(node).__name__} is not allowed")
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _FUNCS):
            raise SyntaxError("only min(), max() and abs() may be called")
    return tree


def _names(text: str) -> set[str]:
    return {n.id for n in ast.walk(_python(text)) if isinstance(n, ast.Name) and n.id not in _FUNCS}


def evaluate(text: str, names: dict[str, Any]) -> bool:
    """A ``// require:`` expression over tuned values and sizes (no builtins, no attributes)."""
    code = compile(_python(text), "<require>", "eval")
    try:
        return bool(eval(code, {"__builtins__": {}, **_FUNCS}, dict(names)))  # noqa: S307 - AST checked
    except (ArithmeticError, TypeError, ValueError):
        return False


# ---- the adapter's limits ---------------------------------------------------------------
def ruled_out(workload: Workload, size: Size, source: str, config: dict[str, Value],
              device: DeviceInfo | None) -> str | None:
    """Why the adapter cannot run this configuration (None: it can), found without running it."""
    limits = device.limits if device else {}
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
            desc = " ".join(f"{k}={_show(v)}" for k, v in config.items())
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


def _show(v: Value) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)

"""The search space a kernel declares in its header comments: ``// tune: NAME = values``
over its ``override``s and ``// require: <condition>`` lines (the condition language is
:mod:`vajra_tui.engine.sources.require`).

Every line comes from a user's file, so each is bounded when it is read: value lengths
and magnitudes, values per axis, a require's length, nesting and constant parts. A line
past a bound, like a malformed one, is a :class:`ParamsError`: one line naming the kernel
and the line (a UsageError: the CLI exits 2 before the GPU starts).
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import Iterator, Sequence, Union

from vajra_tui.engine.sources.require import MAX_MAGNITUDE, ParamsError, RequireLimit, evaluate, probe
from vajra_tui.engine.sources.require import names as require_names
from vajra_tui.engine.wgsl.template import TemplateError, is_template, placeholders
from vajra_tui.engine.wgsl.tokens import override_names
from vajra_tui.engine.workloads import Size

Value = Union[bool, int, float]
HEADER = re.compile(r"\s*//\s*(tune|require):")  # the rest of the line is stripped, not matched:
# a lazy `(.*?)\s*$` backtracked over trailing blanks, quadratic in the line's length
MAX_VALUE_CHARS = 32
"""Longest ``// tune:`` value: any 32-bit integer or float fits; a longer one only makes
int() and str() slow or fail (Python refuses int strings past 4300 digits)."""
MAX_AXIS_VALUES = 4097
"""Most values one ``// tune:`` line may list (a range ``lo..lo+4096``): one axis of a
search the budget samples, not a table."""
SHOWN = 60  # characters of a hostile line quoted back in a message


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
        return f"{self.kernel} " + " ".join(f"{k}={show_value(v)}" for k, v in config.items())

    def excluded_by(self, config: dict[str, Value], size: Size) -> str | None:
        """The ``// require:`` a configuration fails, if any; a require that goes past
        the evaluator's limits at this configuration is a ParamsError naming it and the values."""
        names = {**size, **config}
        for line, text in self.requires:
            try:
                if not evaluate(text, names):
                    return f"// require: {text}"
            except RequireLimit as exc:
                at = " ".join(f"{k}={show_value(v)}" for k, v in config.items())
                raise ParamsError(f"{self.kernel}:{line}: // require: {_brief(text)}: {exc} at {at}") from None
        return None


def template_names(source: str) -> list[str]:
    """The names a template kernel needs from outside (none for plain WGSL): they tune too."""
    if not is_template(source):
        return []
    try:
        return placeholders(source)
    except TemplateError:
        return []


def first_values(source: str) -> dict[str, Value]:
    """Each ``// tune:`` name's first value (a range's low end): what a template is filled
    with when nothing else gives the name. A space that cannot be read gives none (the
    params search says why where it reads it)."""
    try:  # (its requires may name size constants, which are not known here: they are not read)
        axes = read_space("", source, check_requires=False).axes
        return {name: values[0] for name, values in axes.items() if values}
    except ParamsError:
        return {}


def read_space(kernel: str, source: str, dims: tuple[str, ...] = (), check_requires: bool = True) -> Space:
    """The space a kernel declares; an empty one (just the kernel) when it has no ``// tune:``.
    ``check_requires=False`` reads the ``// require:`` lines without checking their names."""
    declared = override_names(source) + template_names(source)  # a template's {{NAME}} tunes too
    axes: dict[str, tuple[Value, ...]] = {}
    requires: list[tuple[int, str]] = []
    for number, line in enumerate(source.splitlines(), 1):
        header = HEADER.match(line)
        if header and header.group(1) == "tune":
            name, values = _tune_line(line[header.end():].strip(), f"{kernel}:{number}", declared, axes)
            axes[name] = values
        elif header:
            requires.append((number, line[header.end():].strip()))
    for number, text in requires if check_requires else ():  # after every // tune: line
        _check_require(text, f"{kernel}:{number}", set(axes) | set(dims))
    return Space(kernel, source, axes, tuple(requires))


def _tune_line(text: str, where: str, declared: Sequence[str],
               axes: dict[str, tuple[Value, ...]]) -> tuple[str, tuple[Value, ...]]:
    """``NAME = values`` of one ``// tune:`` line, checked against the overrides."""
    name, eq, values = text.partition("=")
    name = name.strip()
    if not eq or not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise ParamsError(f"{where}: // tune: want NAME = value, value, ...")
    if name not in declared:
        raise ParamsError(f"{where}: // tune: {_brief(name)}: the kernel declares no `override {_brief(name)}`")
    if name in axes:
        raise ParamsError(f"{where}: // tune: {name} is tuned twice")
    return name, _values(values, where)


def _check_require(text: str, where: str, known: set[str]) -> None:
    """A require is read, measured and its constant parts evaluated before any search."""
    try:
        unknown = sorted(require_names(text) - known)
        probe(text)
    except RequireLimit as exc:
        raise ParamsError(f"{where}: // require: {_brief(text)}: {exc}") from None
    except SyntaxError as exc:
        msg = exc.msg or ""
        why = f": {msg}" if "not allowed" in msg or "may be called" in msg else ""
        raise ParamsError(f"{where}: // require: cannot read {_brief(text)!r}{why}") from None
    if unknown:
        raise ParamsError(f"{where}: // require: {_brief(', '.join(unknown))} is neither a "
                          "// tune: name nor a size constant")


def _values(text: str, where: str) -> tuple[Value, ...]:
    text = text.strip()
    span = re.fullmatch(r"(-?\d+)\s*\.\.\s*(-?\d+)", text)
    if span:
        lo, hi = (_integer(span.group(i), where) for i in (1, 2))
        if hi < lo or hi - lo + 1 > MAX_AXIS_VALUES:
            raise ParamsError(f"{where}: // tune: range {_brief(text)} is empty or longer than "
                              f"{MAX_AXIS_VALUES} values")
        return tuple(range(lo, hi + 1))
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > MAX_AXIS_VALUES:
        raise ParamsError(f"{where}: // tune: {len(parts)} values, over the limit of {MAX_AXIS_VALUES}")
    out = [_value(part, where) for part in parts]
    if not out or len(set(out)) != len(out):
        raise ParamsError(f"{where}: // tune: want distinct values")
    return tuple(out)


def _value(part: str, where: str) -> Value:
    """One value: an integer (decimal or hex, WGSL suffix allowed), a finite float, or a bool."""
    if part in ("true", "false"):
        return part == "true"
    if re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)[ui]?", part):
        return _integer(part.rstrip("ui"), where)
    _short(part, where)
    try:
        number = float(part.rstrip("fh"))
    except ValueError:
        raise ParamsError(f"{where}: // tune: {part!r} is not a number or true/false") from None
    if not math.isfinite(number):
        raise ParamsError(f"{where}: // tune: {part!r} is not a finite number")
    return number


def _integer(part: str, where: str) -> int:
    _short(part, where)
    try:
        number = int(part, 0)
    except ValueError:
        raise ParamsError(f"{where}: // tune: {part!r} is not a number or true/false") from None
    if abs(number) > MAX_MAGNITUDE:
        raise ParamsError(f"{where}: // tune: {part} is beyond 2^64, the limit of a tuned integer")
    return number


def _short(part: str, where: str) -> None:
    if len(part) > MAX_VALUE_CHARS:
        raise ParamsError(f"{where}: // tune: a value of {len(part)} characters ({_brief(part)}), "
                          f"over the limit of {MAX_VALUE_CHARS}")


def _brief(text: str) -> str:
    """A line from the kernel file, quoted back at most SHOWN characters long."""
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}... ({len(text)} characters)"


def show_value(v: Value) -> str:
    """A value as a // tune: line writes it (true/false, not Python's True/False)."""
    return ("true" if v else "false") if isinstance(v, bool) else str(v)

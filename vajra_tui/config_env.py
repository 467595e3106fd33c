"""The ``VAJRA_*`` environment and the theme, checked before a command runs.

pydantic-settings ignores a variable it does not know, so ``VAJRA_TIMING_REPS`` (one
underscore: the nested key is ``VAJRA_TIMING__REPS``) was silently no setting at all, and
the process-level switches read by the engine (``VAJRA_VERIFY``, ``VAJRA_BUILD_THREADS``)
took any text. A name that is a near miss of a known one is refused with the nearest; the
switches' values are checked here; an unknown theme names the nearest built-in one.
"""

from __future__ import annotations

import difflib
import os
from typing import Callable, Mapping

from pydantic import BaseModel

from vajra_tui.engine.errors import UsageError
from vajra_tui.safe_text import one_line

PREFIX = "VAJRA_"


def _positive_int(text: str) -> bool:
    return text.strip().isdigit() and int(text) >= 1


def _count(text: str) -> bool:
    return text.strip().isdigit()


def _positive_number(text: str) -> bool:
    try:
        return float(text) > 0
    except ValueError:
        return False


def _seconds(text: str) -> bool:
    try:
        return float(text) >= 0
    except ValueError:
        return False


FLAG_WORDS = frozenset({"1", "0", "true", "false", "yes", "no", "on", "off", ""})
FLAG_ON = frozenset({"1", "true", "yes", "on"})


def flag_set(name: str) -> bool:
    """Whether the on/off variable ``name`` is on: ``VAJRA_RECALIBRATE=0`` is off, not set."""
    return os.environ.get(name, "").strip().lower() in FLAG_ON


# Read by the engine outside the settings model; each with what its value must be (None: any text).
PROCESS_VARIABLES: dict[str, tuple[Callable[[str], bool] | None, str]] = {
    "VAJRA_ADAPTER": (None, ""),
    "VAJRA_CACHE_DIR": (None, ""),
    "VAJRA_CONFIG_DIR": (None, ""),
    "VAJRA_DATA_DIR": (None, ""),
    "VAJRA_NODE_DIR": (None, ""),
    "VAJRA_SYS_PATH": (None, ""),
    "VAJRA_RECALIBRATE": (lambda v: v.strip().lower() in FLAG_WORDS, "1 or 0 (also true/false, yes/no, on/off)"),
    "VAJRA_VERIFY": (lambda v: v.strip().lower() in ("gpu", "cpu", "auto", "check"), "gpu, cpu, auto or check"),
    "VAJRA_BUILD_THREADS": (_positive_int, "a whole number of threads, at least 1"),
    "VAJRA_STAGING_PROCESSES": (_count, "a whole number of processes (0: never)"),
    "VAJRA_WORKER_RECYCLE_MB": (_seconds, "a number of megabytes (0: never)"),
    "VAJRA_WORKER_IDLE_S": (_seconds, "a number of seconds (0: a finished run's worker ends at once)"),
}
NEAR = 0.85  # how close a name must be to a known one to be taken for its typo
MAX_JSON_DEPTH = 32  # a VAJRA_* JSON value (VAJRA_KEYS) nests no deeper; Python's own limit varies by build


def json_depth(text: str) -> int:
    """How deep ``[``/``{`` nest in a JSON text, outside strings: one pass, no recursion."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


class ConfigEnvError(UsageError):
    """A ``VAJRA_*`` variable or the theme that cannot be what the user meant."""


def settings_names(model: type[BaseModel], flat: Mapping[str, object]) -> set[str]:
    """Every variable the settings read: ``VAJRA_THEME``, ``VAJRA_TIMING__REPS``, the flat aliases."""
    names = set(flat)
    for field, info in model.model_fields.items():
        names.add(PREFIX + field.upper())
        sub = info.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            names.update(f"{PREFIX}{field.upper()}__{name.upper()}" for name in sub.model_fields)
    return names


def check_environment(environ: Mapping[str, str], known: set[str]) -> None:
    """Refuse a near miss of a known name, and a process switch's value it cannot take."""
    every = known | set(PROCESS_VARIABLES)
    for name, value in environ.items():
        if not name.startswith(PREFIX):
            continue
        if value.lstrip()[:1] in ("{", "[") and json_depth(value) > MAX_JSON_DEPTH:
            raise ConfigEnvError(f"{name}: its JSON value is nested too deeply (more than {MAX_JSON_DEPTH} levels)")
        if name in PROCESS_VARIABLES:
            valid, want = PROCESS_VARIABLES[name]
            if valid is not None and not valid(value):
                raise ConfigEnvError(f"{name}={one_line(repr(value), 40)}: want {want}")
        elif name not in every:
            close = difflib.get_close_matches(name, sorted(every), n=1, cutoff=NEAR)
            if close:
                raise ConfigEnvError(f"unknown environment variable {name} (did you mean {close[0]}?)")


def check_aliases(environ: Mapping[str, str], aliases: Mapping[str, tuple[str, str]]) -> None:
    """Refuse a short alias set beside its nested name to another value.

    The short names (``VAJRA_WARMUP``) are read by a settings source ahead of pydantic's own
    (``VAJRA_TIMING__WARMUP``, or the group as JSON: ``VAJRA_TIMING='{"warmup": 3}'``), so the
    alias used to win in silence; which of two values the user meant nobody can tell."""
    import json

    for short, (group, key) in aliases.items():
        value = environ.get(short)
        if not value:  # an empty alias is no setting (settings._FlatEnvOverrides skips it)
            continue
        nested = f"{PREFIX}{group.upper()}__{key.upper()}"
        others = {nested: environ[nested]} if nested in environ else {}
        whole = environ.get(f"{PREFIX}{group.upper()}", "")
        try:
            parsed = json.loads(whole) if whole.lstrip()[:1] == "{" else None
        except ValueError:  # said by load_settings, with the column
            parsed = None
        if isinstance(parsed, dict) and key in parsed:
            others[f"{PREFIX}{group.upper()}"] = str(parsed[key])
        for name, other in others.items():
            if other.strip() != value.strip():
                raise ConfigEnvError(
                    f"{short}={one_line(repr(value), 40)} and {name} set {group}.{key} to "
                    f"{one_line(repr(other), 40)}: unset one ({short} is the short alias of {nested})")


def check_theme(theme: str, default: str) -> None:
    """A theme Textual does not ship, refused with the nearest one (the TUI would fall back silently)."""
    if theme == default:
        return
    from textual.theme import BUILTIN_THEMES  # only when a theme is chosen: textual loads nothing else here

    if theme not in BUILTIN_THEMES:
        close = difflib.get_close_matches(theme, sorted(BUILTIN_THEMES), n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"one of {', '.join(sorted(BUILTIN_THEMES))}"
        raise ConfigEnvError(f"theme {one_line(repr(theme), 60)} is not a Textual theme ({hint})")


__all__ = ["PROCESS_VARIABLES", "check_aliases", "check_environment", "check_theme", "settings_names"]

"""Reading ``config.toml`` so that every mistake in it is one line naming the file, key and line.

pydantic-settings reads the file itself, but its errors are tracebacks of 20 to
60 lines that name neither the file nor the line, and it ignores keys it does
not know (a typo such as ``rep = 3`` silently did nothing). So the file is
read and checked here first: not a regular file (a FIFO, /dev/zero), over a megabyte,
unreadable, not UTF-8 (a leading byte order mark is dropped), malformed TOML, an unknown
key (with the nearest known one), or a value of the wrong type or range. Then
the environment is applied, and its mistakes name the variable that holds them.
"""

from __future__ import annotations

import codecs
import difflib
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, TypeAdapter, ValidationError

from vajra_tui.engine.errors import UsageError
from vajra_tui.safe_text import deeper_than, one_line

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI (a declared dependency there)
    import tomli as tomllib


# config.toml nests two levels ([timing] reps, [keys] name); deeper is a mistake or an attack,
# refused before validation and the messages' repr() walk it (a deep array raised RecursionError).
MAX_CONFIG_DEPTH = 8
# config.toml is a few hundred bytes; past a megabyte it is not a settings file (and a path
# pointed at a huge file must not be read into memory before anything is said).
MAX_CONFIG_BYTES = 1_000_000


class ConfigError(UsageError):
    """A mistake in the config file or a VAJRA_* variable; the message is one line."""


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"""^\s*((?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+)(?:\s*\.\s*(?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+))*)\s*=""")


def _parts(dotted: str) -> list[str]:
    return [p.strip().strip("\"'") for p in re.findall(r"""\"[^\"]*\"|'[^']*'|[^.]+""", dotted)]


def key_lines(text: str) -> dict[str, int]:
    """``"timing.reps" -> 7``: the line each key (and each table header) is written on."""
    lines: dict[str, int] = {}
    table: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            table = _parts(header.group(1))
            lines.setdefault(".".join(table), number)
            continue
        assign = _ASSIGN.match(line)
        if assign:
            lines.setdefault(".".join([*table, *_parts(assign.group(1))]), number)
    return lines


def _read_bytes(path: Path) -> bytes | None:
    """The file's bytes (None when there is none), at most :data:`MAX_CONFIG_BYTES` of them.

    Only a regular file is read: a config path that is (or links to) /dev/zero, a FIFO or a
    terminal made ``config show`` and every command hang. It is opened without blocking (a
    FIFO's open() waits for a writer otherwise) and asked what it is through the descriptor
    it was opened as, so nothing can be swapped in between the check and the read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ConfigError(f"{path}: cannot read the config file: it is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path}: cannot read the config file: not a regular file (a device, "
                              "FIFO or socket); point it at a TOML file")
        if info.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(_too_big(path))
        with os.fdopen(fd, "rb") as handle:
            fd = -1  # the file object closes it now
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror or exc}") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if len(raw) > MAX_CONFIG_BYTES:  # grown since fstat
        raise ConfigError(_too_big(path))
    return raw


def _too_big(path: Path) -> str:
    return (f"{path}: the config file is larger than {MAX_CONFIG_BYTES // 1_000_000} MB "
            "(a settings file is a few hundred bytes); not read")


def read_config(path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """The file's data and key lines; ``({}, {})`` when there is no file.

    A UTF-8 byte order mark (as Windows editors write) is dropped: TOML has none, but the
    file is what the user meant."""
    raw = _read_bytes(Path(path))
    if raw is None:
        return {}, {}
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: the config file is not UTF-8 text") from None
    data = _parse(path, text)
    if deeper_than(data, MAX_CONFIG_DEPTH):
        raise ConfigError(f"{path}: values nested deeper than {MAX_CONFIG_DEPTH} levels")
    return data, key_lines(text)


def _parse(path: Path, text: str) -> dict[str, Any]:
    """The TOML document; a parse error, a too-deep value or a too-long integer is one line."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = re.search(r"\(at line (\d+), column (\d+)\)", message)
        message = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", message)
        at = f":{where.group(1)}:{where.group(2)}" if where else ""
        raise ConfigError(f"{path}{at}: malformed TOML: {one_line(message, 200)}") from None
    except RecursionError:
        raise ConfigError(f"{path}: values nested deeper than {MAX_CONFIG_DEPTH} levels") from None
    except ValueError as exc:  # "Exceeds the limit (4300 digits) for integer string conversion"
        digits = re.search(r"value has (\d+) digits", str(exc))
        limit = re.search(r"limit \((\d+) digits\)", str(exc))
        what = (f"an integer of {digits.group(1)} digits (Python reads at most "
                f"{limit.group(1) if limit else 'fewer'})") if digits else one_line(exc, 120)
        raise ConfigError(f"{path}: {what}") from None


def unknown_keys(data: dict[str, Any], model: type[BaseModel], prefix: str = "") -> list[tuple[str, str]]:
    """``(dotted key, suggestion)`` for every key the settings model does not have."""
    out: list[tuple[str, str]] = []
    fields = model.model_fields
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        field = fields.get(key)
        if field is None:
            close = difflib.get_close_matches(key, list(fields), n=1)
            out.append((dotted, f"{prefix}{close[0]}" if close else ""))
            continue
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel) and isinstance(value, dict):
            out.extend(unknown_keys(value, sub, f"{dotted}."))
    return out


def _line_of(lines: dict[str, int], dotted: str) -> int | None:
    parts = dotted.split(".")
    while parts:  # the key itself, else its table's header
        line = lines.get(".".join(parts))
        if line is not None:
            return line
        parts.pop()
    return None


def _message(error: dict[str, Any]) -> str:
    msg = str(error.get("msg", "invalid value"))
    msg = msg.removeprefix("Value error, ")
    return msg[:1].lower() + msg[1:]


def check_file(path: Path, model: type[BaseModel]) -> dict[str, Any]:
    """Validate the file on its own (no environment): every problem names file, key and line."""
    data, lines = read_config(path)
    unknown = unknown_keys(data, model)
    if unknown:
        key, close = unknown[0]
        hint = f" (did you mean {close!r}?)" if close else ""
        line = _line_of(lines, key)
        raise ConfigError(f"{path}{f':{line}' if line else ''}: unknown key {key!r}{hint}")
    # Field by field (validating the whole BaseSettings reads the env), and strictly: TOML has
    # its own types, so `warmup = true` or `reps = "3"` is a value of the wrong type, not 1 or 3
    # (an int still fills a float field). The environment, whose values are all strings, is
    # validated afterwards as it always was: VAJRA_REPS=3 still reads as 3.
    for name, value in data.items():
        try:
            TypeAdapter(model.model_fields[name].annotation).validate_python(value, strict=True)
        except ValidationError as exc:
            error = exc.errors()[0]
            key = ".".join(str(p) for p in (name, *error["loc"]))
            _raise(path, lines, key, error)
    return data


def _raise(path: Path, lines: dict[str, int], key: str, error: dict[str, Any]) -> NoReturn:
    line = _line_of(lines, key)
    value = error.get("input")
    shown = f" = {one_line(repr(value), 60)}" if not isinstance(value, dict) else ""
    raise ConfigError(f"{path}{f':{line}' if line else ''}: {key}{shown}: {_message(error)}")


def env_error(exc: ValidationError, flat: dict[str, tuple[str, str]], prefix: str = "VAJRA_") -> ConfigError:
    """The environment variable behind the first validation error (the file was already fine)."""
    error = exc.errors()[0]
    loc = [str(p) for p in error["loc"]]
    key = ".".join(loc)
    names = [env for env, target in flat.items() if list(target) == loc[:2]]
    names.append(prefix + "__".join(loc).upper())
    if len(loc) > 1:  # VAJRA_TIMING='{"warmup": "a"}': the group's JSON, not an alias nobody set
        names.append(prefix + "__".join(loc[:-1]).upper())
    name = next((n for n in names if n in os.environ), names[0])
    value = os.environ.get(name, error.get("input"))
    return ConfigError(f"{name}={one_line(repr(value), 60)}: {key}: {_message(error)}")

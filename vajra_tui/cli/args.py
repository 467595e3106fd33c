"""Argument parsing that answers a mistake in one line, and the value checks the flags share.

argparse prints a five-line usage block for a typo and accepts ``--reps 0`` or
``--deadline nan``, which then fail deep inside a run (or never fire). Here a
bad flag is one line with the nearest real flag, and every number is checked
where it is parsed, with the same limits the config file has (settings.py).
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
import sys
from typing import Callable, NoReturn

from vajra_tui.engine.errors import UsageError

__all__ = ["UsageError", "OneLineParser"]


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors raise :class:`UsageError` instead of printing usage."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def,override]
        """Keeps the words this parser was given, so an error can name the flag that was misspelt."""
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def parse_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def,override]
        """Words nobody took are answered by the (sub)command that was given them, so
        ``replay --hedless`` points at ``vajra-tui replay --help`` and suggests its flags."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            self._owner(parsed, extras).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _owner(self, parsed: argparse.Namespace, extras: list[str]) -> "OneLineParser":
        """The deepest subcommand chosen whose own words hold every unrecognized one."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                sub = action.choices.get(getattr(parsed, action.dest, None) or "")
                if isinstance(sub, OneLineParser) and all(w in getattr(sub, "_given", ()) for w in extras):
                    return sub._owner(parsed, extras)
        return self

    def _odd_flags(self) -> list[str]:
        """The ``--flags`` given (without ``=value``) that no option of this parser starts with."""
        own = [o for action in self._actions for o in action.option_strings]
        words = [w.split("=", 1)[0] for w in getattr(self, "_given", []) if w.startswith("--") and len(w) > 2]
        return [w for w in dict.fromkeys(words) if not any(o.startswith(w) for o in own)]

    def _hinted(self, flags: list[str], form: str = "{flag}; did you mean {hint}?") -> str:
        """Each flag with its nearest option in ``form`` (the flag alone when none is near), joined."""
        own = [o for action in self._actions for o in action.option_strings]
        return ", ".join(form.format(flag=w, hint=h) if (h := _suggest(w, own)) else w for w in flags)

    def _misspelt(self) -> str:
        """' (unrecognized: --wrkload; did you mean --workload?)' for flags no option of ours starts with."""
        odd = self._odd_flags()
        return f" (unrecognized: {self._hinted(odd)})" if odd else ""

    def _value_of_odd_flag(self, word: str) -> bool:
        """Whether ``word`` came right after an unknown flag: ``--wrkload sgemm`` made argparse
        take ``sgemm`` for a command, and the typo, not the command, is the mistake."""
        given, odd = getattr(self, "_given", []), set(self._odd_flags())
        return any(w == word and i and given[i - 1] in odd for i, w in enumerate(given))

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        if message.startswith("the following arguments are required"):
            message += self._misspelt()  # "--wrkload sgemm": the typo, not only the missing flag
        unknown = re.match(r"unrecognized arguments: (.+)", message)
        if unknown:
            hints = [_suggest(word, self._every_option()) for word in unknown.group(1).split()]
            message += "".join(f" (did you mean {h}?)" for h in hints if h)
        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.+)\)", message)
        if choice and self._value_of_odd_flag(choice.group(1)):  # `vajra-tui --sise 64`: name --sise
            message = f"unrecognized arguments: {self._hinted(self._odd_flags(), '{flag} (did you mean {hint}?)')}"
        elif choice:  # Python 3.12.8+ lists the choices without quotes
            options = [o.strip().strip("'") for o in choice.group(2).split(",")]
            close = difflib.get_close_matches(choice.group(1), options, n=1)
            if close:
                message += f" (did you mean {close[0]!r}?)"
        raise UsageError(f"{message}; see '{self.prog} --help'")

    def _every_option(self) -> list[str]:
        """Every option string of this parser and of its subcommands."""
        options: list[str] = []
        for action in self._actions:
            options.extend(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    if isinstance(sub, OneLineParser):
                        options.extend(sub._every_option())
        return sorted(set(options))


def _suggest(word: str, options: list[str]) -> str:
    if not word.startswith("-"):
        return ""
    flag = word.split("=", 1)[0]
    close = difflib.get_close_matches(flag, [o for o in options if o.startswith("--")], n=1, cutoff=0.6)
    return close[0] if close else ""


def _number(text: str, kind: Callable[[str], float]) -> float:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not {'a whole number' if kind is int else 'a number'}") from None


def int_at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """A whole number of at least ``low`` and, when given, at most ``high`` (the limit named)."""
    def parse(text: str) -> int:
        value = int(_number(text, int))
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is less than {low}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"{value} is more than the limit of {high}")
        return value
    parse.__name__ = f"integer >= {low}" if high is None else f"integer from {low} to {high}"
    return parse


def positive_seconds(text: str) -> float:
    """A deadline: finite and above zero (0, nan and inf would never kill a hung kernel)."""
    value = _number(text, float)
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds greater than 0")
    return value


def speed(text: str) -> float:
    """Replay speed: 0 plays instantly, 1 at the recorded pace, 4 four times faster."""
    value = _number(text, float)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a speed of 0 (instant) or more")
    return value

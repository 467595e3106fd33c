"""What the run flags mean to the engine: timing overrides and adapter choices, for every command.

``bench``, ``tune`` and ``fleet`` share these, so a flag means the same on each of them.
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from typing import Iterator

from vajra_tui.cli.args import UsageError
from vajra_tui.engine.gpu.adapters import AdapterChoiceError
from vajra_tui.settings import MAX_REPS, MAX_WARMUP, Settings, TimingSettings


def timing_for(args: argparse.Namespace, settings: Settings) -> TimingSettings:
    """The config file's timing settings with the command line's flags over them."""
    t = settings.timing.model_copy()
    for name, field in (("warmup", "warmup"), ("reps", "reps"), ("deadline", "deadline_s")):
        value = getattr(args, name, None)
        if value is not None:
            if value < (1 if name == "reps" else 0):
                raise UsageError(f"--{name} must be {'at least 1' if name == 'reps' else 'non-negative'}")
            high = {"reps": MAX_REPS, "warmup": MAX_WARMUP}.get(name)
            if high is not None and value > high:
                raise UsageError(f"--{name} must be at most {high}")
            setattr(t, field, value)
    if getattr(args, "timing", None):
        t.method = args.timing
    if getattr(args, "cache", None):
        t.cache = args.cache
    return t


@contextmanager
def adapter_flag(args: argparse.Namespace) -> Iterator[None]:
    """An adapter choice that names none (or several) is said as the flag that made it."""
    try:
        yield
    except AdapterChoiceError as exc:
        flag = "--gpus" if getattr(args, "gpus", None) else "--adapter"
        raise UsageError(str(exc) if str(exc).startswith("--") else f"{flag}: {exc}") from None


__all__ = ["adapter_flag", "timing_for"]

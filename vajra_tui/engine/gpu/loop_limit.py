"""Mesa's llvmpipe ends an invocation's loops after 65,535 steps, silently.

llvmpipe (lavapipe's compiler, the adapter tests and CI run on) guards every shader against
an endless loop with one counter per invocation, shared by all of its loops
(``LP_MAX_TGSI_LOOP_ITERATIONS`` in Mesa's gallivm). Once it runs out, each loop exits as if
its condition were false, so a kernel that loops longer stores nothing, or a partial sum, and
fails verification with no error from the driver. A GPU has no such limit. Loops with a
small fixed trip count are unrolled first and do not count, which is how the built-in
baselines reach long rows there (each walks 16 or 32 elements a step).

This module only names the limit where it may be the reason: a failure on llvmpipe is told
once per run with the note below, and a rejected baseline carries it in its one line.
"""

from __future__ import annotations

from vajra_tui.engine.events import DeviceInfo

LLVMPIPE_LOOP_STEPS = 65_535
NOTE = (f"llvmpipe (Mesa's software Vulkan) silently ends each invocation's loops after "
        f"{LLVMPIPE_LOOP_STEPS:,} steps in all: a kernel that loops longer fails here and may pass "
        "on a GPU; a fixed inner loop like `for (u < 16u)` is unrolled, not counted")
# the rule as a model is told it, in its prompt and with its rejected kernels
MODEL_RULE = (f"llvmpipe ends each invocation's loops after {LLVMPIPE_LOOP_STEPS:,} steps in all, "
              "silently (the kernel then fails verification): keep every invocation's loop steps "
              "below that; a fixed inner loop such as `for (var u = 0u; u < 16u; u = u + 1u)` is "
              "unrolled and does not count.")


def is_llvmpipe(name: str, driver: str = "") -> bool:
    """Whether an adapter so named (or with this driver) is llvmpipe."""
    return "llvmpipe" in f"{name} {driver}".lower()


def applies_to(device: DeviceInfo | None) -> bool:
    """Whether ``device`` is llvmpipe, the one adapter known to cut loops short."""
    return device is not None and is_llvmpipe(device.name, device.driver)


def note_for(device: DeviceInfo | None) -> str:
    """:data:`NOTE` on llvmpipe; "" elsewhere."""
    return NOTE if applies_to(device) else ""


def told_with(line: str, device: DeviceInfo | None) -> str:
    """``line``, with the note after it on llvmpipe: a rejected baseline's one line."""
    return f"{line}; {NOTE}" if applies_to(device) else line

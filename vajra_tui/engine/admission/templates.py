"""A template kernel filled by Vajra: ``{{NAME}}`` and ``#define``/``#ifdef``, as projects write them.

Values come from the size, the workload's ``defines`` and the candidate's tuning
parameters, so a templated knob is searched like an ``override``; a knob no one gives
takes the first value of its ``// tune:`` line. What is stitched, compiled, verified and
exported is the expanded text, whose every line keeps the template's line number.
"""

from __future__ import annotations

from typing import Any

from vajra_tui.engine.sources.space import first_values
from vajra_tui.engine.wgsl.template import TemplateError, expand, is_template, placeholders
from vajra_tui.engine.workloads.base import Size, Workload


def fill(workload: Workload, size: Size, body: str,
         constants: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(expanded body, the constants left for its ``override``s, the template values used).

    A constant that sets an ``override`` of the template stays a pipeline constant; any
    other fills the template. Raises TemplateError (with its line and column) when the
    template cannot be expanded.
    """
    if not is_template(body) and workload.defines is None:
        return body, constants, {}
    overrides = _overrides_of(body)
    pipeline = {k: v for k, v in constants.items() if k in overrides}
    defines = workload.template_values(size)
    # the workload's -D values, save a name this kernel writes as {{NAME}}: there it is a template
    # value only, and the kernel may name a local after it (burn: `let wg_x = {{ wg_x }}u;`)
    written = set(placeholders(body))
    macros = {k: v for k, v in defines.items() if k not in size and k not in written}
    values: dict[str, Any] = {**first_values(body), **defines}
    values.update({k: v for k, v in constants.items() if k not in overrides})
    expanded = expand(body, {k: v for k, v in values.items() if k not in macros}, macros)
    used = {k: values[k] for k in written if k in values}
    used.update({k: v for k, v in constants.items() if k not in overrides})
    return expanded, pipeline, used


def _overrides_of(body: str) -> set[str]:
    """The ``override``s a template declares, read with every placeholder set to 1 (enough
    to tell a tuned ``override`` from a tuned template value)."""
    from vajra_tui.engine.wgsl.tokens import override_names

    try:
        return set(override_names(expand(body, {n: 1 for n in placeholders(body)})))
    except (TemplateError, ValueError, ArithmeticError):
        return set()

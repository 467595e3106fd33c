"""The adapter the picker shows, asked in a subprocess off the UI thread.

Loading a driver is slow and drivers print to stderr, which would tear the UI, so the
question goes to a child process. A driver can also hang there: the picker asks from a
daemon thread, and a probe still running when the app quits is killed at exit, so that q
never waits for it.
"""

from __future__ import annotations

import atexit
import subprocess

from vajra_tui.engine.child import child_env, code_command
from vajra_tui.engine.events import DeviceInfo

_PROBE = ("import json, sys; from vajra_tui.engine.gpu.runtime import device_info; "
          "from vajra_tui.engine.gpu.adapters import pick; i, a = pick(sys.argv[1] or None); "
          "print(json.dumps(device_info(a, index=i).model_dump()))")


PROBE_TIMEOUT_S = 120
_PROBES: set[subprocess.Popen] = set()  # in flight; killed at exit, since q never waits for one


def probe_adapter(prefer: str | None = None) -> DeviceInfo:
    """The adapter the GPU worker will pick; a one-line RuntimeError when there is none, or
    when the driver does not answer in time."""
    proc = subprocess.Popen(code_command(_PROBE, prefer or ""), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL, env=child_env())
    _PROBES.add(proc)
    try:
        out, err = proc.communicate(timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise RuntimeError(f"the adapter did not answer in {PROBE_TIMEOUT_S} s (a driver that hangs)") from None
    finally:
        _PROBES.discard(proc)
    lines = out.strip().splitlines()
    if proc.returncode != 0 or not lines:
        errors = [line for line in err.strip().splitlines() if line.strip()]
        raise RuntimeError(errors[-1] if errors else "no WebGPU adapter found")
    return DeviceInfo.model_validate_json(lines[-1])


@atexit.register
def _end_probes() -> None:
    """A probe the app quit beside (its thread is a daemon's, so nothing waits for it)."""
    for proc in list(_PROBES):
        proc.kill()

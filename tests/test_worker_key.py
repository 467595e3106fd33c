"""Which parked GPU worker a new run may take (gpu/idle.py's key), as a suite that scripts Vajra sees it."""

from __future__ import annotations

from vajra_tui.engine.gpu.idle import worker_key


def test_a_test_runners_per_test_marker_does_not_stop_reuse_but_a_setting_does():
    """pytest names every test phase in PYTEST_CURRENT_TEST: with it in the key, no test of a
    suite ever took the worker the test before it parked. Any other variable still counts."""
    env = {"PATH": "/usr/bin", "VAJRA_VERIFY": "cpu", "PYTEST_CURRENT_TEST": "t.py::a (call)"}
    key = worker_key(None, 0, None, env)
    assert worker_key(None, 0, None, {**env, "PYTEST_CURRENT_TEST": "t.py::b (setup)"}) == key
    assert worker_key(None, 0, None, {k: v for k, v in env.items() if k != "PYTEST_CURRENT_TEST"}) == key
    assert worker_key(None, 0, None, {**env, "VAJRA_VERIFY": "gpu"}) != key
    assert worker_key(None, 0, None, {**env, "LP_NUM_THREADS": "1"}) != key
    assert worker_key("nvidia", 0, None, env) != key

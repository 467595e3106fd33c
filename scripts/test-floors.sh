#!/usr/bin/env bash
# The dependency floors of pyproject.toml, tested: installs exactly the lowest declared
# versions into a scratch venv (Python: $PYTHON, default python3) and runs the CLI, config,
# pilot, replay and model-client tests against them. The snapshot tests are left out:
# Textual's rendering differs slightly between versions, and the SVGs are recorded with the
# current one.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${FLOORS_VENV:-${TMPDIR:-/tmp}/vajra-floors}
rm -rf "$VENV"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
"$VENV/bin/python" -m pip install -q \
  "textual==6.2.0" "rich==13.7.0" "wgpu==0.31.0" "numpy==1.26.0" "openai==1.55.3" \
  "tavily-python==0.7.21" "plotext==5.2.8" "textual-plotext==1.0.1" "pydantic==2.7.0" \
  "pydantic-settings==2.4.0" "platformdirs==4.0.0" "nvidia-ml-py==12.535.77" "shtab==1.7.0" \
  "optuna==3.1.0" \
  "tomli==2.0.1; python_version < '3.11'" \
  "pytest>=8" "pytest-asyncio>=0.24" "pytest-timeout>=2.3"
"$VENV/bin/python" -m pip list 2>/dev/null | grep -i -E '^(textual|rich|wgpu|numpy|openai|pydantic|pydantic.settings|platformdirs|shtab|httpx|optuna) '
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
# test_llm.py and test_llm_outcomes.py drive the real openai client against a loopback server.
PYTHONPATH="$PWD" exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider -p no:textual-snapshot \
  tests/test_cli.py tests/test_usage.py tests/test_cli_output.py tests/test_app.py tests/test_replay_ui.py \
  tests/test_navigation.py tests/test_run_controls.py tests/test_params.py tests/test_llm.py tests/test_llm_outcomes.py \
  "tests/test_user_workloads.py::test_params_search_past_the_budget_uses_optuna_through_the_api" \
  "$@"

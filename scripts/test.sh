#!/usr/bin/env bash
# Sets everything up, then runs the whole test suite on the real adapter (lavapipe without a GPU).
# Two pytest-xdist workers, a module each at a time (module-scoped GPU workers, browsers and Ray
# clusters are started once): the suite waits on subprocesses and deadlines as much as it computes,
# so two workers beat one even on 2 cores. Tests marked `serial` still run alone (tests/conftest.py).
# VAJRA_TEST_WORKERS=0 runs it in this one process.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
exec .venv/bin/python -m pytest -q -p no:cacheprovider -n "${VAJRA_TEST_WORKERS:-2}" --dist loadfile \
  --no-loadscope-reorder "$@"

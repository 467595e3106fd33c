#!/usr/bin/env bash
# Sets everything up, then runs the whole test suite on the real adapter (lavapipe without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"

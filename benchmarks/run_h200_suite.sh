#!/usr/bin/env bash
# The README's test command on an H200 (issue #15), in one device call: every wheel
# (the project's, numpy, Ray's stripped cp312 wheel) comes packed in .wheels/all.tar.xz
# (wheels re-zipped without compression, then xz: 47 MB, inside the 64 MiB carry).
# With two GPUs, the suite runs on adapter 1 and GPU 0 stays free for a benchmark
# given as arguments (run with VAJRA_ADAPTER=0). Results land in $OUT/suite.tgz.
set -u
OUT=${OUT:-/tmp/out}
. .gl/env.sh
export PYTHONPATH= XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/wheels && tar -xJf .wheels/all.tar.xz -C /tmp/wheels
RES=$OUT/suite && mkdir -p "$RES"
SUITE_ADAPTER=$(( $(nvidia-smi -L | wc -l) > 1 ? 1 : 0 ))
(export VAJRA_ADAPTER=$SUITE_ADAPTER PIP_NO_INDEX=1 PIP_FIND_LINKS=/tmp/wheels/w
 timeout 570 bash scripts/test.sh -p no:randomly > "$RES/tests.log" 2>&1; echo "rc=$?" >> "$RES/tests.log") &
if [ $# -gt 0 ]; then
  python3 -m pip install -q --no-index --find-links /tmp/wheels/w -e . > /dev/null 2>&1
  (export VAJRA_ADAPTER=0; timeout 560 "$@" > "$RES/bench.log" 2>&1)
fi
wait
tar czf "$OUT/suite.tgz" -C "$OUT" suite && rm -rf "$RES"

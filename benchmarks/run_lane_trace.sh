#!/usr/bin/env bash
# Traced tunes (lane_trace.py) on an H200 host: all GPUs, then one, with the same arguments.
#   RUNS="all one" bash benchmarks/run_lane_trace.sh [tune arguments...]   -> $OUT/trace.tgz
set -u
OUT=${OUT:-/tmp/out}
. .gl/env.sh
export PYTHONPATH= XDG_RUNTIME_DIR=/tmp __GL_SHADER_DISK_CACHE=0 MESA_SHADER_CACHE_DISABLE=true
mkdir -p /tmp/wheels && tar -xJf .wheels/all.tar.xz -C /tmp/wheels
python3 -m pip install -q --no-index --find-links /tmp/wheels/w -e . > /dev/null 2>&1
RES=$OUT/trace && mkdir -p "$RES"
ARGS=(tune -w sgemm --size large --source library --no-cache --json -q "$@")
python3 -m vajra_tui.cli.main devices --probe --json > "$RES/devices.json" 2> "$RES/devices.err"
python3 -m vajra_tui.cli.main bench -w sgemm --size large --reps 1 --warmup 1 -q --json --no-cache > /dev/null 2>&1
for run in ${RUNS:-all one}; do
  extra=(--gpus all); [ "$run" = one ] && extra=(--adapter 0)
  /usr/bin/time -v python3 benchmarks/lane_trace.py --out "$RES/$run.json" -- "${ARGS[@]}" "${extra[@]}" \
    > "$RES/$run.stdout" 2> "$RES/$run.err"
done
tar czf "$OUT/trace.tgz" -C "$OUT" trace && rm -rf "$RES"

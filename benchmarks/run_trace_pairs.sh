#!/usr/bin/env bash
# Traced one-GPU tunes (lane_trace.py), a change against the commit before it, in one device call.
#   BEFORE=.before/before.tar.xz bash benchmarks/run_trace_pairs.sh   -> $OUT/pairs.tgz
# BEFORE: `git archive REV vajra_tui benchmarks pyproject.toml | xz`, carried in an ignored folder;
# its runs import that tree (PYTHONPATH) instead of the checkout. Runs alternate before/after and
# stop before the call's 600 s run out. Each line of RUNS: name|environment|tune arguments;
# TUNE: the arguments every run shares (its words 2-5 also warm the driver in a `bench` first).
set -u
OUT=${OUT:-/tmp/out}
START=$(date +%s)
. .gl/env.sh
export PYTHONPATH= XDG_RUNTIME_DIR=/tmp __GL_SHADER_DISK_CACHE=0 MESA_SHADER_CACHE_DISABLE=true
mkdir -p /tmp/wheels && tar -xJf .wheels/all.tar.xz -C /tmp/wheels
python3 -m pip install -q --no-index --find-links /tmp/wheels/w -e . > /dev/null 2>&1
mkdir -p /tmp/before && tar -xJf "${BEFORE:-.before/before.tar.xz}" -C /tmp/before
RES=$OUT/pairs && mkdir -p "$RES"
read -r -a BASE <<< "${TUNE:-tune -w sgemm --size large --source library --no-cache --json -q --adapter 0}"
python3 -m vajra_tui.cli.main bench "${BASE[@]:1:4}" --reps 1 --warmup 1 -q --json --no-cache > /dev/null 2>&1
RUNS=${RUNS:-"every_before|BEFORE=1|--generations 3 --budget 24 --shootout every
every_after||--generations 3 --budget 24 --shootout every
last96_threads8||--generations 2 --budget 96 --shootout last
last96_threads16|VAJRA_BUILD_THREADS=16|--generations 2 --budget 96 --shootout last"}
while IFS='|' read -r name envs args; do
  [ -n "$name" ] || continue
  left=$(( 570 - ($(date +%s) - START) ))
  [ "$left" -gt 100 ] || { echo "skipped $name: ${left}s left" >> "$RES/skipped.txt"; continue; }
  tree=$PWD; path=
  case "$envs" in *BEFORE=1*) tree=/tmp/before; path=/tmp/before ;; esac
  # shellcheck disable=SC2086
  (cd "$tree" && env PYTHONPATH="$path" ${envs/BEFORE=1/} timeout "$left" \
    python3 benchmarks/lane_trace.py --out "$RES/$name.json" -- "${BASE[@]}" $args \
    > "$RES/$name.stdout" 2> "$RES/$name.err")
done <<< "$RUNS"
tar czf "$OUT/pairs.tgz" -C "$OUT" pairs && rm -rf "$RES"

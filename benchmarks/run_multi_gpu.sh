#!/usr/bin/env bash
# multi_gpu.py on a 2xH200 host in one device call, for each --shootout mode given
# (default: last, then every), each pair cut off before the call's 600 s run out.
#   bash benchmarks/run_multi_gpu.sh [--budget N] [--generations G]   -> $OUT/multi_gpu.tgz
# A pair too long for one call goes in two: `--run all` first, then, with that call's
# <mode>.json carried back (MERGE=path/to/it), `--run one`: multi_gpu.py merges the halves.
set -u
OUT=${OUT:-/tmp/out}
START=$(date +%s)
. .gl/env.sh
export PYTHONPATH= XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/wheels && tar -xJf .wheels/all.tar.xz -C /tmp/wheels
python3 -m pip install -q --no-index --find-links /tmp/wheels/w -e . > /dev/null 2>&1
RES=$OUT/multi_gpu && mkdir -p "$RES"
for mode in ${MODES:-last every}; do
  left=$(( 575 - ($(date +%s) - START) ))
  [ "$left" -gt 60 ] || break
  if [ -n "${MERGE:-}" ]; then cp "$MERGE" "$RES/$mode.json"; fi
  timeout "$left" python3 benchmarks/multi_gpu.py --shootout "$mode" "$@" --out "$RES/$mode.json" \
    > "$RES/$mode.log" 2>&1
done
tar czf "$OUT/multi_gpu.tgz" -C "$OUT" multi_gpu && rm -rf "$RES"

#!/usr/bin/env bash
# Make the shipped recordings (vajra_tui/recordings/) again on the current schema.
#
#   scripts/make_recordings.sh lavapipe   # here, on Mesa's lavapipe: lavapipe-sgemm.jsonl
#   scripts/make_recordings.sh h200       # on the H200 host: nvidia-h200-<workload>.jsonl
#
# Each is a library tune at seed size with the default timing (5 warm-ups, 9 timed
# rounds, seeds 1 and 2) and a shoot-out after every generation, so replay shows the
# report card a tune shows today. The calibration is measured fresh (an empty cache
# directory), so the recording carries the roofline as it was measured when it was made.
# A recording is written to a temporary name and moved into place only when the run ended
# well: a failed run leaves the shipped file as it was.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=$ROOT/vajra_tui/recordings
VAJRA=${VAJRA:-$ROOT/.venv/bin/vajra-tui}  # a command, maybe with arguments ("python3 -m vajra_tui")
[ -x "$VAJRA" ] || [ "$VAJRA" != "$ROOT/.venv/bin/vajra-tui" ] || VAJRA=vajra-tui
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
export VAJRA_CACHE_DIR=$SCRATCH/cache VAJRA_DATA_DIR=$SCRATCH/data VAJRA_CONFIG_DIR=$SCRATCH/config

record() {  # record NAME WORKLOAD GENERATIONS: one tune into $DEST/NAME.jsonl
  local name=$1 workload=$2 generations=$3
  $VAJRA tune -w "$workload" --source library --size seed --generations "$generations" --budget 6 \
    --warmup 5 --reps 9 --no-cache -q --record "$SCRATCH/$name.jsonl" > "$SCRATCH/$name.txt"
  mv "$SCRATCH/$name.jsonl" "$DEST/$name.jsonl"
  echo "recorded $DEST/$name.jsonl ($(wc -c < "$DEST/$name.jsonl") bytes)"
}

case "${1:-}" in
  lavapipe)  # generation 1 (A, B, C) and two evolved ones (D, E), as the first recording had
    record lavapipe-sgemm sgemm 2 ;;
  h200)  # the same tunes benchmarks/roofline.py --sizes seed --record-dir ran (sgemm one more)
    record nvidia-h200-sgemm sgemm 3
    for w in softmax conv1d sobel layernorm gemv attention fft fft2; do record "nvidia-h200-$w" "$w" 2; done ;;
  *) echo "usage: $0 lavapipe|h200" >&2; exit 2 ;;
esac

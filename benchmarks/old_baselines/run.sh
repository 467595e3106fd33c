#!/usr/bin/env bash
# The softmax, layernorm and attention baselines as they were before 2026-12-07 (one element a
# step), each given as --kernel beside the built-in baseline (16 or 32 a step) in one bench per
# size. On a device machine, carry [.gl, .whl]; results: results/h100-old-new-baselines-*.log.
set -u
. .gl/env.sh
export VAJRA_ADAPTER=0
nvidia-smi --query-gpu=name --format=csv,noheader
for spec in "softmax large" "softmax seed" "layernorm large" "layernorm seed" "attention large" "attention B=1,H=16,S=4096,D=64,MASK=2" "attention seed" "attention B=1,H=4,S=1024,D=128,MASK=1"; do
  set -- $spec
  echo "== $spec"
  old=benchmarks/old_baselines/$1.wgsl
  [ "$1" = softmax ] && old=tests/kernels/softmax_one_column_a_step.wgsl
  timeout 120 python3 -m vajra_tui bench -w $1 --size "$2" --kernel "$old" 2>&1 | grep -E "^result|^vajra|^verify"
done

#!/usr/bin/env bash
# Issue #27 on one H200 (kind nvidia-h200), carry [.gl, .whl]: attention (full and causal),
# fft and fft2 at their large sizes beside torch in one process (TF32 off), then a seed-size
# tune of all nine built-ins (target: under 40 s); "sweep": explicit configurations of
# attention (full, causal), fft and fft2 beside torch; "final": attention configurations,
# then "new" and "seed"; "blk": the fft and fft2 sweep, then their rows; "probe": attention's qg sweep,
# fft2 in three passes (benchmarks/fft2_three_probe.py), the attention rows; "rows5": the
# probe and the attention rows again; "r6": attention's round 6, then its rows; "conv": conv1d's streamed tiles and fft's round 3, then
# conv1d's row; "last": fft with the last pass's own count, then its row; "r7": causal attention
# heaviest first across heads and fft's last pass of its own (sweeps only); "r7rows": their rows (WL= picks others);
# "r8": split-K attention (sweeps only); "r8row": the library's tune at two heads of 8192;
# "r9": attention's registers (sweeps) and fft's and fft2's seed rows; "r9rows": fft's and fft2's large rows;
# "r10": conv1d with two windows in flight (ROW=1: then conv1d's row);
# "chunk": fft's passes chunk by chunk over the batch (benchmarks/fft_chunk_probe.py), ROWS=1 then
# the fft and fft2 rows; "r11": attention with the next block prefetched (sweeps), then "chunk";
# "r12": attention around round 11's winner (sweeps); "r13": conv1d's taps in a uniform
# (benchmarks/conv1d_taps_probe.py) and fft2 columns first (benchmarks/fft2_order_probe.py), TAPS_ONLY=1
# the first alone; "seedrows": fft's and fft2's seed rows; "clock": the conv1d probe with the GPU idle
# 5 s before each batch (the worker's clock bring-up);
# "r14h200": on an H200 only, conv1d's row, "seedrows" and the seed tune with the bring-up on;
# "r14conv": conv1d's W as a uniform (sweep, then the row);
# "r17rows": on an H200 only, fft2's and conv1d's rows;
# "ablate": fft's and fft2's passes with their butterflies, exchanges or both taken out (fft_pass_ablation.py);
# "r18": "ablate", then on an H200 fft2's and conv1d's rows ("r17rows");
# "r19": fft's and fft2's sweep (round 18 streamed groups, since removed; now the best configurations), then on an H200 "r17rows";
# "r20": fft2 columns first, folded at the end (fft2_order_probe.py), then on an H200 "r17rows", on another card the probe again;
# "r21": on an H200 "r17rows", then on any card attention's round 20 (128-lane workgroups and their memory; sweeps);
# "r22": on any card, the five #27 rows beside torch ("new", then conv1d's row), the card named first;
# "r23": on an H200 only, "r22" (elsewhere it ends at once);
# "r15h200": r15, then on an H200 "seedrows" and the seed tune;
# "r15": fft2 folded, the sweep and the library's row (and conv1d's row on an H200);
# "r14": "clock", then the seed tune with the bring-up off and on, then "seedrows" on an H200;
# "seed" with TIMELINE=1 keeps each workload's events (tune_all.py --timeline). Results land in $OUT.
set -u
OUT=${OUT:-/tmp/out}
. .gl/env.sh
export VAJRA_ADAPTER=0
part=${1:-all}
if [ "$part" = new ] || [ "$part" = all ]; then
  timeout 280 python3 benchmarks/roofline.py --sizes large --workloads "attention,attention@MASK=2,fft,fft2" \
    --generations 2 --budget 6 --limits adapter --out "$OUT/new" > "$OUT/new.log" 2>&1
  echo "rc=$?" >> "$OUT/new.log"
fi
if [ "$part" = seed ] || [ "$part" = all ]; then
  for pass in 1 2; do
    timeout 75 python3 benchmarks/tune_all.py --size seed --out "$OUT/tune-all-seed-$pass.json" \
      ${TIMELINE:+--timeline "$OUT/timeline-$pass"} >> "$OUT/tune_all.log" 2>&1
  done
fi
if [ "$part" = seed-idle ]; then  # the nine-workload seed tune: idle workers kept (driver cache cold, then warm) and a fresh worker per tune (warm)
  for pass in idle-cold fresh-warm idle-warm; do
    idle_s=30; [ "$pass" = fresh-warm ] && idle_s=0
    VAJRA_WORKER_IDLE_S=$idle_s timeout 70 python3 benchmarks/tune_all.py --size seed --out "$OUT/tune-all-seed-$pass.json" >> "$OUT/tune_all.log" 2>&1
    echo "rc=$? ($pass)" >> "$OUT/tune_all.log"
  done
fi
if [ "$part" = old ]; then
  timeout 540 python3 benchmarks/roofline.py --sizes large --workloads "sgemm,softmax,conv1d,sobel,layernorm,gemv" \
    --generations 2 --budget 6 --limits adapter --no-cold --out "$OUT/old" > "$OUT/old.log" 2>&1
  echo "rc=$?" >> "$OUT/old.log"
fi
if [ "$part" = sweep ]; then  # explicit configurations (benchmarks/sweep_configs.py) beside torch
  for spec in "B=1,H=16,S=4096,D=64,MASK=1" "B=1,H=16,S=4096,D=64,MASK=2"; do
    timeout 185 python3 benchmarks/sweep.py --workloads attention --sizes "$spec" --budget-s 100 \
      --out "$OUT/sweep-attention-$spec.json" >> "$OUT/sweep.log" 2>&1
    echo "rc=$?" >> "$OUT/sweep.log"
  done
  timeout 170 python3 benchmarks/sweep.py --workloads fft,fft2 --sizes large --budget-s 60 \
    --out "$OUT/sweep-fft.json" >> "$OUT/sweep.log" 2>&1
  echo "rc=$?" >> "$OUT/sweep.log"
fi
if [ "$part" = blk ]; then  # fft and fft2 with the scratch blocked by columns (blk=1): the sweep, then the rows
  timeout 170 python3 benchmarks/sweep.py --workloads fft,fft2 --sizes large --budget-s 60 \
    --out "$OUT/sweep4-fft.json" >> "$OUT/sweep.log" 2>&1
  echo "rc=$?" >> "$OUT/sweep.log"
  timeout 240 python3 benchmarks/roofline.py --sizes large --workloads "fft,fft2" \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
  echo "rc=$?" >> "$OUT/rows.log"
fi
if [ "$part" = probe ]; then  # attention with Q read from the storage buffer (qg), fft2 in three passes, the attention rows
  for spec in "B=1,H=16,S=4096,D=64,MASK=1" "B=1,H=16,S=4096,D=64,MASK=2"; do
    timeout 150 python3 benchmarks/sweep.py --workloads attention --sizes "$spec" --budget-s 70 \
      --out "$OUT/sweep-${TAG:-r4}-attention-MASK${spec##*=}.json" >> "$OUT/sweep.log" 2>&1
    echo "rc=$?" >> "$OUT/sweep.log"
  done
  timeout 120 python3 benchmarks/fft2_three_probe.py --size large --out "$OUT/fft2-three.json" > "$OUT/probe.log" 2>&1
  echo "rc=$?" >> "$OUT/probe.log"
  timeout 200 python3 benchmarks/roofline.py --sizes large --workloads "attention,attention@MASK=2" \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
  echo "rc=$?" >> "$OUT/rows.log"
fi
if [ "$part" = rows5 ]; then  # fft2 in three passes, then the attention rows with gl=2 first
  timeout 120 python3 benchmarks/fft2_three_probe.py --size large --out "$OUT/fft2-three.json" > "$OUT/probe.log" 2>&1
  echo "rc=$?" >> "$OUT/probe.log"
  timeout 200 python3 benchmarks/roofline.py --sizes large --workloads "attention,attention@MASK=2" \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
  echo "rc=$?" >> "$OUT/rows.log"
fi
if [ "$part" = r6 ]; then  # attention round 6 (around gl=2's winners), then the attention rows
  for spec in "B=1,H=16,S=4096,D=64,MASK=1" "B=1,H=16,S=4096,D=64,MASK=2"; do
    timeout 100 python3 benchmarks/sweep.py --workloads attention --sizes "$spec" --budget-s 40 \
      --out "$OUT/sweep-r6-attention-MASK${spec##*=}.json" >> "$OUT/sweep.log" 2>&1
    echo "rc=$?" >> "$OUT/sweep.log"
  done
  timeout 200 python3 benchmarks/roofline.py --sizes large --workloads "attention,attention@MASK=2" \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
  echo "rc=$?" >> "$OUT/rows.log"
fi
if [ "$part" = conv ]; then  # conv1d streaming its tiles (seq) and fft round 3 beside torch, then conv1d's row
  timeout 200 python3 benchmarks/sweep.py --workloads "conv1d${SWEEP_FFT-,fft}" --sizes large --budget-s ${SWEEP_S:-90} \
    --out "$OUT/sweep-conv-fft.json" >> "$OUT/sweep.log" 2>&1
  echo "rc=$?" >> "$OUT/sweep.log"
  timeout 200 python3 benchmarks/roofline.py --sizes large --workloads "conv1d${ROWS:+,$ROWS}" \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
  echo "rc=$?" >> "$OUT/rows.log"
fi
if [ "$part" = last ]; then  # fft with the last pass's own count (sweep beside cuFFT), then the fft row
  timeout 150 python3 benchmarks/sweep.py --workloads fft --sizes large --budget-s 60 \
    --out "$OUT/sweep-fft-last.json" >> "$OUT/sweep.log" 2>&1
  echo "rc=$?" >> "$OUT/sweep.log"
  timeout 150 python3 benchmarks/roofline.py --sizes large --workloads fft \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
  echo "rc=$?" >> "$OUT/rows.log"
fi
if [ "$part" = r7 ]; then  # round 7: causal attention ordered across heads, fft's passes with their own buffers
  timeout 130 python3 benchmarks/sweep.py --workloads attention --sizes "B=1,H=16,S=4096,D=64,MASK=2" --budget-s 70 \
    --out "$OUT/sweep-r7-attention-MASK2.json" >> "$OUT/sweep.log" 2>&1
  echo "rc=$?" >> "$OUT/sweep.log"
  timeout 120 python3 benchmarks/sweep.py --workloads fft --sizes large --budget-s 55 \
    --out "$OUT/sweep-r7-fft.json" >> "$OUT/sweep.log" 2>&1
  echo "rc=$?" >> "$OUT/sweep.log"
fi
if [ "$part" = r8 ]; then  # round 8: split-K attention (C's best split 1-4 ways at large, 1-16 at two heads of 8192)
  for spec in "B=1,H=16,S=4096,D=64,MASK=1:3" "B=1,H=16,S=4096,D=64,MASK=2:3" "B=1,H=2,S=8192,D=64,MASK=1:5"; do
    timeout 120 python3 benchmarks/sweep.py --workloads attention --sizes "${spec%:*}" --limit "${spec##*:}" \
      --budget-s 50 --out "$OUT/sweep-r8-attention-$(echo "${spec%:*}" | tr -d '=,').json" >> "$OUT/sweep.log" 2>&1
    echo "rc=$? ($spec)" >> "$OUT/sweep.log"
  done
fi
if [ "$part" = r9 ]; then  # round 9: attention's registers (full and causal), then fft's and fft2's seed rows (cold re-timed)
  for spec in "B=1,H=16,S=4096,D=64,MASK=1" "B=1,H=16,S=4096,D=64,MASK=2"; do
    timeout 150 python3 benchmarks/sweep.py --workloads attention --sizes "$spec" --limit 6 --budget-s 70 \
      --out "$OUT/sweep-r9-attention-$(echo "$spec" | tr -d '=,').json" >> "$OUT/sweep.log" 2>&1
    echo "rc=$? ($spec)" >> "$OUT/sweep.log"
  done
  timeout 120 python3 benchmarks/roofline.py --sizes seed --workloads "fft,fft2" \
    --generations 2 --budget 6 --limits adapter --out "$OUT/seed-rows" > "$OUT/seed-rows.log" 2>&1
  echo "rc=$?" >> "$OUT/seed-rows.log"
fi
if [ "$part" = r9rows ]; then  # the large rows round 9 re-times: fft and fft2 (every pass cold), WL= picks others
  timeout 400 python3 benchmarks/roofline.py --sizes large --workloads "${WL:-fft,fft2}" \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
  echo "rc=$?" >> "$OUT/rows.log"
fi
if [ "$part" = r10 ]; then  # round 10: conv1d with two windows in flight (sweep beside cuDNN); ROW=1 then its row
  timeout 150 python3 benchmarks/sweep.py --workloads conv1d --sizes large --budget-s 70 \
    --out "$OUT/sweep-r10-conv1d.json" >> "$OUT/sweep.log" 2>&1
  echo "rc=$?" >> "$OUT/sweep.log"
  if [ -n "${ROW:-}" ]; then
    timeout 200 python3 benchmarks/roofline.py --sizes large --workloads conv1d \
      --generations 2 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
    echo "rc=$?" >> "$OUT/rows.log"
  fi
fi
if [ "$part" = r11 ]; then  # round 11: attention's next block prefetched (full and causal), then the chunks
  for spec in "B=1,H=16,S=4096,D=64,MASK=1" "B=1,H=16,S=4096,D=64,MASK=2"; do
    timeout 150 python3 benchmarks/sweep.py --workloads attention --sizes "$spec" --limit 6 --budget-s 70 \
      --out "$OUT/sweep-r11-attention-$(echo "$spec" | tr -d '=,').json" >> "$OUT/sweep.log" 2>&1
    echo "rc=$? ($spec)" >> "$OUT/sweep.log"
  done
  bash "$0" chunk
fi
if [ "$part" = r12 ]; then  # round 12: around round 11's winner (full, then causal)
  for spec in "B=1,H=16,S=4096,D=64,MASK=1" "B=1,H=16,S=4096,D=64,MASK=2"; do
    timeout 150 python3 benchmarks/sweep.py --workloads attention --sizes "$spec" --budget-s 80 \
      --out "$OUT/sweep-r12-attention-$(echo "$spec" | tr -d '=,').json" >> "$OUT/sweep.log" 2>&1
    echo "rc=$? ($spec)" >> "$OUT/sweep.log"
  done
fi
if [ "$part" = clock ]; then  # the worker brings an idled clock up itself: conv1d's probe, 5 s idle before each batch
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 200 > "$OUT/clock-clocks.csv" 2>&1 &
  smi=$!
  timeout 250 python3 benchmarks/conv1d_taps_probe.py --size large --idle-s 5 --out "$OUT/conv1d-taps-idle.json" > "$OUT/clock.log" 2>&1
  echo "rc=$?" >> "$OUT/clock.log"
  kill $smi
fi
if [ "$part" = r14 ]; then  # 2026-12-05 (night): the clock check, the seed tune with the bring-up off and on (alternating), then the seed rows on an H200
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r14.log" 2>&1
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 200 > "$OUT/r14-clocks.csv" 2>&1 &
  smi=$!
  timeout 150 python3 benchmarks/conv1d_taps_probe.py --size large --idle-s 5 --out "$OUT/conv1d-taps-idle.json" >> "$OUT/r14.log" 2>&1
  echo "rc=$? (clock) $(date +%T)" >> "$OUT/r14.log"
  for pass in off-1 on-1 off-2 on-2; do
    bring=0; [ "${pass%-*}" = on ] && bring=1
    VAJRA_TIMING__CLOCK_BRING_UP=$bring timeout 60 python3 benchmarks/tune_all.py --size seed \
      --out "$OUT/tune-all-seed-bring-$pass.json" >> "$OUT/tune_all.log" 2>&1
    echo "rc=$? (seed tune, bring-up $pass) $(date +%T)" >> "$OUT/r14.log"
  done
  if grep -q H200 "$OUT/r14.log"; then
    bash "$0" seedrows
  fi
  kill $smi
fi
if [ "$part" = r14conv ]; then  # round 14: conv1d's W as a uniform (wsrc=3) beside torch, then conv1d's row
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r14conv.log" 2>&1
  timeout 150 python3 benchmarks/sweep.py --workloads conv1d --sizes large --budget-s 70 \
    --out "$OUT/sweep-r14-conv1d.json" >> "$OUT/sweep.log" 2>&1
  echo "rc=$? (sweep) $(date +%T)" >> "$OUT/r14conv.log"
  timeout 220 python3 benchmarks/roofline.py --sizes large --workloads conv1d \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
  echo "rc=$? (row) $(date +%T)" >> "$OUT/r14conv.log"
fi
if [ "$part" = r14h200 ]; then  # on an H200 only: conv1d's row (wsrc=3), fft's and fft2's seed rows, the seed tune with the bring-up on
  if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then  # elsewhere: the clock check
    echo "not an H200: the clock check only" > "$OUT/r14h200.log"
    bash "$0" clock
    exit 0
  fi
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r14h200.log" 2>&1
  timeout 200 python3 benchmarks/roofline.py --sizes large --workloads conv1d \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
  echo "rc=$? (conv1d row) $(date +%T)" >> "$OUT/r14h200.log"
  bash "$0" seedrows
  echo "seedrows done $(date +%T)" >> "$OUT/r14h200.log"
  VAJRA_TIMING__CLOCK_BRING_UP=1 timeout 75 python3 benchmarks/tune_all.py --size seed \
    --out "$OUT/tune-all-seed-bring-on.json" >> "$OUT/tune_all.log" 2>&1
  echo "rc=$? (seed tune) $(date +%T)" >> "$OUT/r14h200.log"
fi
if [ "$part" = r15 ]; then  # 2026-12-06: fft2 folded (sweep, then the library's row); on an H200 also conv1d's row
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r15.log" 2>&1
  timeout 200 python3 benchmarks/sweep.py --workloads fft2 --out "$OUT/sweep-r15-fft2.json" >> "$OUT/r15.log" 2>&1
  echo "rc=$? (fft2 sweep) $(date +%T)" >> "$OUT/r15.log"
  timeout 200 python3 benchmarks/roofline.py --sizes large --workloads fft2 \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows-fft2" > "$OUT/rows-fft2.log" 2>&1
  echo "rc=$? (fft2 row) $(date +%T)" >> "$OUT/r15.log"
  if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    timeout 180 python3 benchmarks/roofline.py --sizes large --workloads conv1d \
      --generations 2 --budget 6 --limits adapter --out "$OUT/rows-conv1d" > "$OUT/rows-conv1d.log" 2>&1
    echo "rc=$? (conv1d row) $(date +%T)" >> "$OUT/r15.log"
  fi
fi
if [ "$part" = r17rows ]; then  # on an H200 only: fft2's row (folded, blocks of 8) and conv1d's row
  nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/r17rows.log" 2>&1
  if grep -q H200 "$OUT/r17rows.log"; then
    timeout 80 python3 benchmarks/roofline.py --sizes large --workloads fft2 \
      --generations 2 --budget 6 --limits adapter --out "$OUT/rows-fft2" > "$OUT/rows-fft2.log" 2>&1
    echo "rc=$? (fft2 row) $(date +%T)" >> "$OUT/r17rows.log"
    timeout 100 python3 benchmarks/roofline.py --sizes large --workloads conv1d \
      --generations 2 --budget 6 --limits adapter --out "$OUT/rows-conv1d" > "$OUT/rows-conv1d.log" 2>&1
    echo "rc=$? (conv1d row) $(date +%T)" >> "$OUT/r17rows.log"
  fi
fi
if [ "$part" = r15h200 ]; then  # r15, then on an H200 the seed rows and the seed tune (bring-up on)
  bash "$0" r15
  if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    bash "$0" seedrows
    timeout 75 python3 benchmarks/tune_all.py --size seed --out "$OUT/tune-all-seed-r15.json" >> "$OUT/tune_all.log" 2>&1
    echo "rc=$? (seed tune) $(date +%T)" >> "$OUT/r15.log"
  fi
fi
if [ "$part" = seedrows ]; then  # fft's and fft2's seed rows under the envelope timing (first begin to last end)
  timeout 150 python3 benchmarks/roofline.py --sizes seed --workloads "fft,fft2" \
    --generations 2 --budget 6 --limits adapter --out "$OUT/seed-rows" > "$OUT/seed-rows.log" 2>&1
  echo "rc=$?" >> "$OUT/seed-rows.log"
fi
if [ "$part" = r13 ]; then  # round 13: conv1d's taps in a uniform; fft2 columns first, every pass timed (2026-12-05)
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r13.log" 2>&1
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 200 > "$OUT/r13-clocks.csv" 2>&1 &
  smi=$!
  timeout 200 python3 benchmarks/conv1d_taps_probe.py --size large --out "$OUT/conv1d-taps-probe.json" >> "$OUT/r13.log" 2>&1
  echo "rc=$? (conv1d taps)" >> "$OUT/r13.log"
  if [ -z "${TAPS_ONLY:-}" ]; then
    timeout 300 python3 benchmarks/fft2_order_probe.py --size large --out "$OUT/fft2-order-probe.json" >> "$OUT/r13.log" 2>&1
    echo "rc=$? (fft2 order)" >> "$OUT/r13.log"
  fi
  kill $smi
fi
if [ "$part" = chunk ]; then  # the scratch in L2 between a chunk's two passes (2026-12-05)
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/chunk.log" 2>&1
  python3 -c "import torch; p = torch.cuda.get_device_properties(0); print('L2', p.L2_cache_size)" >> "$OUT/chunk.log" 2>&1
  timeout 300 python3 benchmarks/fft_chunk_probe.py --size large --out "$OUT/fft-chunk-probe.json" >> "$OUT/chunk.log" 2>&1
  echo "rc=$?" >> "$OUT/chunk.log"
  if [ -n "${ROWS:-}" ]; then
    bash "$0" r9rows
  fi
fi
if [ "$part" = r8row ]; then  # the library's own tune at two heads of 8192 (generation 1: C proposed split)
  timeout 200 python3 benchmarks/roofline.py --sizes large --workloads "${WL:-attention@H=2;S=8192}" \
    --generations 0 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
  echo "rc=$?" >> "$OUT/rows.log"
fi
if [ "$part" = r7rows ]; then  # the rows round 7 can move: causal attention (and fft with ROWS=fft)
  timeout 330 python3 benchmarks/roofline.py --sizes large --workloads "${WL:-attention@MASK=2}${ROWS:+,$ROWS}" \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows" > "$OUT/rows.log" 2>&1
  echo "rc=$?" >> "$OUT/rows.log"
fi
if [ "$part" = final ]; then  # attention configurations, then the rows and the seed tune
  for spec in "B=1,H=16,S=4096,D=64,MASK=1" "B=1,H=16,S=4096,D=64,MASK=2"; do
    timeout 90 python3 benchmarks/sweep.py --workloads attention --sizes "$spec" --budget-s 55 \
      --out "$OUT/sweep3-attention-MASK${spec##*=}.json" >> "$OUT/sweep.log" 2>&1
    echo "rc=$?" >> "$OUT/sweep.log"
  done
  bash "$0" new
  bash "$0" seed
fi
if [ "$part" = recordings ]; then  # the shipped H200 recordings, on today's schema
  VAJRA="python3 -m vajra_tui" timeout 400 bash scripts/make_recordings.sh h200 > "$OUT/recordings.log" 2>&1
  echo "rc=$?" >> "$OUT/recordings.log"
  mkdir -p "$OUT/rec" && cp vajra_tui/recordings/nvidia-h200-*.jsonl "$OUT/rec/"
fi
if [ "$part" = ablate ]; then  # where an FFT pass spends its time (2026-12-06)
  timeout 330 python3 benchmarks/fft_pass_ablation.py --size large --batches 2 --out "$OUT/fft-ablation.json" > "$OUT/ablate.log" 2>&1
  echo "rc=$?" >> "$OUT/ablate.log"
fi
if [ "$part" = r18 ]; then  # 2026-12-06: the ablation; on an H200 the rows #27 still lacks there (fft2 folded, conv1d wsrc=3)
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r18.log" 2>&1
  bash "$0" ablate
  echo "ablate done $(date +%T)" >> "$OUT/r18.log"
  if grep -q H200 "$OUT/r18.log"; then
    bash "$0" r17rows
    echo "rows done $(date +%T)" >> "$OUT/r18.log"
  fi
fi
if [ "$part" = r19 ]; then  # 2026-12-06: fft and fft2 swept (round 18 timed seq here, since removed), then on an H200 fft2's and conv1d's rows
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r19.log" 2>&1
  timeout 200 python3 benchmarks/sweep.py --workloads fft,fft2 --sizes large --budget-s 80 \
    --out "$OUT/sweep-r19-fft.json" >> "$OUT/r19.log" 2>&1
  echo "rc=$? (sweep) $(date +%T)" >> "$OUT/r19.log"
  if grep -q H200 "$OUT/r19.log"; then
    bash "$0" r17rows
    echo "rows done $(date +%T)" >> "$OUT/r19.log"
  fi
fi
if [ "$part" = r20 ]; then  # 2026-12-06 (fourth session): fft2's columns first, folded at the end, beside the library's best and cuFFT; on an H200 then the rows #27 lacks
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r20.log" 2>&1
  timeout 150 python3 benchmarks/fft2_order_probe.py --size large --batches 3 --out "$OUT/fft2-order-r20.json" >> "$OUT/r20.log" 2>&1
  echo "rc=$? (fft2 order) $(date +%T)" >> "$OUT/r20.log"
  if grep -q H200 "$OUT/r20.log"; then
    bash "$0" r17rows
    echo "rows done $(date +%T)" >> "$OUT/r20.log"
  else  # on another card, a second process: the 5% decision should hold across processes
    timeout 150 python3 benchmarks/fft2_order_probe.py --size large --batches 3 --out "$OUT/fft2-order-r20b.json" >> "$OUT/r20.log" 2>&1
    echo "rc=$? (fft2 order, second process) $(date +%T)" >> "$OUT/r20.log"
  fi
fi
if [ "$part" = r21 ]; then  # 2026-12-07: on an H200 the rows #27 lacks; then attention's round 20 on any card
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r21.log" 2>&1
  if grep -q H200 "$OUT/r21.log"; then
    bash "$0" r17rows
    echo "rows done $(date +%T)" >> "$OUT/r21.log"
  fi
  specs="B=1,H=16,S=4096,D=64,MASK=1 B=1,H=16,S=4096,D=64,MASK=2"
  grep -q H200 "$OUT/r21.log" && specs="B=1,H=16,S=4096,D=64,MASK=1"  # after the rows: the full mask alone
  for spec in $specs; do
    timeout 150 python3 benchmarks/sweep.py --workloads attention --sizes "$spec" --budget-s 80 \
      --out "$OUT/sweep-r20-attention-$(echo "$spec" | tr -d '=,').json" >> "$OUT/r21.log" 2>&1
    echo "rc=$? ($spec) $(date +%T)" >> "$OUT/r21.log"
  done
fi
if [ "$part" = r22 ]; then  # 2026-12-07 (late): every #27 row on whatever card comes, beside torch in each process
  nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/r22.log" 2>&1
  bash "$0" new
  echo "new rows done $(date +%T)" >> "$OUT/r22.log"
  timeout 100 python3 benchmarks/roofline.py --sizes large --workloads conv1d \
    --generations 2 --budget 6 --limits adapter --out "$OUT/rows-conv1d" > "$OUT/rows-conv1d.log" 2>&1
  echo "rc=$? (conv1d row) $(date +%T)" >> "$OUT/r22.log"
fi
if [ "$part" = r23 ]; then  # on an H200 only: every #27 row ("r22"); elsewhere the card's name alone
  if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    bash "$0" r22
  else
    nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/r23.log" 2>&1
  fi
fi

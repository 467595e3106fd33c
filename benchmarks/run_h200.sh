#!/usr/bin/env bash
# One device call on a 2xH200 host (kind nvidia-h200-x2): the README's test command on
# adapter 1 (issue #15) while the benchmarks of issue #13 have adapter 0 to themselves.
# Run from the project root with carry [.gl, .wheels] (benchmarks/pack_wheels.py packs
# every wheel, Ray's included); everything lands in $OUT/h200.tgz (the device tool brings
# back only a few files). Each part has its own limit, so the archive is always written
# inside the call's 600 s.
set -u
OUT=${OUT:-/tmp/out}
. .gl/env.sh
export PYTHONPATH= XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/wheels && tar -xJf .wheels/all.tar.xz -C /tmp/wheels
python3 -m pip install -q --no-index --find-links /tmp/wheels/w -e . > /dev/null 2>&1
RES=$OUT/h200 && mkdir -p "$RES"
(export VAJRA_ADAPTER=1 PIP_NO_INDEX=1 PIP_FIND_LINKS=/tmp/wheels/w
 timeout 560 bash scripts/test.sh -p no:randomly > "$RES/tests.log" 2>&1; echo "rc=$?" >> "$RES/tests.log") &
export VAJRA_ADAPTER=0
timeout 420 python3 benchmarks/roofline.py --sizes both --out "$RES" --record-dir "$RES/rec" > "$RES/roofline.log" 2>&1
for pass in 1 2; do  # twice: run-to-run noise (the roofline's seed tunes warmed the driver's shader cache)
  timeout 60 python3 benchmarks/tune_all.py --size seed --out "$RES/tune-all-seed-$pass.json" >> "$RES/tune_all.log" 2>&1
done
timeout 60 python3 benchmarks/harness.py --size seed --candidates 4 --judges gpu --out "$RES/harness-seed.json" > "$RES/harness.log" 2>&1
wait
tar czf "$OUT/h200.tgz" -C "$OUT" h200 && rm -rf "$RES"

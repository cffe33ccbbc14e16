#!/bin/bash
# The three-run bar on one GPU: the same small configuration (vector_add, elementwise and
# reduction from config/config.yaml, hot mode, no energy readings) run RUNS times (3) by
# `python -m gpubench run`, NumPy and every GPU backend, one after another, then
# tools/repeatability.py over the runs. The runs start in their own session
# (they outlive the call); a call waits up to WAIT_S seconds (560) for them, then prints
# the spread and packs the step CSVs into $OUT. Run from the repository root:
#
#   bash evidence/caller-clock-repeatability/commands/repeatability_runs.sh start    # call 1
#   bash evidence/caller-clock-repeatability/commands/repeatability_runs.sh collect  # call 2, if needed
#
# CLOCK=old times the caller's clock as before the rounds (one round, no gap, no
# re-measurement): the baseline, on the same machine, in folders of its own.
set -u
CLOCK=${CLOCK:-new}
R=/tmp/repeatability-$CLOCK
OUT=${OUT:-/tmp}
export PYTHONPATH=$PWD/src
BACKENDS="numpy-cpu cupy-gpu numba-gpu jax-gpu torch-gpu cuda_python-gpu"

case "${1:-start}" in
loop)  # the runs themselves (started by "start" in its own session)
  for run in $(seq "${RUNS:-3}"); do
    mkdir -p "$R/r$run"
    for b in $BACKENDS; do
      S=$(date +%s)
      timeout -k 5 600 python3 -m gpubench run --backend "$b" --threads "$(nproc)" \
        --config-json "$(cat "$R/config.json")" --csv "$R/r$run/$b.csv" \
        --samples "$R/r$run/$b.samples.csv" > "$R/r$run/$b.log" 2>&1
      echo "run $run $b rc=$? wall_s=$(( $(date +%s) - S ))" >> "$R/runs.txt"
    done
  done
  touch "$R/done"
  exit 0
  ;;
start)
  rm -rf "$R" && mkdir -p "$R"
  CLOCK=$CLOCK python3 - > "$R/config.json" <<'EOF'
import json, os
import yaml
c = yaml.safe_load(open("config/config.yaml"))
c["kernels"] = {k: c["kernels"][k] for k in ("vector_add", "elementwise", "reduction")}
c["gpu_modes"], c["energy"] = ["hot"], "off"
if os.environ["CLOCK"] == "old":
    c["gpu_harness"].update(caller_rounds=1, caller_round_gap_s=0.0, caller_max_rounds=1)
keys = ("threads", "gpu_modes", "gpu_cold_max_bytes", "harness", "gpu_harness", "kernels",
        "energy")
print(json.dumps({k: c[k] for k in keys if k in c}, sort_keys=True))
EOF
  setsid nohup bash "$0" loop > "$R/loop.log" 2>&1 < /dev/null &
  ;;
collect) ;;
*) echo "usage: $0 start|collect" >&2; exit 2 ;;
esac

for _ in $(seq "${WAIT_S:-560}"); do [ -f "$R/done" ] && break; sleep 1; done
cat "$R/runs.txt" 2>/dev/null
if [ ! -f "$R/done" ]; then
  echo "still running; call again with: bash $0 collect"
  exit 0
fi
grep -h "re-measured" "$R"/r[0-9]*/*.log | head -n 40
python3 tools/repeatability.py "$R"/r[0-9]* --worst 15 | tee "$OUT/repeatability-$CLOCK.txt"
tar czf "$OUT/repeatability-$CLOCK.tgz" -C "$R" --exclude='*.samples.csv' .

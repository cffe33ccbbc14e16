#!/bin/bash
# `make run` (the quick suite, the default) on this project's 2-core machine, from the
# clone's root, into a new results folder with the framework environments already built
# (`make envs` once before; .venvs/ is reused, as on a second run of a fresh clone): the
# time from `make run` to the report, the load while it ran (the machine is shared), and
# the breakdown (each step's wall time, each worker's time by stage) in $1.
# Usage: bash evidence/quick-suite-timing/cpu.sh OUT_DIR
set -u
out=${1:?OUT_DIR}
mkdir -p "$out"
rm -rf results logs
{ date -u +%FT%TZ; uptime; ps -eo pcpu,etime,args --sort=-pcpu | head -8 | cut -c1-160; } \
  > "$out/load_before.txt"
( while sleep 10; do echo "$(date -u +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; done ) \
  > "$out/load_during.txt" &
watch=$!
start=$(date +%s.%N)
make run > "$out/make_run.log" 2>&1
rc=$?
end=$(date +%s.%N)
kill "$watch"
uptime > "$out/load_after.txt"
echo "make run rc=$rc wall_s=$(echo "$end - $start" | bc)" > "$out/wall.txt"
.venv/bin/python tools/stage_breakdown.py "$out/make_run.log" logs \
  "make run (quick, CPU)" > "$out/breakdown.md"
cp results/suite.json "$out/"
head -8 results/report/summary.md > "$out/summary_head.md"
cat "$out/wall.txt"

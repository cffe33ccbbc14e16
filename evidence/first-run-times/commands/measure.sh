#!/bin/bash
# A newcomer's first run, timed stage by stage from a fresh clone of this repository
# (REPO, default: the checkout this script is in) in /tmp/newcomer, with a fresh HOME (no
# pip cache): .venv, the framework environments, make run, make smoke, the full suite.
# Each stage's wall time, load and untracked files go to OUTDIR. Run it on a quiet machine.
set -u
: "${OUTDIR:?OUTDIR=<folder for the logs>}"
REPO=${REPO:-$(git -C "$(dirname "$0")" rev-parse --show-toplevel)}
mkdir -p "$OUTDIR"
LOG=$OUTDIR/stages.log
: > $LOG
( while true; do echo "$(date +%s) $(cut -d' ' -f1-3 /proc/loadavg) $(head -1 /proc/stat)"; sleep 5; done ) > $OUTDIR/load.log 2>&1 &
LOADPID=$!
stage() { # name cmd...
  local name=$1; shift
  local t0=$(date +%s.%N); local l0=$(cut -d' ' -f1 /proc/loadavg)
  "$@" > $OUTDIR/$name.out 2>&1; local rc=$?
  local t1=$(date +%s.%N); local l1=$(cut -d' ' -f1 /proc/loadavg)
  echo "$name rc=$rc seconds=$(echo "$t1 - $t0" | bc) load_start=$l0 load_end=$l1 start=$(date -d @${t0%.*} +%T)" >> $LOG
  (cd /tmp/newcomer 2>/dev/null && git status --porcelain > "$OUTDIR/$name.untracked")
}
rm -rf /tmp/newcomer $OUTDIR/home; mkdir -p $OUTDIR/home
export HOME=$OUTDIR/home
stage clone git clone -q "$REPO" /tmp/newcomer
cd /tmp/newcomer
stage venv make .venv/.installed-run
stage envs make envs
stage run make run
stage smoke make smoke
stage full env PATH=/tmp/newcomer/.venv/bin:$PATH .venv/bin/gpubench run --suite full -- --cores all --config results_dir=results-full
kill $LOADPID
echo done >> $LOG

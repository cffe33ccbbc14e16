#!/bin/bash
# Sourced by a chain's steps file (from the repository root): ROOT, SM (Snakemake on the
# GPU machine, all cores, the local profile) and step NAME CMD...: run CMD with its
# output in /tmp/NAME.log, its exit code and wall time appended to /tmp/chain.txt, then
# /tmp/NAME.done (chain.sh packs each finished step into $OUT/NAME.tgz).
ROOT=$PWD
SM="python3 -m snakemake --cores 16 --profile profiles/local"
step() {
  local name=$1; shift
  local t0; t0=$(date +%s)
  "$@" > "/tmp/$name.log" 2>&1
  echo "$name rc=$? wall_s=$(( $(date +%s) - t0 )) end=$(date -u +%H:%M:%S)" >> /tmp/chain.txt
  touch "/tmp/$name.done"
}
# snapshot TREE: run from a copy of the working tree (no results, wheels or .snakemake),
# so that later calls' copies of the working tree leave the code under measurement alone.
snapshot() {
  TREE=$1
  mkdir -p "$TREE"
  tar cf - --exclude=./results --exclude=./.whl --exclude=./.snakemake . | tar xf - -C "$TREE"
  export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$TREE/src GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
}
# suite_run NAME CACHE [ARGS...]: the default configuration plus
# tools/device/gpu-suite.yaml (ARGS: more config files, or Snakemake options) from $TREE into
# $ROOT/results/NAME with compile caches in CACHE; the samples files removed, error
# rows' tracebacks gathered in tracebacks.txt.
suite_run() {
  local name=$1 cache=$2; shift 2
  (cd "$TREE" && $SM --configfile config/config.yaml tools/device/gpu-suite.yaml "$@" \
    --config results_dir="$ROOT/results/$name" logs_dir="$ROOT/results/$name/logs" \
    compile_cache_dir="$cache")
  local rc=$?
  rm -f "$ROOT/results/$name/samples.csv" "$ROOT"/results/$name/raw/*.samples.csv
  grep -h -A40 "traceback of the error" "$ROOT"/results/$name/logs/*/*.log \
    > "$ROOT/results/$name/tracebacks.txt" 2>/dev/null
  return $rc
}
# overlay_run NAME OVERLAY: config/config.yaml plus one overlay from $TREE into
# $ROOT/results/NAME (compile caches in $ROOT/results/cache); the samples files removed
# (samples.csv kept compressed), the GPU's name and clocks in gpu.txt, error rows'
# tracebacks in tracebacks.txt.
overlay_run() {
  local out=$ROOT/results/$1
  (cd "$TREE" && $SM --configfile config/config.yaml "$2" \
    --config results_dir="$out" logs_dir="$out/logs" compile_cache_dir="$ROOT/results/cache")
  local rc=$?
  rm -f "$out"/raw/*.samples.csv; xz -T0 -6 "$out/samples.csv" 2>/dev/null
  nvidia-smi --query-gpu=name,serial,uuid,clocks.max.sm,power.limit --format=csv \
    > "$out/gpu.txt" 2>&1
  grep -h -A40 "traceback of the error" "$out"/logs/*/*.log > "$out/tracebacks.txt" 2>/dev/null
  return $rc
}

#!/bin/bash
# Sourced by a session's steps file (from the clone's root): ROOT, SM (Snakemake on the
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

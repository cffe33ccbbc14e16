#!/bin/bash
# Call 1 of 2 per machine: the default GPU suite + the NumPy baseline (config
# .devcfg/device.yaml = evidence/energy-per-call/device.yaml), report included, in one Snakemake
# run started in its own session so that it outlives this call; collect_suite.sh waits.
# Usage: bash run_suite.sh h100|h200
NAME=${1:?name}
export PYTHONPATH=/tmp/site GPUBENCH_GIT_COMMIT=$(cat .devcfg/COMMIT)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>&1 | tail -2
nvidia-smi > /tmp/nvidia-smi.txt 2>&1
nvidia-smi -q -d POWER > /tmp/nvidia-smi-power.txt 2>&1
[ -n "$CROSSCHECK" ] && timeout 60 python3 tools/power_crosscheck.py > $OUT/power_crosscheck.json 2>&1 && cat $OUT/power_crosscheck.json
date +%s > /tmp/t0
setsid nohup bash -c "python3 -m snakemake --cores 16 --profile profiles/local \
  --configfile config/config.yaml .devcfg/device.yaml \
  --config results_dir=results/$NAME logs_dir=results/$NAME/logs > /tmp/snakemake.log 2>&1;
  echo \"snakemake rc=\$? wall_s=\$(( \$(date +%s) - \$(cat /tmp/t0) ))\" >> /tmp/snakemake.log;
  touch /tmp/suite.done" > /dev/null 2>&1 &
for _ in $(seq ${WAIT_S:-570}); do [ -f /tmp/suite.done ] && break; sleep 1; done
cp /tmp/snakemake.log /tmp/nvidia-smi*.txt $OUT/ 2>/dev/null
grep -E "^\[|rule |Finished|rc=" /tmp/snakemake.log | tail -n 30

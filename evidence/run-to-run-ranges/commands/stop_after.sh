#!/bin/bash
# Wait (up to WAIT_S) for /tmp/<name>.done, then stop the chain's later runs (its steps
# file and every Snakemake and worker process), so that a shorter run can follow.
for _ in $(seq "${WAIT_S:-300}"); do [ -f "/tmp/${1:?name}.done" ] && break; sleep 1; done
pkill -f "commands/runs.sh"; pkill -f "python3 -m snakemake"; pkill -f "workflow/scripts/run.py"
sleep 3; pgrep -fa "run.py|snakemake" | head -3; touch /tmp/chain.done

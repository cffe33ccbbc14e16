#!/usr/bin/env bash
# Stop the localhost SLURM cluster that setup-localhost-cluster.sh started (root).
# Packages, configuration and the accounting database stay: the next setup is quick.
# PURGE=1 also removes the cluster's state, logs and fake GPU devices.
set -uo pipefail
[[ $(id -u) -eq 0 ]] || { echo "needs root" >&2; exit 1; }

stop() {  # stop PIDFILE NAME: end the daemon by the pid it wrote
    local pidfile=$1 name=$2 pid
    [[ -s $pidfile ]] || return 0
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null && [[ $(ps -o comm= -p "$pid") == "$name" ]]; then
        kill "$pid"
        for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    fi
    rm -f "$pidfile"
}

scancel --user=root --quiet 2>/dev/null || true
stop /run/slurm/slurmd.pid slurmd
stop /run/slurm/slurmctld.pid slurmctld
stop /run/slurm/slurmdbd.pid slurmdbd
stop /run/mysqld/mysqld.pid mariadbd
stop /run/munge/munged.pid munged
if [[ ${PURGE:-0} == 1 ]]; then
    rm -rf /var/lib/gpubench-slurm /var/log/gpubench-slurm /dev/fakegpu*
fi
echo "[slurm-teardown] stopped"

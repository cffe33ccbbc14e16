#!/usr/bin/env bash
# End what setup-two-node-cluster.sh started (root): every process whose PID it recorded
# in /run/gpubench-2node/pids, then every process still inside the two namespaces (job
# steps and ranks the daemons left, by the PIDs `ip netns pids` lists), then the
# namespaces. munged and MariaDB are ended only where this cluster's setup started them.
# PURGE=1 also removes its configuration, state and logs.
set -uo pipefail
[[ $(id -u) -eq 0 ]] || { echo "needs root" >&2; exit 1; }
RUN=/run/gpubench-2node
NS=(gb2-node1 gb2-node2)

end_pid() {  # end_pid NAME PID: SIGTERM, then SIGKILL after 10 s (if PID is still NAME)
    local name=${1%%.*} pid=$2
    [[ $(ps -o comm= -p "$pid" 2>/dev/null) == "$name" ]] || return 0
    kill "$pid" 2>/dev/null
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
}

for ns in "${NS[@]}"; do
    ip netns list | grep -qw "$ns" || continue
    "$(dirname "$0")/two-node-exec" 1 scancel --user=root --quiet 2>/dev/null || true
    break
done
if [[ -s $RUN/pids ]]; then
    # newest first: the slurmds before slurmctld before slurmdbd before MariaDB, munged
    tac "$RUN/pids" | while read -r name pid; do
        echo "[slurm-2node-teardown] ending $name ($pid)"
        end_pid "$name" "$pid"
    done
    rm -f "$RUN/pids"
fi
# the daemons' own pid files: a later setup must not take a reused PID for one of them
rm -f "$RUN"/*.pid
for ns in "${NS[@]}"; do
    ip netns list | grep -qw "$ns" || continue
    for pid in $(ip netns pids "$ns"); do
        echo "[slurm-2node-teardown] ending $(ps -o comm= -p "$pid" 2>/dev/null) ($pid) left in $ns"
        kill -9 "$pid" 2>/dev/null || true
    done
    ip netns del "$ns"
done
if [[ ${PURGE:-0} == 1 ]]; then
    rm -rf /var/lib/gpubench-2node /var/log/gpubench-2node /etc/slurm-2node \
        "$RUN"
fi
echo "[slurm-2node-teardown] stopped"

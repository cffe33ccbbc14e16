#!/usr/bin/env bash
# A TWO-node SLURM cluster on one machine, for tests/test_slurm_two_node.py (root, Linux).
#
#   tests/slurm/setup-two-node-cluster.sh      create the namespaces, start, wait
#   tests/slurm/teardown-two-node-cluster.sh   end every process this script started
#
# Two network namespaces, gb2-node1 (10.77.0.1) and gb2-node2 (10.77.0.2), joined by one
# veth pair: no bridge, no address in the root namespace, no route out, so every packet
# of this cluster stays between the two. Each daemon runs under `unshare --uts` with the
# node's host name, so the ranks of an MPI job see node1 and node2.
#
#   node1: slurmdbd (cluster gpubench2node), slurmctld, slurmd -N node1
#   node2: slurmd -N node2
#
# Configuration: /etc/slurm-2node/{slurm,gres,slurmdbd}.conf and hosts. Every process of
# this cluster runs through tests/slurm/two-node-exec, which bind-mounts /etc/slurm-2node
# over /etc/slurm (and its hosts over /etc/hosts) in a private mount namespace: there
# /etc/slurm IS this cluster's configuration, outside it stays the one-node cluster's
# (setup-localhost-cluster.sh), so both can run at once. A path, not SLURM_CONF, because
# the executor plugin's job step strips SLURM_* variables.
#
# The submitting side runs on node1 too: `tests/slurm/two-node-exec 1 snakemake
# --profile profiles/slurm ...` (and sbatch, sacct, scontrol the same way).
#
# munged and MariaDB are shared with the one-node cluster (their sockets are files,
# which the namespaces share): started here only when not already running, and then
# ended by the teardown. Accounting has its own database (gpubench_2node_acct_db).
# Every PID this script starts is written to $RUN/pids ("name pid" lines), which the
# teardown ends one by one.
#
# Environment: FAKE_GPUS (4 per node, character devices /dev/fakegpuN as in the one-node
# cluster), NODE_CPUS (2: a 4-rank job must span both nodes), NODE_MEM_MB (32000),
# SLURMD_TIMEOUT (10 s: how soon a node whose slurmd stopped answering is marked DOWN).
set -euo pipefail

FAKE_GPUS=${FAKE_GPUS:-4}
NODE_CPUS=${NODE_CPUS:-2}
NODE_MEM_MB=${NODE_MEM_MB:-32000}
SLURMD_TIMEOUT=${SLURMD_TIMEOUT:-10}
CLUSTER=gpubench2node
PARTITION=debug
ACCOUNT=gpubench
NS=(gb2-node1 gb2-node2)
NODES=(node1 node2)
ADDR=(10.77.0.1 10.77.0.2)
VETH=(gb2veth1 gb2veth2)
CONF=/etc/slurm-2node
STATE=/var/lib/gpubench-2node
LOGDIR=/var/log/gpubench-2node
RUN=/run/gpubench-2node
DB=gpubench_2node_acct_db
HERE="$(cd "$(dirname "$0")" && pwd)"

say() { echo "[slurm-2node] $*"; }
die() { echo "[slurm-2node] ERROR: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, /etc/slurm-2node, daemons)"

# -- packages (as setup-localhost-cluster.sh, plus iproute2 for the namespaces) ------------
PKGS=(slurm-wlm slurmdbd munge mariadb-server openmpi-bin libopenmpi-dev libpmix2 iproute2)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})) && command -v apt-get >/dev/null; then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for tool in ip unshare nsenter slurmctld slurmd slurmdbd munged mariadbd; do
    command -v "$tool" >/dev/null || die "$tool not found (apt-get install iproute2 \
util-linux slurm-wlm slurmdbd munge mariadb-server)"
done

mkdir -p /etc/slurm "$CONF" "$STATE"/{ctld,node1,node2,tmp1,tmp2} "$LOGDIR" "$RUN" /run/munge \
    /run/mysqld
chmod 1777 "$STATE"/tmp1 "$STATE"/tmp2
chown munge:munge /run/munge
chown mysql:mysql /run/mysqld
touch "$RUN/pids"
record() { sed -i "/^$1 /d" "$RUN/pids"; echo "$1 $2" >> "$RUN/pids"; }  # one line a daemon

# -- network ---------------------------------------------------------------------------
for i in 0 1; do
    ip netns list | grep -qw "${NS[$i]}" || ip netns add "${NS[$i]}"
    ip -n "${NS[$i]}" link set lo up
done
if ! ip -n "${NS[0]}" link show "${VETH[0]}" >/dev/null 2>&1; then
    ip link add "${VETH[0]}" netns "${NS[0]}" type veth peer name "${VETH[1]}" netns "${NS[1]}"
fi
for i in 0 1; do
    ip -n "${NS[$i]}" addr replace "${ADDR[$i]}/24" dev "${VETH[$i]}"
    ip -n "${NS[$i]}" link set "${VETH[$i]}" up
done
printf '127.0.0.1 localhost\n%s node1\n%s node2\n' "${ADDR[0]}" "${ADDR[1]}" > "$CONF/hosts"

# on_node I CMD...: run CMD as node I+1 (its namespace, host name and /etc/slurm)
on_node() { local i=$1; shift; "$HERE/two-node-exec" $((i + 1)) "$@"; }
in_ns() { on_node 0 "$@"; }  # a client command, on node1

# -- configuration ---------------------------------------------------------------------
for i in $(seq 0 $((FAKE_GPUS - 1))); do
    [[ -c /dev/fakegpu$i ]] || mknod -m 666 "/dev/fakegpu$i" c 1 3
done

cat > "$CONF/slurm.conf" <<EOF
# Written by $0: a two-node test cluster in network namespaces. Not for production.
ClusterName=$CLUSTER
SlurmctldHost=node1(${ADDR[0]})
SlurmctldPort=6917
SlurmdPort=6918
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/%n
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.%n.pid
SlurmctldLogFile=$LOGDIR/slurmctld.log
SlurmdLogFile=$LOGDIR/slurmd.%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SlurmdTimeout=$SLURMD_TIMEOUT
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=node1
AccountingStoragePort=6919
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=300
KillWait=5
InactiveLimit=0
SchedulerParameters=sched_interval=2,bf_interval=2
NodeName=node1 NodeAddr=${ADDR[0]} NodeHostname=node1 CPUs=$NODE_CPUS RealMemory=$NODE_MEM_MB Gres=gpu:fake:$FAKE_GPUS State=UNKNOWN
NodeName=node2 NodeAddr=${ADDR[1]} NodeHostname=node2 CPUs=$NODE_CPUS RealMemory=$NODE_MEM_MB Gres=gpu:fake:$FAKE_GPUS State=UNKNOWN
EnforcePartLimits=ALL
PartitionName=$PARTITION Nodes=node1,node2 Default=YES MaxTime=UNLIMITED State=UP
EOF

cat > "$CONF/gres.conf" <<EOF
NodeName=node[1-2] Name=gpu Type=fake File=/dev/fakegpu[0-$((FAKE_GPUS - 1))]
EOF

cat > "$CONF/slurmdbd.conf" <<EOF
AuthType=auth/munge
DbdHost=node1
DbdAddr=${ADDR[0]}
DbdPort=6919
SlurmUser=root
PidFile=$RUN/slurmdbd.pid
LogFile=$LOGDIR/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurm
StorageLoc=$DB
EOF
chmod 600 "$CONF/slurmdbd.conf"

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
    local t=$1 what=$2; shift 2
    for _ in $(seq $((t * 2))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
    die "$what did not come up in ${t}s (logs: $LOGDIR)"
}
alive() {  # alive PIDFILE: the daemon that wrote it still runs (its PID, by that name:
    # a pid file left by an interrupted run may name a PID since reused by another
    # process, which must be neither taken for the daemon nor killed)
    local name
    name=$(basename "$1" .pid)
    [[ -s $1 ]] && [[ $(ps -o comm= -p "$(cat "$1")" 2>/dev/null) == "${name%%.*}" ]]
}
started() {  # started NAME PIDFILE: record the daemon's PID once it wrote its pidfile
    wait_for 30 "$1 (pid file $2)" test -s "$2"
    record "$1" "$(cat "$2")"
}

# -- shared daemons: munged, MariaDB -----------------------------------------------------
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "starting munged"
    [[ -s /etc/munge/munge.key ]] || { mungekey -c -f; chown munge:munge /etc/munge/munge.key; }
    rm -f /run/munge/munged.pid
    runuser -u munge -- /usr/sbin/munged </dev/null >/dev/null 2>&1
    started munged /run/munge/munged.pid
fi
wait_for 20 munge sh -c 'munge -n | unmunge'

if ! mariadb -uroot -e 'select 1' >/dev/null 2>&1; then
    say "starting MariaDB"
    [[ -d /var/lib/mysql/mysql ]] || mariadb-install-db --user=mysql >/dev/null
    rm -f /run/mysqld/mysqld.pid
    (cd / && setsid -f mariadbd --user=mysql --bind-address=127.0.0.1 \
        --pid-file=/run/mysqld/mysqld.pid </dev/null >>"$LOGDIR/mariadb.log" 2>&1)
    started mariadbd /run/mysqld/mysqld.pid
fi
wait_for 60 MariaDB mariadb -uroot -e 'select 1'
mariadb -uroot <<EOF
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurm';
CREATE DATABASE IF NOT EXISTS $DB;
GRANT ALL ON $DB.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
EOF

# -- this cluster's daemons ------------------------------------------------------------
if ! alive "$RUN/slurmdbd.pid"; then
    say "starting slurmdbd (node1)"
    rm -f "$RUN/slurmdbd.pid"
    on_node 0 slurmdbd </dev/null >/dev/null 2>&1
    started slurmdbd "$RUN/slurmdbd.pid"
fi
wait_for 60 slurmdbd in_ns sacctmgr -n list cluster
in_ns sacctmgr -i -Q add cluster "$CLUSTER" >/dev/null 2>&1 || true
in_ns sacctmgr -i -Q add account "$ACCOUNT" Cluster="$CLUSTER" Description=tests \
    Organization=gpubench >/dev/null 2>&1 || true
in_ns sacctmgr -i -Q add user root Account="$ACCOUNT" DefaultAccount="$ACCOUNT" \
    Cluster="$CLUSTER" >/dev/null 2>&1 || true
in_ns sacctmgr -n -s list user root format=account cluster="$CLUSTER" | grep -qw "$ACCOUNT" \
    || die "sacctmgr did not register account $ACCOUNT for root on $CLUSTER"

# A changed node or partition needs fresh daemons (scontrol reconfigure keeps old limits).
sum=$(cat "$CONF/slurm.conf" "$CONF/gres.conf" | sha256sum | cut -c1-16)
if [[ "$(cat "$STATE/conf.sum" 2>/dev/null)" != "$sum" ]]; then
    for f in slurmd.node1 slurmd.node2 slurmctld; do
        if alive "$RUN/$f.pid"; then
            say "configuration changed: stopping $f"
            pid=$(cat "$RUN/$f.pid")
            kill "$pid"
            for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
            sed -i "/^$f /d" "$RUN/pids"
        fi
    done
    echo "$sum" > "$STATE/conf.sum"
fi
if ! alive "$RUN/slurmctld.pid"; then
    say "starting slurmctld (node1)"
    rm -f "$RUN/slurmctld.pid"
    on_node 0 slurmctld </dev/null >/dev/null 2>&1
    started slurmctld "$RUN/slurmctld.pid"
fi
wait_for 60 slurmctld in_ns scontrol ping
wait_for 60 "sacct (accounting)" in_ns sacct -n -X -S now-1minutes

for i in 0 1; do
    node=${NODES[$i]}
    if ! alive "$RUN/slurmd.$node.pid"; then
        say "starting slurmd -N $node"
        rm -f "$RUN/slurmd.$node.pid"
        on_node "$i" slurmd -N "$node" </dev/null >/dev/null 2>&1
        started "slurmd.$node" "$RUN/slurmd.$node.pid"
    fi
done
nodes_idle() {
    in_ns scontrol update NodeName=node1,node2 State=RESUME >/dev/null 2>&1 || true
    [[ $(in_ns sinfo -h -N -o '%N %t' | grep -cE ' (idle|mix|alloc)$') == 2 ]]
}
wait_for 60 "nodes node1 and node2 (sinfo idle)" nodes_idle
say "ready: $(in_ns sinfo -h -N -o '%N:%t:%G' | tr '\n' ' ')"

#!/usr/bin/env bash
# A one-node SLURM cluster on localhost for the integration tests (Debian/Ubuntu, root).
#
#   tests/slurm/setup-localhost-cluster.sh      install what is missing, (re)start, wait
#   tests/slurm/teardown-localhost-cluster.sh   stop the daemons (packages stay)
#
# Idempotent: packages are installed only when missing, the configuration is rewritten
# and the daemons are started only when not already answering. It runs munged, MariaDB,
# slurmdbd (sacct needs accounting: the executor plugin polls sacct), slurmctld and
# slurmd without systemd. The node "localhost" has FAKE_GPUS fake GPUs: character
# devices made with `mknod c 1 3` (gres.conf needs device files, or slurmd drains the
# node), in partition "debug" and account "gpubench". Open MPI with PMIx and mpi4py make
# `srun --mpi=pmix python -c 'from mpi4py import MPI'` work.
#
# Environment: FAKE_GPUS (4), NODE_CPUS (16), NODE_MEM_MB (128000): the node claims what
# profiles/slurm asks for (SlurmdParameters=config_overrides lets it claim more than the
# machine has; the test jobs are tiny), SLURM_TEST_PYTHON (the Python to give mpi4py;
# the repository's .venv if there is one).
set -euo pipefail

FAKE_GPUS=${FAKE_GPUS:-4}
NODE_CPUS=${NODE_CPUS:-16}
NODE_MEM_MB=${NODE_MEM_MB:-128000}
CLUSTER=gpubench
PARTITION=debug
ACCOUNT=gpubench
STATE=/var/lib/gpubench-slurm
LOGDIR=/var/log/gpubench-slurm
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PY=${SLURM_TEST_PYTHON:-}
if [[ -z "$PY" && -x "$ROOT/.venv/bin/python" ]]; then PY="$ROOT/.venv/bin/python"; fi

say() { echo "[slurm-setup] $*"; }
die() { echo "[slurm-setup] ERROR: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "needs root (installs packages, writes /etc/slurm, starts daemons)"

# -- packages -------------------------------------------------------------------------
PKGS=(slurm-wlm slurmdbd munge mariadb-server openmpi-bin libopenmpi-dev libpmix2)
missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    command -v apt-get >/dev/null || die "apt-get not found; install ${missing[*]} by hand"
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [[ -n "$PY" ]] && ! "$PY" -c 'import mpi4py' 2>/dev/null; then
    say "installing mpi4py into $PY (built against Open MPI)"
    "$PY" -m pip install -q mpi4py || say "WARNING: mpi4py did not install; MPI checks will skip"
fi

# -- configuration --------------------------------------------------------------------
mkdir -p /etc/slurm "$STATE"/{ctld,d} "$LOGDIR" /run/munge /run/mysqld /run/slurm
chown munge:munge /run/munge
chown mysql:mysql /run/mysqld

for i in $(seq 0 $((FAKE_GPUS - 1))); do
    [[ -c /dev/fakegpu$i ]] || mknod -m 666 "/dev/fakegpu$i" c 1 3
done

cat > /etc/slurm/slurm.conf <<EOF
# Written by $0: a one-node test cluster. Not for production.
ClusterName=$CLUSTER
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/d
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=$LOGDIR/slurmctld.log
SlurmdLogFile=$LOGDIR/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
# Memory is enforced as a site's cgroups would (without cgroups in a container):
# slurmstepd samples each step's memory every second and kills a step over its
# --mem, and the job ends OUT_OF_MEMORY (tests/test_slurm_cluster.py's memory test).
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
JobCompType=jobcomp/none
MinJobAge=300
KillWait=5
InactiveLimit=0
SchedulerParameters=sched_interval=2,bf_interval=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$NODE_CPUS RealMemory=$NODE_MEM_MB Gres=gpu:fake:$FAKE_GPUS State=UNKNOWN
EnforcePartLimits=ALL
PartitionName=$PARTITION Nodes=localhost Default=YES MaxTime=UNLIMITED State=UP
EOF

cat > /etc/slurm/gres.conf <<EOF
NodeName=localhost Name=gpu Type=fake File=/dev/fakegpu[0-$((FAKE_GPUS - 1))]
EOF

cat > /etc/slurm/slurmdbd.conf <<EOF
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
PidFile=/run/slurm/slurmdbd.pid
LogFile=$LOGDIR/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
EOF
chmod 600 /etc/slurm/slurmdbd.conf

running() { pgrep -x "$1" >/dev/null; }
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
    local t=$1 what=$2; shift 2
    for _ in $(seq "$t"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
    die "$what did not come up in ${t}s (logs: $LOGDIR)"
}

# -- daemons --------------------------------------------------------------------------
if ! running munged; then
    say "starting munged"
    [[ -s /etc/munge/munge.key ]] || { mungekey -c -f; chown munge:munge /etc/munge/munge.key; }
    runuser -u munge -- /usr/sbin/munged </dev/null >/dev/null 2>&1
fi
wait_for 20 munge sh -c 'munge -n | unmunge'

if ! running mariadbd && ! running mysqld; then
    say "starting MariaDB"
    [[ -d /var/lib/mysql/mysql ]] || mariadb-install-db --user=mysql >/dev/null
    (cd / && setsid -f mariadbd --user=mysql --bind-address=127.0.0.1 \
        </dev/null >>"$LOGDIR/mariadb.log" 2>&1)
fi
wait_for 60 MariaDB mariadb -uroot -e 'select 1'
mariadb -uroot <<'EOF'
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurm';
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
EOF

if ! running slurmdbd; then
    say "starting slurmdbd"
    slurmdbd </dev/null >/dev/null 2>&1
fi
wait_for 60 slurmdbd sacctmgr -n list cluster

sacctmgr -i -Q add cluster "$CLUSTER" >/dev/null 2>&1 || true
sacctmgr -i -Q add account "$ACCOUNT" Cluster="$CLUSTER" Description=tests Organization=gpubench \
    >/dev/null 2>&1 || true
sacctmgr -i -Q add user root Account="$ACCOUNT" DefaultAccount="$ACCOUNT" Cluster="$CLUSTER" \
    >/dev/null 2>&1 || true
sacctmgr -n -s list user root format=account | grep -qw "$ACCOUNT" \
    || die "sacctmgr did not register account $ACCOUNT for root"

# A changed node or partition needs fresh daemons (scontrol reconfigure keeps old limits).
sum=$(cat /etc/slurm/slurm.conf /etc/slurm/gres.conf | sha256sum | cut -c1-16)
if [[ "$(cat "$STATE/conf.sum" 2>/dev/null)" != "$sum" ]]; then
    for d in slurmd slurmctld; do
        if [[ -s /run/slurm/$d.pid ]] && running $d; then
            say "configuration changed: stopping $d"
            kill "$(cat /run/slurm/$d.pid)" 2>/dev/null || true
            for _ in $(seq 30); do running $d || break; sleep 0.5; done
        fi
    done
    echo "$sum" > "$STATE/conf.sum"
fi
if ! running slurmctld; then
    say "starting slurmctld"
    slurmctld </dev/null >/dev/null 2>&1
fi
wait_for 60 slurmctld scontrol ping
# sacct reads the cluster's jobs from slurmdbd once slurmctld has registered there
wait_for 60 "sacct (accounting)" sacct -n -X -S now-1minutes

if ! running slurmd; then
    say "starting slurmd (node localhost)"
    slurmd -N localhost </dev/null >/dev/null 2>&1
fi
node_idle() {
    scontrol update NodeName=localhost State=RESUME >/dev/null 2>&1 || true
    sinfo -h -n localhost -o '%t' | grep -Eq '^(idle|mix|alloc)$'
}
wait_for 60 "node localhost (sinfo idle)" node_idle
# Jobs an earlier test session left behind (its driver killed, or the machine restarted:
# slurmctld requeues them from its saved state) hold the node's memory, and this
# session's jobs would wait for resources until their tests time out. This cluster and
# its account are the tests' own: end them all.
left=$(squeue -h -A "$ACCOUNT" -o %i | tr '\n' ' ')
if [[ -n "${left// }" ]]; then
    say "cancelling jobs an earlier test session left: $left"
    # shellcheck disable=SC2086
    scancel $left
    no_jobs_left() { [[ -z "$(squeue -h -A "$ACCOUNT" -o %i)" ]]; }
    wait_for 120 "the earlier session's jobs to end" no_jobs_left
fi
say "ready: $(sinfo -h -o '%P %D %t %G')"

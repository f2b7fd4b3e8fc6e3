#!/usr/bin/env bash
# A single-node SLURM cluster on this machine from Debian's packages: munge, slurmctld and
# slurmd, started directly (no systemd). Root on Debian 12; idempotent (a cluster that is
# already up is left as it is). Undo with tools/slurm-local/down.sh.
# No slurmdbd: the executor plugin reads job states with squeue (status_command: squeue),
# which sees finished jobs for MinJobAge seconds, set high below.
set -euo pipefail

CONF=/etc/slurm/slurm.conf
MARK="# written by themesim tools/slurm-local/up.sh"
PARTITION=${SLURM_LOCAL_PARTITION:-local}
TIMEOUT=${SLURM_LOCAL_TIMEOUT:-60}  # seconds to wait for the node to come up

[ "$(id -u)" -eq 0 ] || { echo "up.sh: run as root (it installs packages and starts daemons)" >&2; exit 1; }

up() {  # a node that answers and takes jobs (idle, or busy: mix, alloc, comp)
    sinfo -h -o '%t' 2>/dev/null | grep -qxE 'idle|mix|alloc|comp'
}

if command -v sinfo >/dev/null && up; then
    echo "up.sh: a SLURM node is already up; nothing to do"
    sinfo
    exit 0
fi

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
    || ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends munge slurmctld slurmd slurm-client \
        || { apt-get update -q && apt-get install -y -q --no-install-recommends \
            munge slurmctld slurmd slurm-client; }
fi

if [ -e "$CONF" ] && ! grep -qxF "$MARK" "$CONF"; then
    echo "up.sh: $CONF exists and was not written by this script; leaving it alone" >&2
    exit 1
fi

host=$(hostname -s)
# The node as slurmd sees it (CPUs, sockets, cores, threads, memory in MB).
node=$(slurmd -C | head -n 1 | sed "s/^NodeName=[^ ]*/NodeName=$host/")
mkdir -p /etc/slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm
chown slurm:slurm /var/lib/slurm/slurmctld /var/log/slurm
cat > "$CONF" <<CONF
$MARK
ClusterName=themesim-local
SlurmctldHost=$host
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# No cgroups: a container or VM without systemd may not delegate them.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# Finished jobs stay visible to squeue for an hour (the plugin's status check).
MinJobAge=3600
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
$node
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

# munge: one key per machine (the package's postinst creates it).
[ -s /etc/munge/munge.key ] || { mungekey --create --force 2>/dev/null || create-munge-key -f; }
mkdir -p /run/munge
chown munge:munge /run/munge
chmod 0755 /run/munge
if ! munge -n </dev/null >/dev/null 2>&1; then
    runuser -u munge -- /usr/sbin/munged
fi
for _ in $(seq 20); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.5; done
munge -n </dev/null | unmunge >/dev/null || { echo "up.sh: munged did not start" >&2; exit 1; }

[ -s /run/slurmctld.pid ] && kill -0 "$(cat /run/slurmctld.pid)" 2>/dev/null || slurmctld
[ -s /run/slurmd.pid ] && kill -0 "$(cat /run/slurmd.pid)" 2>/dev/null || slurmd

for _ in $(seq "$TIMEOUT"); do
    if up; then
        sinfo
        exit 0
    fi
    sleep 1
done
echo "up.sh: the node did not come up within ${TIMEOUT}s; see /var/log/slurm/*.log" >&2
sinfo -N -l >&2 || true
tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1

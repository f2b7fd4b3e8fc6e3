#!/usr/bin/env bash
# Stops the cluster tools/slurm-local/up.sh started and removes what it wrote: jobs are
# cancelled, slurmd, slurmctld and munged stopped (by their pid files), slurm.conf, the
# state and the logs deleted. `down.sh --purge` also removes the Debian packages.
set -uo pipefail

CONF=/etc/slurm/slurm.conf
MARK="# written by themesim tools/slurm-local/up.sh"

[ "$(id -u)" -eq 0 ] || { echo "down.sh: run as root" >&2; exit 1; }

if [ -e "$CONF" ] && ! grep -qxF "$MARK" "$CONF"; then
    echo "down.sh: $CONF was not written by up.sh; leaving this cluster alone" >&2
    exit 1
fi

stop() {  # stop <pidfile>: TERM the daemon, wait up to 10 s, then KILL it
    local pidfile=$1 pid
    [ -s "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    rm -f "$pidfile"
}

if [ -e "$CONF" ]; then
    scancel --full --quiet --user=root 2>/dev/null || true
    scancel --quiet --state=PENDING 2>/dev/null || true
    sleep 1
fi
stop /run/slurmd.pid
stop /run/slurmctld.pid
stop /run/munge/munged.pid

rm -f "$CONF"
rm -rf /var/lib/slurm/slurmctld/* /var/lib/slurm/slurmd/* /var/log/slurm/*.log
rm -rf /run/munge

if [ "${1:-}" = "--purge" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -q munge slurmctld slurmd slurm-client \
        slurm-wlm-basic-plugins libmunge2 >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get autoremove -y -q --purge >/dev/null
fi
echo "down.sh: SLURM stopped"

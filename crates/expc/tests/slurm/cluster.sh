#!/usr/bin/env bash
# A throw-away single-node Slurm (Debian's slurmctld, slurmd and munge) for
# the tests in slurm.rs, as root and without systemd:
#
#   cluster.sh up DIR CTLD_PORT SLURMD_PORT   # prints DIR/slurm.conf once the node is idle
#   cluster.sh down DIR                        # stops the daemons, removes DIR
#
# Pitfalls it avoids (each seen on this machine kind):
# - proctrack/cgroup (the default) drains the node here ("cgroup namespace
#   'freezer' not mounted"): proctrack/linuxproc and task/none instead;
# - munged refuses a socket whose directory, or a parent, lacks o+x;
# - slurmd does not create a `%n` spool directory: a plain one;
# - `sbatch --wait` polls slowly unless MinJobAge is small;
# - batch_sched_delay=0 and OverSubscribe=FORCE start every task at once;
# - NodeName must be `hostname -s`; NodeAddr=127.0.0.1 avoids DNS;
# - client commands need SLURM_CONF (the caller exports it).
set -euo pipefail

up() {
  local dir=$1 ctld=$2 slurmd_port=$3
  mkdir -p "$dir"/{munge,run,state,spool,log}
  chmod 755 "$dir"
  chmod 700 "$dir/munge"
  local host mem cpus
  host=$(hostname -s)
  mem=$(free -m | awk '/^Mem:/{print $2}')
  cpus=$(nproc)
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  cat > "$dir/slurm.conf" <<CONF
ClusterName=expc-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/run/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
MinJobAge=4
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
CONF
  export SLURM_CONF="$dir/slurm.conf"
  munged -F --key-file="$dir/munge/munge.key" --socket="$dir/run/munge.sock" \
    --pid-file="$dir/run/munged.pid" --seed-file="$dir/munge/seed" </dev/null >>"$dir/log/munged.log" 2>&1 &
  echo $! >> "$dir/pids"
  waitfor "munge -n -S '$dir/run/munge.sock'"
  # Every daemon's standard streams away from the caller's: a caller
  # reading this script's output would otherwise wait for them to end.
  slurmctld -D -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.out" 2>&1 &
  echo $! >> "$dir/pids"
  waitfor "scontrol ping | grep -q UP"
  slurmd -D -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmd.out" 2>&1 &
  echo $! >> "$dir/pids"
  waitfor "sinfo -h -N -o %t | grep -qx idle"
  echo "$SLURM_CONF"
}

# Polls a condition for up to 30 s.
waitfor() {
  local i
  for i in $(seq 300); do
    if eval "$1" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "timed out waiting for: $1" >&2
  tail -n 20 "$dir"/log/* >&2 || true
  return 1
}

down() {
  local dir=$1 pid
  if [ -f "$dir/pids" ]; then
    # Reverse start order: slurmd, slurmctld, munged.
    for pid in $(tac "$dir/pids"); do
      kill -TERM "$pid" 2>/dev/null || continue
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    done
  fi
  rm -rf "$dir"
}

case ${1:-} in
  up) shift; dir=$1; up "$@" ;;
  down) down "$2" ;;
  *) echo "usage: cluster.sh up DIR CTLD_PORT SLURMD_PORT | down DIR" >&2; exit 2 ;;
esac

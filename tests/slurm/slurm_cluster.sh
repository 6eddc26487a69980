#!/usr/bin/env bash
# tests/slurm/slurm_cluster.sh: a throw-away single-node Slurm cluster for the
# tests of scripts/slurm/ (docs/slurm.md). Everything lives in a temporary
# directory: a generated munge key and munged (run as the munge user), a
# slurm.conf with one node (this host, CPUs = nproc) on non-default ports, and
# slurmctld and slurmd started directly (no systemd). Teardown cancels the
# cluster's jobs and ends only the processes it started (from its pid files,
# and the job step daemons its slurmd left behind with their tasks), then
# removes the directory.
#
# usage: slurm_cluster.sh check|up|wait-idle|down DIR
#   check      exit 0 if a cluster can be brought up here, else 77 and why
#   up         bring a cluster up, wait until its node is idle; DIR (created)
#              then holds slurm.env, to be sourced by the clients (SLURM_CONF)
#   wait-idle  wait until the node of the cluster in DIR is idle
#   down       tear down the cluster in DIR (nothing to do if there is none)
# Environment: TCMINI_SLURM_WAIT, seconds to wait for the node [45];
# TCMINI_SLURM_TRIES, clusters up tries before it fails [2]. Every client call
# (sinfo, squeue, scancel) is bounded by `timeout`, so a controller that does
# not answer costs seconds, not the test's whole time limit.
# Exit status: 0 done, 77 Slurm or munge not installed or not root, 1 failure.
set -euo pipefail
# The daemons and mungekey are in sbin, which a CI runner's PATH may lack.
PATH=$PATH:/usr/sbin:/sbin

die() {
  echo "slurm_cluster.sh: error: $*" >&2
  exit 1
}

# Runs a Slurm client command, ended after 10 s (a controller that does not
# answer makes a client retry for longer than that).
client() {
  timeout 10 "$@"
}

note() {
  echo "slurm_cluster.sh: $*" >&2
}

# Exits 77 (the tests' skip status) when this machine cannot run the cluster.
check() {
  local missing=() program
  for program in slurmctld slurmd munged sbatch srun squeue sinfo scontrol scancel; do
    command -v "$program" >/dev/null || missing+=("$program")
  done
  if ((${#missing[@]})); then
    echo "slurm not installed: no ${missing[*]} (scripts/setup.sh --deps-only --with-slurm installs it)"
    exit 77
  fi
  if ! id munge >/dev/null 2>&1; then
    echo "slurm not installed: no 'munge' user (install the munge package)"
    exit 77
  fi
  if [[ $(id -u) != 0 ]]; then
    echo "slurm not usable: the throw-away cluster needs root (slurmd runs jobs as their user), running as $(id -un)"
    exit 77
  fi
}

# Prints a TCP port on 127.0.0.1 that nothing listens on, starting the search
# at a pseudo-random point of 20000-59999 and skipping the ports in $@.
free_port() {
  local port=$((20000 + RANDOM % 40000)) tries taken
  for ((tries = 0; tries < 200; tries++)); do
    taken=0
    [[ " $* " == *" $port "* ]] && taken=1
    if ((!taken)) && ! (: <"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
    port=$((port + 1))
  done
  die "no free TCP port found near $port"
}

# The cluster's directory, from DIR/slurm.env (empty if there is none).
cluster_of() {
  local env=$1/slurm.env
  [[ -r $env ]] || return 0
  sed -n 's/^export TCMINI_SLURM_CLUSTER=//p' "$env"
}

# True if process $1 exists and has not ended (a zombie has ended).
running() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

# Ends processes given as NAME:PID: sends TERM to each pid that is alive and
# whose command name is NAME (so never to a process that reused the number),
# waits up to 10 s for them to end, then sends KILL to the ones left.
stop_pids() {
  local item pid name i signalled=() alive=()
  for item in "$@"; do
    name=${item%%:*} pid=${item#*:}
    [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/comm && $(cat "/proc/$pid/comm") == "$name" ]] || continue
    kill -TERM "$pid" 2>/dev/null && signalled+=("$pid")
  done
  for ((i = 0; i < 100; i++)); do
    alive=()
    for pid in "${signalled[@]}"; do
      running "$pid" && alive+=("$pid")
    done
    ((${#alive[@]})) || return 0
    sleep 0.1
  done
  note "pid(s) ${alive[*]} did not end on TERM in 10 s; sending KILL"
  kill -KILL "${alive[@]}" 2>/dev/null || true
}

# Pids of the slurmstepd processes that hold a file under the cluster directory
# $1 (the step daemons of its slurmd; those of another cluster hold none).
step_daemons_of() {
  local proc pid fd
  for proc in /proc/[0-9]*; do
    pid=${proc#/proc/}
    [[ $(cat "$proc/comm" 2>/dev/null) == slurmstepd ]] || continue
    for fd in "$proc"/fd/*; do
      if [[ $(readlink "$fd" 2>/dev/null) == "$1"/* ]]; then
        echo "$pid"
        break
      fi
    done
  done
}

# NAME:PID of every descendant of process $1 (children, theirs, ...).
descendants_of() {
  local proc stat parents=("$1") parent pid
  declare -A children=()
  for proc in /proc/[0-9]*; do
    stat=$(cat "$proc/stat" 2>/dev/null) || continue
    stat=${stat##*) }
    read -r _ parent _ <<<"$stat"
    children[$parent]+=" ${proc#/proc/}"
  done
  while ((${#parents[@]})); do
    parent=${parents[0]}
    parents=("${parents[@]:1}")
    for pid in ${children[$parent]:-}; do
      echo "$(cat "/proc/$pid/comm" 2>/dev/null):$pid"
      parents+=("$pid")
    done
  done
}

down() {
  local state=$1 cluster pid i tasks
  cluster=$(cluster_of "$state")
  if [[ -z $cluster ]]; then
    rm -rf "$state"
    return 0
  fi
  if [[ -d $cluster ]]; then
    export SLURM_CONF=$cluster/slurm.conf
    # Cancel the cluster's jobs first, so that slurmd ends their steps.
    if [[ -r $cluster/run/slurmctld.pid ]] && client scancel --full --quiet --user=root 2>/dev/null; then
      for ((i = 0; i < 50; i++)); do
        [[ -z $(client squeue -h -o %i 2>/dev/null) ]] && break
        sleep 0.2
      done
    fi
    stop_pids "slurmd:$(cat "$cluster/run/slurmd.pid" 2>/dev/null)" \
      "slurmctld:$(cat "$cluster/run/slurmctld.pid" 2>/dev/null)"
    # Step daemons left behind by a slurmd that died: they do not end on TERM;
    # their tasks are ended first, on TERM (tcmini stops cleanly on it).
    for pid in $(step_daemons_of "$cluster"); do
      mapfile -t tasks < <(descendants_of "$pid")
      note "ending a job step daemon left behind (pid $pid) and its ${#tasks[@]} processes"
      ((${#tasks[@]})) && stop_pids "${tasks[@]}"
      kill -KILL "$pid" 2>/dev/null || true
    done
    stop_pids "munged:$(cat "$cluster/munge/munged.pid" 2>/dev/null)"
    rm -rf "$cluster"
  fi
  rm -rf "$state"
}

# Prints the state of the node (idle, mixed, allocated, down*, ...).
node_state() {
  client sinfo -h -n "$node" -o %T 2>/dev/null | head -n 1
}

# True if the daemon $1 (slurmctld, slurmd) of the cluster $cluster has ended,
# or has written no pid file $2 s after it was started: a daemon forks before
# it reads its configuration and opens its port, so starting without an error
# does not mean that it is still there.
daemon_gone() {
  local pid
  if ! pid=$(cat "$cluster/run/$1.pid" 2>/dev/null); then
    (($2 > 10))
    return
  fi
  ! { [[ $pid =~ ^[0-9]+$ ]] && running "$pid"; }
}

# Prints the last lines of the cluster's logs.
show_logs() {
  local log
  for log in "$cluster"/log/*.log "$cluster"/munge/munged.log; do
    [[ -r $log ]] || continue
    note "last lines of $log:"
    tail -n 15 "$log" >&2 || true
  done
}

wait_idle() {
  local state=$1 limit=${TCMINI_SLURM_WAIT:-45} start=$SECONDS deadline now="" daemon
  cluster=$(cluster_of "$state")
  [[ -n $cluster && -r $cluster/slurm.conf ]] || die "no cluster in '$state' (run: $0 up $state)"
  export SLURM_CONF=$cluster/slurm.conf
  node=$(sed -n 's/^NodeName=\([^ ]*\) .*/\1/p' "$SLURM_CONF")
  deadline=$((SECONDS + limit))
  while ((SECONDS < deadline)); do
    now=$(node_state)
    [[ $now == idle ]] && return 0
    for daemon in slurmctld slurmd; do
      if daemon_gone "$daemon" $((SECONDS - start)); then
        note "$daemon of the test cluster is not running (node '${now:-not known to sinfo}')"
        show_logs
        return 1
      fi
    done
    sleep 0.2
  done
  note "node $node is '${now:-not known to sinfo}' after ${limit} s, not idle"
  show_logs
  return 1
}

# The EXIT trap of up: tears the cluster down unless up succeeded.
down_on_failure() {
  local status=$?
  ((status == 0)) || down "$up_state"
  exit "$status"
}

# One try of up (run in a subshell: its failure tears down what it started).
up_once() {
  local state=$1 ctld_port slurmd_port cpus host
  if [[ -n $(cluster_of "$state") ]]; then
    note "tearing down the cluster left in $state by an earlier run"
    down "$state"
  fi
  mkdir -p "$state"
  state=$(cd "$state" && pwd)
  # A short path: Unix socket names are limited to about 100 characters.
  cluster=$(mktemp -d "${TMPDIR:-/tmp}/tcmini-slurm.XXXXXX")
  chmod 755 "$cluster"
  echo "export TCMINI_SLURM_CLUSTER=$cluster" >"$state/slurm.env"
  echo "export SLURM_CONF=$cluster/slurm.conf" >>"$state/slurm.env"
  # From here on a failure tears down what was started.
  up_state=$state
  trap down_on_failure EXIT
  mkdir -p "$cluster"/{munge,state,spool,log,run,pmix}
  # munged wants its socket's directory searchable by all (the key is 0600).
  chown munge:munge "$cluster/munge"
  chmod 755 "$cluster/munge"

  # munge before 0.5.14 has no mungekey: 1 KiB from /dev/urandom is such a key.
  if command -v mungekey >/dev/null; then
    runuser -u munge -- mungekey --create --keyfile="$cluster/munge/munge.key" ||
      die "mungekey could not create a key"
  else
    runuser -u munge -- sh -c "umask 077 && head -c 1024 /dev/urandom >'$cluster/munge/munge.key'" ||
      die "could not write a munge key"
  fi
  runuser -u munge -- munged --socket="$cluster/munge/munge.socket" \
    --key-file="$cluster/munge/munge.key" --pid-file="$cluster/munge/munged.pid" \
    --log-file="$cluster/munge/munged.log" --seed-file="$cluster/munge/munged.seed" \
    </dev/null >>"$cluster/log/start.log" 2>&1 || {
    tail -n 20 "$cluster/munge/munged.log" >&2 || true
    die "munged did not start (log above)"
  }
  note "munged started (${SECONDS} s)"

  host=$(hostname -s)
  cpus=$(nproc)
  ctld_port=$(free_port)
  slurmd_port=$(free_port "$ctld_port")
  cat >"$cluster/slurm.conf" <<END
# slurm.conf of the throw-away test cluster (tests/slurm/slurm_cluster.sh)
ClusterName=tcmini-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$cluster/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/run/slurmctld.pid
SlurmdPidFile=$cluster/run/slurmd.pid
SlurmctldLogFile=$cluster/log/slurmctld.log
SlurmdLogFile=$cluster/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
SwitchType=switch/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=600
KillWait=5
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
END
  # srun --mpi=pmix: the steps' PMIx directories in the cluster's directory,
  # not /tmp/spmix_appdir_UID_JOB.STEP, where a step killed in an earlier
  # cluster (whose job ids also started at 1) leaves one that fails the launch.
  echo "PMIxCliTmpDirBase=$cluster/pmix" >"$cluster/mpi.conf"
  export SLURM_CONF=$cluster/slurm.conf
  slurmctld -f "$SLURM_CONF" </dev/null >>"$cluster/log/start.log" 2>&1 ||
    die "slurmctld did not start: $(tail -n 5 "$cluster/log/slurmctld.log" "$cluster/log/start.log" 2>&1)"
  slurmd -f "$SLURM_CONF" </dev/null >>"$cluster/log/start.log" 2>&1 ||
    die "slurmd did not start: $(tail -n 5 "$cluster/log/slurmd.log" "$cluster/log/start.log" 2>&1)"
  note "slurmctld and slurmd started on ports $ctld_port/$slurmd_port (${SECONDS} s); waiting for the node"
  wait_idle "$state" || die "the test cluster's node did not become idle (logs above)"
  trap - EXIT
  note "cluster up in $cluster (node $host, $cpus CPUs, ports $ctld_port/$slurmd_port, ${SECONDS} s); source $state/slurm.env"
}

# Brings a cluster up; a try that fails (a daemon that exits, a node that does
# not become idle) is torn down and followed by one on new ports and a new
# directory, up to TCMINI_SLURM_TRIES tries.
up() {
  local state=$1 tries=${TCMINI_SLURM_TRIES:-2} try
  check
  for ((try = 1; try <= tries; try++)); do
    (up_once "$state") && return 0
    ((try < tries)) && note "try $try of $tries failed; a new cluster on other ports follows"
  done
  die "the test cluster did not come up in $tries tries (logs above)"
}

action=${1:-}
state=${2:-}
case "$action" in
  check)
    check
    ;;
  up | wait-idle | down)
    [[ -n $state ]] || die "usage: $0 $action DIR"
    case "$action" in
      up) up "$state" ;;
      wait-idle) wait_idle "$state" ;;
      down) down "$state" ;;
    esac
    ;;
  *) die "usage: $0 check|up|wait-idle|down DIR" ;;
esac

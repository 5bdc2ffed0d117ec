#!/usr/bin/env bash
# Runs docs/scale/liveness-array.sbatch on a real, throwaway single-node Slurm cluster:
# munged with a key made here, slurmctld and slurmd on 127.0.0.1 on free ports, every file
# (config, key, sockets, state, spool, logs) under one temporary folder that is removed at the
# end. No system path is changed and no system service is used.
#
#   Tools/slurm-test.sh LIVENESS OUTPUT INPUT...
#
# It submits a 4-task array numbered 1-4 (so --shard auto must mind SLURM_ARRAY_TASK_MIN),
# two tasks at a time, waits for it, then requeues task 3 and waits again (a rerun must take
# the same share). Left in OUTPUT for the caller to check (SlurmArrayTests does):
#   shards/task-<id>.jsonl       the reports of each task (from the rerun, for task 3)
#   first-run/task-3.jsonl       task 3's reports from its first run
#   logs/liveness-<job>_<id>.log each task's standard error (both runs of task 3)
#   jobs.txt                     `scontrol show job -o` of every task after the last run
#
# Exit status: 0 when the array ran to the end (whatever its tasks' exit codes, which jobs.txt
# holds); 77 when Slurm cannot be started here (not installed, or a daemon does not come up:
# the reason and the daemon's log on standard error); 1 on any other failure. Every wait has a
# deadline; the daemons are stopped and the folder removed however the script ends.
set -euo pipefail

if [ $# -lt 3 ]; then
  echo "usage: Tools/slurm-test.sh LIVENESS OUTPUT INPUT..." >&2
  exit 1
fi
liveness=$(realpath "$1")
output=$(realpath -m "$2")
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
script="$root/docs/scale/liveness-array.sbatch"

cannot_start() {  # exit 77: Slurm cannot run on this machine
  echo "slurm-test: SKIP: $*" >&2
  exit 77
}
fail() {
  echo "slurm-test: FAIL: $*" >&2
  exit 1
}

for tool in munged mungekey slurmctld slurmd sbatch squeue scontrol scancel; do
  command -v "$tool" >/dev/null || cannot_start "$tool is not installed (Tools/setup.sh --test installs slurm-wlm and munge)"
done
[ -x "$liveness" ] || fail "$liveness is not an executable"
[ -r "$script" ] || fail "$script is missing"

# munged insists that the socket's folder and all above it be reachable by everyone and
# writable by no one else: a 0755 folder under the sticky /tmp.
tmp=$(mktemp -d /tmp/liveness-slurm.XXXXXX)
chmod 755 "$tmp"
mkdir -m 700 "$tmp/munge"
mkdir -m 755 "$tmp/run"
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/log"
export SLURM_CONF="$tmp/slurm.conf"

pid_of() { [ -s "$1" ] && cat "$1" || true; }
stop_pid() {  # stop_pid PID: TERM, then KILL after 10 s
  local pid=$1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [ -s "$tmp/run/slurmctld.pid" ]; then
    # Cancel whatever still runs so that no job outlives its slurmd, then stop the daemons.
    timeout 10 scancel --quiet --full "${job:-0}" 2>/dev/null || true
    for _ in $(seq 1 50); do
      [ -z "$(timeout 5 squeue -h 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  stop_pid "$(pid_of "$tmp/run/slurmd.pid")"
  stop_pid "$(pid_of "$tmp/run/slurmctld.pid")"
  stop_pid "$(pid_of "$tmp/run/munged.pid")"
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 143' INT TERM

daemon_failed() {  # daemon_failed NAME: a daemon did not come up; its own words decide skip or fail
  local name=$1
  cat "$tmp/log/$name.err" >&2 2>/dev/null || true
  show_log "$tmp/log/$name.log"
  # A configuration this script wrote and the daemon rejects is this script's bug, not the machine's.
  if grep -qiE "parsing error|unable to process configuration|invalid (option|value)" "$tmp/log/$name.err" "$tmp/log/$name.log" 2>/dev/null; then
    fail "$name rejected the configuration written by this script"
  fi
  cannot_start "$name did not start"
}
show_log() {  # the end of a daemon's log, on standard error
  [ -s "$1" ] && { echo "--- $1" >&2; tail -n 20 "$1" >&2; } || true
}

# munge: a key of our own, a socket under the temporary folder.
mungekey --create --keyfile="$tmp/munge/munge.key" >/dev/null 2>&1 \
  || dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$tmp/munge/munge.key"
if ! timeout 20 munged --key-file="$tmp/munge/munge.key" --socket="$tmp/run/munge.socket" \
    --pid-file="$tmp/run/munged.pid" --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/munged.seed" 2>"$tmp/log/munged.err"; then
  cat "$tmp/log/munged.err" >&2
  show_log "$tmp/log/munged.log"
  cannot_start "munged did not start"
fi
timeout 10 munge -S "$tmp/run/munge.socket" -n </dev/null | timeout 10 unmunge -S "$tmp/run/munge.socket" >/dev/null \
  || { show_log "$tmp/log/munged.log"; cannot_start "munged does not answer on its socket"; }

# Two free TCP ports on the loopback interface.
read -r ctld_port slurmd_port < <(/usr/bin/python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
cpus=2
# The script asks for memory (--mem): the node offers 90% of this machine's.
memory=$(awk '/^MemTotal:/ { print int($2 / 1024 * 0.9) }' /proc/meminfo)
cat > "$SLURM_CONF" <<EOF
# A throwaway single-node cluster made by Tools/slurm-test.sh.
ClusterName=liveness-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$tmp/run/munge.socket
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: processes are tracked through /proc, tasks are not confined.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=30 State=UP
EOF

timeout 20 slurmctld -f "$SLURM_CONF" 2>"$tmp/log/slurmctld.err" || daemon_failed slurmctld
up=""
for _ in $(seq 1 100); do
  if timeout 5 scontrol ping 2>/dev/null | grep -q "is UP"; then up=1; break; fi
  sleep 0.2
done
[ -n "$up" ] || { show_log "$tmp/log/slurmctld.log"; cannot_start "slurmctld does not answer within 20 s"; }

timeout 20 slurmd -f "$SLURM_CONF" -N "$host" 2>"$tmp/log/slurmd.err" || daemon_failed slurmd
idle=""
for _ in $(seq 1 150); do
  state=$(timeout 5 sinfo -h -n "$host" -o %T 2>/dev/null || true)
  if [ "$state" = idle ]; then idle=1; break; fi
  sleep 0.2
done
[ -n "$idle" ] || { show_log "$tmp/log/slurmd.log"; show_log "$tmp/log/slurmctld.log"; cannot_start "node $host is not idle within 30 s (state '${state:-?}')"; }
echo "slurm-test: cluster up: slurmctld on 127.0.0.1:$ctld_port, slurmd on :$slurmd_port, node $host with $cpus CPUs" >&2

# From here on a problem is a failure, not a skip.
wait_for_job() {  # wait_for_job SECONDS: until no task of $job is pending or running
  local deadline=$((SECONDS + $1))
  while [ $SECONDS -lt $deadline ]; do
    [ -z "$(timeout 10 squeue -h -j "$job" 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  timeout 10 squeue -j "$job" >&2 || true
  show_log "$tmp/log/slurmctld.log"
  show_log "$tmp/log/slurmd.log"
  fail "array job $job did not finish within $1 s"
}

if [ -e "$output" ] && [ -n "$(ls -A "$output")" ]; then fail "$output is not empty"; fi
mkdir -p "$output/logs" "$output/first-run"
job=$(cd "$output" && LIVENESS="$liveness" timeout 20 sbatch --parsable --array=1-4 --cpus-per-task=1 --time=10 \
  --open-mode=append --output="$output/logs/liveness-%A_%a.log" "$script" "$output" "$@") \
  || fail "sbatch refused the job"
job=${job%%;*}
echo "slurm-test: submitted array job $job (tasks 1-4)" >&2
wait_for_job 300

# A task run again (requeued: same job, same array variables) must take the same share and,
# finding its reports complete, leave them as they are.
[ -s "$output/shards/task-3.jsonl" ] || fail "task 3 wrote no reports"
cp "$output/shards/task-3.jsonl" "$output/first-run/task-3.jsonl"
requeue_task_3() {
  timeout 10 scontrol requeue "${job}_3" || fail "scontrol requeue ${job}_3 failed"
  # A requeued job waits two minutes before it is eligible again; make it eligible now.
  timeout 10 scontrol update jobid="${job}_3" StartTime=now || fail "could not release the requeued task"
}
shard_lines() { cat "$output"/logs/*_3.log 2>/dev/null | grep -c '^shard ' || true; }
# Right after the array ends, slurmd may still be cleaning up task 3's first run, and a rerun
# launched then fails before its script starts (FAILED, exit code 1, run time 0, nothing in its
# log; measured: 1 run in 3). Such a launch is requeued again, up to 5 times.
sleep 1
requeue_task_3
launches=1
# squeue may not list the requeued task for a moment: wait until its second run has started
# (its log, appended to, has a second shard line), then until the job is done.
deadline=$((SECONDS + 120))
until [ "$(shard_lines)" -ge 2 ]; do
  [ $SECONDS -lt $deadline ] || { timeout 10 scontrol show job -o "${job}_3" >&2 || true; fail "the requeued task 3 did not run again within 120 s"; }
  state=$(timeout 10 scontrol show job -o "${job}_3" 2>/dev/null | grep -o 'JobState=[A-Z_]*' || true)
  if [ "$state" = "JobState=FAILED" ] && [ "$(shard_lines)" -lt 2 ] && [ $launches -lt 5 ]; then
    echo "slurm-test: the requeued task 3 failed to launch ($state); requeueing it again" >&2
    sleep 1
    requeue_task_3
    launches=$((launches + 1))
  fi
  sleep 0.5
done
wait_for_job 120

timeout 10 scontrol show job -o "$job" > "$output/jobs.txt" || fail "scontrol show job $job failed"
echo "slurm-test: array job $job done" >&2

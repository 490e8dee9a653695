#!/bin/bash
# The SLURM job-array example on a real one-node cluster on localhost:
# installs Debian's slurmctld, slurmd and munge when missing (as root), starts
# munged, slurmctld and slurmd with a private configuration, submits
# examples/slurm/predict_array.sh as a 3-task array over three 4-frame videos
# (made with sleapc render from a clip in the shared data), waits (bounded),
# and checks each output equals a one-by-one `sleapc predict` run.
# Exits 77 (skipped) with the reason when the daemons cannot be installed or
# started here.
#   run_slurm_test.sh SLEAPC_BINARY SOURCE_DIR DATA_DIR
set -uo pipefail

sleapc=$1
src=$2
data=${SLEAPC_DATA_DIR:-$3}
video=$data/sleap-nn-assets/datasets/small_robot.mp4
model=$data/sleap-nn-assets/model_ckpts/minimal_instance_single_instance

skip() {
    echo "SKIPPED: $*"
    exit 77
}
fail() {
    echo "FAILED: $*"
    [ -n "${work:-}" ] && for f in "$work"/*.log "$work"/out/*.log; do
        [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }
    done
    exit 1
}

[ -f "$video" ] && [ -d "$model" ] || skip "shared data not found in $data"

if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
    [ "$(id -u)" = 0 ] || skip "slurmctld/slurmd/munge are not installed and this is not root"
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y --no-install-recommends \
        slurmctld slurmd slurm-client munge >/dev/null 2>&1 ||
        skip "cannot install slurmctld, slurmd, slurm-client and munge with apt-get"
fi

work=$(mktemp -d /tmp/sleapc-slurm-XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    sleep 1
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

# munge: a private key and socket, so a system munged is not disturbed.
mkdir -p "$work/munge" && chmod 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --key-file="$work/munge/munge.key" --socket="$work/munge/socket" \
    --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" \
    --seed-file="$work/munge/seed" --force -F >/dev/null 2>&1 &
pids+=($!)

cpus=$(nproc)
mem=$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)
cat >"$work/slurm.conf" <<EOF
ClusterName=sleapctest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
NodeName=localhost CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=10 State=UP
EOF
mkdir -p "$work/state" "$work/spool" "$work/out" "$work/vids" "$work/one"
export SLURM_CONF=$work/slurm.conf

slurmctld -D -f "$SLURM_CONF" >"$work/slurmctld.stdout.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N localhost >"$work/slurmd.stdout.log" 2>&1 &
pids+=($!)

# The node comes up idle within seconds, or the daemons cannot run here
# (containers without the privileges slurmd wants).
up=0
for _ in $(seq 1 30); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -q '^idle'; then
        up=1
        break
    fi
    sleep 1
done
if [ $up = 0 ]; then
    for f in "$work"/slurmd.log "$work"/slurmctld.log; do
        [ -f "$f" ] && { echo "--- $f"; tail -5 "$f"; }
    done
    skip "the SLURM daemons did not start here (see the logs above)"
fi

# Three short videos, made with sleapc: render with no poses to draw writes
# the frames as they are (FFV1, lossless).
cat >"$work/empty.json" <<EOF
{"format": "sleapc-predictions", "version": 1,
 "skeleton": {"name": "none", "nodes": ["a"], "edges": [], "symmetries": []},
 "videos": [{"filename": "$video", "frames": 0, "height": 0, "width": 0, "channels": 0}],
 "tracks": [], "frames": []}
EOF
for i in 0 1 2; do
    "$sleapc" render "$work/empty.json" -i "$video" -o "$work/vids/clip$i.mkv" \
        --frames "$((i * 20))-$((i * 20 + 3))" -q || fail "cannot make clip$i.mkv"
done

job=$(SLEAPC=$sleapc sbatch --parsable --array=0-2 --cpus-per-task=1 --time=5 \
    --output="$work/out/task-%a.log" "$src/examples/slurm/predict_array.sh" \
    "$work/vids" "$work/out" -m "$model" --output_format json -q) || fail "sbatch refused the job"

done_=0
for _ in $(seq 1 240); do
    if [ -z "$(squeue -h -j "$job" 2>/dev/null)" ]; then
        done_=1
        break
    fi
    sleep 1
done
[ $done_ = 1 ] || fail "the array job $job did not finish within 4 minutes"

for i in 0 1 2; do
    "$sleapc" predict -m "$model" -i "$work/vids/clip$i.mkv" -o "$work/one/clip$i.mkv.json" -q ||
        fail "one-by-one run on clip$i.mkv failed"
    [ -f "$work/out/clip$i.mkv.json" ] || fail "the array wrote no clip$i.mkv.json"
    cmp -s "$work/out/clip$i.mkv.json" "$work/one/clip$i.mkv.json" ||
        fail "clip$i.mkv.json from the array differs from a one-by-one run"
done
for i in 0 1 2; do
    grep -q "4 frames" "$work/out/task-$i.log" || fail "task $i printed no summary"
done
echo "PASSED: 3 array tasks on a one-node SLURM cluster equal one-by-one runs"
exit 0

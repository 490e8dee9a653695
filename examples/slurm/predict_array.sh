#!/bin/bash
# Predict many videos on a SLURM cluster: one array task per shard, each runs
# `sleapc predict --shard K/N` on its share of the videos (every N-th one,
# the same split every time), writing one output per video into OUT_DIR.
#
#   sbatch --array=0-3 examples/slurm/predict_array.sh VIDEOS OUT_DIR \
#          -m models/centroid -m models/centered_instance [sleapc predict options]
#
# VIDEOS: a folder of videos, a .txt file listing them, or one video (then the
# tasks split its frames into N ranges, each written to
# OUT_DIR/VIDEO.shard-K-of-N.slp; join them when all are done with
#   sleapc merge VIDEO.slp OUT_DIR/VIDEO.shard-*-of-N.slp [--tracking ...]
# which tracks over the joined frames). The exit status of a task is non-zero
# when any of its videos failed; its log names them.
# Set SLEAPC to the sleapc binary when it is not on PATH.
#SBATCH --job-name=sleapc-predict
#SBATCH --cpus-per-task=8
#SBATCH --mem=8G
#SBATCH --time=12:00:00
#SBATCH --output=sleapc-predict-%A_%a.log
set -euo pipefail

if [ $# -lt 2 ]; then
    echo "usage: sbatch --array=0-(N-1) $0 VIDEOS OUT_DIR -m MODEL_DIR [options]" >&2
    exit 2
fi
videos=$1
out_dir=$2
shift 2

# Task K of N, whatever the array's first index is.
first=${SLURM_ARRAY_TASK_MIN:-0}
k=$(( ${SLURM_ARRAY_TASK_ID:-0} - first ))
n=${SLURM_ARRAY_TASK_COUNT:-1}

threads=()
if [ -n "${SLURM_CPUS_PER_TASK:-}" ]; then
    threads=(--threads "$SLURM_CPUS_PER_TASK")
fi

mkdir -p "$out_dir"
exec "${SLEAPC:-sleapc}" predict -i "$videos" --output_dir "$out_dir" --shard "$k/$n" \
    "${threads[@]}" "$@"

#!/bin/sh
# What "auto" costs a whole `sleapc predict` run against `--backend native`:
# wall time of the command and its CPU time (user + system, which a machine
# loaded by others inflates less), runs interleaved (native, auto on an empty
# cache, auto on a full cache), medians of R rounds.
#
#   bench/auto_overhead.sh SLEAPC MODEL_DIR VIDEO [FRAMES] [ROUNDS]
#
# FRAMES: a --frames range (default 0-199), ROUNDS default 5. Prints each
# round's times, then the medians and auto / native. A first run measures as
# much as the run can repay; to see a cached run that follows a full
# measurement, the cache is filled once with SLEAPC_AUTO_MEASURE=full before
# the rounds ("cached" below), while "first" starts each round empty.
set -eu
cli=$1 model=$2 video=$3 frames=${4:-0-199} rounds=${5:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset SLEAPC_BACKEND SLEAPC_NO_CACHE SLEAPC_AUTO_MEASURE || true

now() { date +%s.%N; }
# User + system seconds of this shell's finished children, from a file the
# shell's own `times` wrote (its 2nd line; a command substitution would ask
# a subshell, which has no children).
cpu() { awk 'NR == 2 {
    n = split($0, f, " "); s = 0
    for (i = 1; i <= n; i++) { split(f[i], ms, "m"); s += ms[1] * 60 + ms[2] }
    print s }' "$1"; }
run() { # backend, cache folder -> "wall cpu" seconds
    times >"$tmp/c0"; t0=$(now)
    SLEAPC_CACHE_DIR=$2 "$cli" predict -m "$model" -i "$video" --frames "$frames" \
        --backend "$1" -o "$tmp/out.slp" --quiet >/dev/null 2>"$tmp/err" ||
        { cat "$tmp/err" >&2; exit 1; }
    t1=$(now); times >"$tmp/c1"; c0=$(cpu "$tmp/c0"); c1=$(cpu "$tmp/c1")
    awk -v a="$t0" -v b="$t1" -v c="$c0" -v d="$c1" 'BEGIN {print b - a, d - c}'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

SLEAPC_AUTO_MEASURE=full SLEAPC_CACHE_DIR=$tmp/full "$cli" predict -m "$model" -i "$video" \
    --frames 0-3 -o "$tmp/warm.slp" 2>&1 | grep "backend auto" || true
: >"$tmp/runs"
for r in $(seq "$rounds"); do
    rm -rf "$tmp/empty"
    n=$(run native "$tmp/empty"); f=$(run auto "$tmp/empty"); c=$(run auto "$tmp/full")
    echo "$r $n $f $c" >>"$tmp/runs"
    echo "$r $n $f $c" | awk '{printf "round %d: native %.2f s (cpu %.2f), auto first %.2f s (cpu %.2f), auto cached %.2f s (cpu %.2f)\n", $1, $2, $3, $4, $5, $6, $7}'
done
col() { awk -v k="$1" '{print $k}' "$tmp/runs" | median; }
awk -v n="$(col 2)" -v f="$(col 4)" -v c="$(col 6)" -v N="$(col 3)" -v F="$(col 5)" -v C="$(col 7)" 'BEGIN {
    printf "median wall: native %.2f s, auto first %.2f s (%.3fx), auto cached %.2f s (%.3fx)\n",
        n, f, f / n, c, c / n
    printf "median cpu:  native %.2f s, auto first %.2f s (%.3fx), auto cached %.2f s (%.3fx)\n",
        N, F, F / N, C, C / N }'

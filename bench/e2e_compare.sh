#!/bin/sh
# End-to-end frames per second of two `sleapc` binaries (or two --conv
# settings of one) on a whole video: `sleapc predict` from the video file to
# the .slp written, wall time, runs interleaved (A, B, A, B, ...) so a host
# that slows down for a while slows both; medians of R rounds.
#
#   bench/e2e_compare.sh "CLI_A [ARGS]" "CLI_B [ARGS]" VIDEO ROUNDS -m MODEL [-m MODEL]
#
# CLI_A / CLI_B: a binary and any extra predict flags (e.g. "build/sleapc
# --conv direct"), split on spaces. Each binary first runs the video once
# untimed with its own empty auto cache, which it keeps, as a user's later
# runs do. Prints each round, then the median FPS of each and B / A.
set -eu
a=$1 b=$2 video=$3 rounds=$4
shift 4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset SLEAPC_BACKEND SLEAPC_NO_CACHE SLEAPC_AUTO_MEASURE || true
mkdir "$tmp/cache_a" "$tmp/cache_b"

now() { date +%s.%N; }
frames() { # the frames an .slp holds, from the predict log's summary line
    grep -o '[0-9][0-9]* frames' "$1" | tail -n 1 | awk '{print $1}'
}
run() { # "cli args", cache folder, log, model flags... -> wall seconds
    cli=$1 cache=$2 log=$3
    shift 3
    rm -f "$tmp/out.slp"
    t0=$(now)
    # shellcheck disable=SC2086 # the binary and its flags, split on purpose
    SLEAPC_CACHE_DIR=$cache $cli predict "$@" -i "$video" -o "$tmp/out.slp" --quiet >"$log" 2>&1 ||
        { cat "$log" >&2; exit 1; }
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

run "$a" "$tmp/cache_a" "$tmp/log_a" "$@" >/dev/null
run "$b" "$tmp/cache_b" "$tmp/log_b" "$@" >/dev/null
n=$(frames "$tmp/log_b")
[ -n "$n" ] || { echo "e2e_compare: no frame count in the predict log" >&2; exit 1; }
: >"$tmp/runs"
for r in $(seq "$rounds"); do
    ta=$(run "$a" "$tmp/cache_a" "$tmp/log_a" "$@")
    tb=$(run "$b" "$tmp/cache_b" "$tmp/log_b" "$@")
    echo "$ta $tb" >>"$tmp/runs"
    awk -v r="$r" -v a="$ta" -v b="$tb" -v n="$n" \
        'BEGIN {printf "round %d: A %.2f s (%.1f FPS), B %.2f s (%.1f FPS)\n", r, a, n / a, b, n / b}'
done
ma=$(awk '{print $1}' "$tmp/runs" | median)
mb=$(awk '{print $2}' "$tmp/runs" | median)
awk -v a="$ma" -v b="$mb" -v n="$n" 'BEGIN {
    printf "%d frames, median of the rounds: A %.1f FPS, B %.1f FPS, B / A %.3f\n",
        n, n / a, n / b, a / b }'

#!/bin/sh
# One fuzzing campaign: each named target (default: all) for RUNS executions
# (default 1000000) or MAX_TIME seconds, whichever ends first, one process at
# a time, at low priority. Run from the
# source tree after building the fuzz targets:
#   CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLEAPC_BUILD_FUZZERS=ON
#   cmake --build build-fuzz --target fuzz_npy_read ...
#   tests/fuzz/run_campaign.sh [build-fuzz] [target ...]
# New inputs go to BUILD/fuzz-campaign/<name>/corpus (the committed corpus
# under tests/fuzz/corpus/ is read, not written), findings to
# BUILD/fuzz-campaign/<name>/ (crash-*, leak-*, timeout-*, oom-*), the log
# with libFuzzer's final statistics to BUILD/fuzz-campaign/<name>.log.
# Scratch files of the HDF5 targets go to $TMPDIR (/dev/shm when unset and
# present: a RAM disk is several times faster).
set -u
build=${1:-build-fuzz}
[ $# -gt 0 ] && shift
runs=${RUNS:-1000000}
max_time=${MAX_TIME:-0}
src=$(cd "$(dirname "$0")/../.." && pwd)
targets=${*:-"fuzz_npy_read fuzz_config_json fuzz_config_yaml fuzz_cli_args fuzz_ckpt_read
  fuzz_keras_h5 fuzz_slp_read"}
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ]; then
    TMPDIR=/dev/shm
    export TMPDIR
fi
status=0
for t in $targets; do
    name=${t#fuzz_}
    case $name in
    npy_read) corpus=npy ;;
    ckpt_read) corpus=ckpt ;;
    slp_read) corpus=slp ;;
    *) corpus=$name ;;
    esac
    # The command-line target prints an error line per input: silenced,
    # libFuzzer's and the sanitizers' reports kept.
    quiet=
    [ "$name" = cli_args ] && quiet=-close_fd_mask=3
    out=$build/fuzz-campaign/$name
    mkdir -p "$out/corpus"
    start=$(date +%s)
    nice -n 10 "$build/$t" -runs="$runs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 $quiet \
        -max_total_time="$max_time" \
        -artifact_prefix="$out/" "$out/corpus" "$src/tests/fuzz/corpus/$corpus" \
        >"$build/fuzz-campaign/$name.log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz-campaign/$name.log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$build/fuzz-campaign/$name.log")
    echo "$t: exit $rc, ${execs:-?} executions in ${secs}s (${rate:-?}/s)"
    [ $rc -eq 0 ] || status=1
done
exit $status

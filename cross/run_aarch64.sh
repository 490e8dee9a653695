#!/bin/sh
# Cross-builds the aarch64 part of sleapc (cross/CMakeLists.txt) and runs its
# tests under qemu-aarch64. Exit 77 (skipped) with a message when the cross
# compiler, qemu-user or the arm64 libraries are missing (Makefile's
# DEB_PACKAGES installs them).
#   run_aarch64.sh SOURCE_DIR BUILD_DIR [DATA_DIR]
# ($SLEAPC_DATA_DIR, when set, wins over DATA_DIR, as for the other tests.)
set -eu
src=$1
build=$2
data=${SLEAPC_DATA_DIR:-${3:-$src/../shared/data}}

missing=""
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing="$missing gcc-aarch64-linux-gnu"
command -v qemu-aarch64 >/dev/null 2>&1 || missing="$missing qemu-user"
for lib in /usr/lib/aarch64-linux-gnu/libyaml.so /usr/lib/aarch64-linux-gnu/libcjson.so \
           /usr/lib/aarch64-linux-gnu/libz.so /usr/lib/aarch64-linux-gnu/libprotobuf-c.so \
           /lib/ld-linux-aarch64.so.1; do
  [ -e $lib ] || missing="$missing $lib"
done
command -v protoc-c >/dev/null 2>&1 || missing="$missing protobuf-c-compiler"
if [ -n "$missing" ]; then
  echo "aarch64 build skipped: missing$missing (make deps installs them)"
  exit 77
fi

launcher=""
command -v ccache >/dev/null 2>&1 && launcher="-DCMAKE_C_COMPILER_LAUNCHER=ccache"
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$src/cross" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$src/cross/toolchain-aarch64.cmake" $launcher >/dev/null
cmake --build "$build" -j "$jobs"
cd "$build"
rc=0
SLEAPC_DATA_DIR=$data ctest --output-on-failure --no-tests=error -j "$jobs" || rc=$?
# Which microkernels ran (the tests print it).
grep -h "microkernel" Testing/Temporary/LastTest.log | sort -u || true
exit $rc

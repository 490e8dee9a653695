#!/usr/bin/env bash
# sleapc installed as its users install it, each used from outside the source
# tree (make test-install; needs a Release build in build/):
#   1. the wheel (`make wheel`) in a fresh `python3 -m venv`, installed with
#      `pip install --no-index`; the Python tests run against it from a copy
#      of python/tests, and the venv's `sleapc` command runs;
#   2. `cmake --install` (what `make install` runs) into a temporary prefix as
#      an unprivileged user: the CLI runs, a C program built with
#      `pkg-config --libs` and one with `pkg-config --static --libs` run
#      without LD_LIBRARY_PATH, the Python package imports from the prefix;
#   3. the `make dist` tarball unpacked elsewhere, moved, and used the same way.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
DATA=${SLEAPC_DATA_DIR:-$SRC/../shared/data}
BUILD=$SRC/build
[ -f "$BUILD/CMakeCache.txt" ] || { echo "no Release build in $BUILD (make build)"; exit 1; }
TMP=$(mktemp -d /tmp/sleapc-install.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP"
unset SLEAPC_LIBRARY SLEAPC_CLI PYTHONPATH LD_LIBRARY_PATH
export SLEAPC_BACKEND=native PYTHONDONTWRITEBYTECODE=1
step() { printf '\n== %s\n' "$*"; }

# As an unprivileged user when run as root (CI): `nobody`, no groups.
as_user() {
  if [ "$(id -u)" = 0 ]; then
    setpriv --reuid=65534 --regid=65534 --clear-groups --reset-env -- env HOME="$TMP/home" \
      PATH=/usr/local/bin:/usr/bin:/bin "$@"
  else
    "$@"
  fi
}
mkdir -p "$TMP/home"
[ "$(id -u)" = 0 ] && chown 65534:65534 "$TMP/home"

step "1. wheel into a fresh venv (pip install --no-index)"
rm -rf "$BUILD/wheels"
(cd "$SRC" && SLEAPC_BUILD_DIR=$BUILD "$PYTHON" -m pip wheel -q --no-build-isolation --no-deps \
  --no-index -w "$BUILD/wheels" .)
WHEEL=$(ls "$BUILD"/wheels/sleapc-*.whl)
echo "$WHEEL"
# numpy (and pytest) come from Debian's packages: the venv sees the system site.
"$PYTHON" -m venv --system-site-packages "$TMP/venv"
"$TMP/venv/bin/pip" install -q --no-index "$WHEEL"
cp -r "$SRC/python/tests" "$TMP/pytests"
cd "$TMP"
"$TMP/venv/bin/python" - "$TMP/venv" <<'PY'
import os, sys, sleapc, sleapc._lib as l
venv = os.path.realpath(sys.argv[1])
assert os.path.realpath(sleapc.__file__).startswith(venv), sleapc.__file__
assert os.path.realpath(l.lib._name).startswith(venv), l.lib._name
print("sleapc", sleapc.__version__, "from", os.path.dirname(sleapc.__file__))
PY
"$TMP/venv/bin/sleapc" version
SLEAPC_DATA_DIR=$DATA SLEAPC_CLI="$TMP/venv/bin/sleapc" SLEAPC_TEST_INSTALLED=1 \
  SLEAPC_GOLDENS_DIR="$SRC/tests/goldens" \
  "$TMP/venv/bin/python" -m pytest -q -p no:cacheprovider "$TMP/pytests" ${PYTEST_ARGS:-}
cd "$SRC"

# A C program of the installed library through pkg-config: the shared line and
# the static one, run without LD_LIBRARY_PATH; prints what it predicts.
check_c() {  # prefix
  local prefix=$1
  for mode in shared static; do
    local flag=""; [ $mode = static ] && flag=--static
    local libs
    libs=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config $flag --libs sleapc)
    case "$libs" in *::*) echo "pkg-config $flag --libs: a CMake target name: $libs"; exit 1;; esac
    # --static: libsleapc.a itself, with what the line adds for it.
    [ $mode = static ] && libs=${libs/-lsleapc/-Wl,-Bstatic -lsleapc -Wl,-Bdynamic}
    cc -std=c11 -Wall -Wextra -Werror "$SRC/tests/lib/installed_example.c" -o "$TMP/example_$mode" \
      $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags sleapc) $libs
    if [ $mode = static ] && ldd "$TMP/example_$mode" | grep -q libsleapc; then
      echo "the --static example uses libsleapc.so"; exit 1
    fi
    [ -d "$DATA/sleap-nn-assets" ] || { echo "pkg-config $flag --libs: built (no data to run)"; continue; }
    "$TMP/example_$mode" "$DATA/sleap-nn-assets/datasets/centered_pair_small.mp4" 2 2 \
      "$DATA/sleap-nn-assets/model_ckpts/minimal_instance_centroid" \
      "$DATA/sleap-nn-assets/model_ckpts/minimal_instance_centered_instance" > "$TMP/out_$mode.txt"
    [ -s "$TMP/out_$mode.txt" ] || { echo "the $mode example predicted nothing"; exit 1; }
    echo "pkg-config $flag --libs: built and ran ($(wc -l < "$TMP/out_$mode.txt") instances)"
  done
  [ ! -d "$DATA/sleap-nn-assets" ] || cmp "$TMP/out_shared.txt" "$TMP/out_static.txt"
}
check_py() {  # prefix
  PYTHONPATH=$(ls -d "$1"/lib/python3*/site-packages) "$PYTHON" -c "
import os, sys, sleapc, sleapc._lib as l
p = os.path.realpath(sys.argv[1])
assert os.path.realpath(l.lib._name).startswith(p), l.lib._name
print('python: sleapc', sleapc.__version__, 'with', l.lib._name)" "$1"
}

step "2. make install PREFIX=<tmp> as an unprivileged user"
mkdir -p "$TMP/prefix"
if [ "$(id -u)" = 0 ]; then
  chown 65534:65534 "$TMP/prefix"
  # cmake --install records what it copied in the build folder, which is root's here.
  touch "$BUILD/install_manifest.txt" && chmod 666 "$BUILD/install_manifest.txt"
fi
as_user cmake --install "$BUILD" --prefix "$TMP/prefix" > /dev/null
[ "$(stat -c %u "$TMP/prefix/bin/sleapc")" = "$(as_user id -u)" ]
as_user "$TMP/prefix/bin/sleapc" version
check_c "$TMP/prefix"
check_py "$TMP/prefix"

step "3. make dist, unpacked elsewhere and moved"
(cd "$SRC" && make -s dist > /dev/null)
TARBALL=$(ls "$BUILD"/sleapc-*-linux-*.tar.gz)
echo "$TARBALL ($(du -h "$TARBALL" | cut -f1))"
mkdir "$TMP/unpacked"
tar -C "$TMP/unpacked" -xzf "$TARBALL"
mv "$TMP/unpacked/$(basename "$TARBALL" .tar.gz)" "$TMP/moved"
readelf -d "$TMP/moved/bin/sleapc" | grep -q 'RUNPATH.*\$ORIGIN/../lib'
"$TMP/moved/bin/sleapc" version
check_c "$TMP/moved"
check_py "$TMP/moved"
grep -rq "$BUILD" "$TMP/moved/lib/pkgconfig" "$TMP/moved"/lib/python3*/site-packages/sleapc \
  && { echo "the tarball records the build's paths"; exit 1; }
step "installs OK"

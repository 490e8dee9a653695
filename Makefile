# Convenience entry points over CMake. `make test` and `make demo` do all the
# set-up on a fresh Debian machine (they install the Debian packages first).

DEB_PACKAGES := build-essential cmake pkg-config libyaml-dev libcjson-dev libhdf5-dev \
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libprotobuf-c-dev protobuf-c-compiler \
  libdnnl-dev libxnnpack-dev libpthreadpool-dev libonnx-dev zlib1g-dev python3-numpy python3-pytest \
  gcc-aarch64-linux-gnu qemu-user
# The aarch64 build's libraries (cross/): Debian arm64 multiarch packages,
# which install beside the amd64 ones (HDF5's and FFmpeg's are left out).
DEB_PACKAGES_ARM64 := libyaml-dev:arm64 libcjson-dev:arm64 zlib1g-dev:arm64 libprotobuf-c-dev:arm64
SLEAPC_DATA_DIR ?= $(CURDIR)/../shared/data
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps build build-asan install test test-release test-asan demo clean

all: build

# Install what the build needs, only when something is missing.
# arm64 packages need the arm64 architecture known to dpkg (x86-64 hosts);
# once a library is installed for both, its plain name is ambiguous to dpkg
# and is asked for with the native architecture.
deps:
	@missing=""; arch=$$(dpkg --print-architecture); \
	for p in $(DEB_PACKAGES) $(DEB_PACKAGES_ARM64); do \
	  dpkg -s $$p >/dev/null 2>&1 || dpkg -s $$p:$$arch >/dev/null 2>&1 || \
	  missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  if [ "$$(dpkg --print-architecture)" != arm64 ] && \
	     ! dpkg --print-foreign-architectures | grep -qx arm64; then \
	    $$SUDO dpkg --add-architecture arm64; fi; \
	  $$SUDO apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing; \
	fi

build: deps
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
	cmake --build build -j $(JOBS)

# The CLI, libsleapc.so / .a, headers, sleapc.pc, the CMake package and the
# Python package; ldconfig makes a system prefix's new library known.
PREFIX ?= /usr/local
install: build
	cmake --install build --prefix $(PREFIX)
	@if [ "$$(id -u)" = 0 ] && [ "$(PREFIX)" = /usr/local -o "$(PREFIX)" = /usr ]; then ldconfig; fi

build-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLEAPC_SANITIZE=address,undefined
	cmake --build build-asan -j $(JOBS)

test-release: build
	cd build && SLEAPC_DATA_DIR=$(SLEAPC_DATA_DIR) ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	cd build-asan && SLEAPC_DATA_DIR=$(SLEAPC_DATA_DIR) ctest --output-on-failure -j $(JOBS)

# The whole suite, in a Release build and under AddressSanitizer + UBSan.
test: test-release test-asan

# The main job, on a sample sleapc makes itself (no external data needed):
# a synthetic sleap-nn model folder and clip with known keypoints, predicted
# end to end and checked against the truth.
demo: build
	./build/sleapc demo build/demo
	./build/sleapc info -m build/demo/model

clean:
	rm -rf build build-asan

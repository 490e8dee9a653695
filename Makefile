# Convenience entry points over CMake. `make test` and `make demo` do all the
# set-up on a fresh Debian machine (they install the Debian packages first).

DEB_PACKAGES := build-essential cmake pkg-config libyaml-dev libcjson-dev libhdf5-dev \
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libprotobuf-c-dev protobuf-c-compiler \
  libdnnl-dev libxnnpack-dev libpthreadpool-dev libonnx-dev zlib1g-dev python3-numpy python3-pytest \
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers
SLEAPC_DATA_DIR ?= $(CURDIR)/../shared/data
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps build build-asan install test test-release test-asan demo clean

all: build

# Install what the build needs, only when something is missing.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
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

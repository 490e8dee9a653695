# Convenience entry points over CMake. `make test` and `make demo` do all the
# set-up on a fresh Debian machine (they install the Debian packages first).

DEB_PACKAGES := build-essential cmake pkg-config libyaml-dev libcjson-dev libhdf5-dev \
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev libprotobuf-c-dev protobuf-c-compiler \
  libdnnl-dev libxnnpack-dev libpthreadpool-dev libonnx-dev zlib1g-dev python3-numpy python3-pytest \
  python3-venv python3-pip python3-setuptools python3-wheel util-linux chromium \
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers \
  gcc-aarch64-linux-gnu qemu-user
# The aarch64 build's libraries (cross/): Debian arm64 multiarch packages,
# which install beside the amd64 ones (HDF5's and FFmpeg's are left out).
DEB_PACKAGES_ARM64 := libyaml-dev:arm64 libcjson-dev:arm64 zlib1g-dev:arm64 libprotobuf-c-dev:arm64
SLEAPC_DATA_DIR ?= $(CURDIR)/../shared/data
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps build build-asan install dist wheel sdist check test test-full test-release \
  test-asan test-asan-full test-install demo clean

all: build

# Install what the build needs, only when something is missing.
# arm64 packages need the arm64 architecture known to dpkg (x86-64 hosts);
# once a library is installed for both, its plain name is ambiguous to dpkg
# and is asked for with the native architecture.
deps:
	@missing=""; arch=$$(dpkg --print-architecture); \
	for p in $(DEB_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || dpkg -s $$p:$$arch >/dev/null 2>&1 || \
	  missing="$$missing $$p"; done; \
	SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $$SUDO apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing || exit 1; \
	fi; \
	missing=""; for p in $(DEB_PACKAGES_ARM64); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ] && [ "$$arch" != arm64 ]; then \
	  echo "installing (aarch64 cross build, optional):$$missing"; \
	  { dpkg --print-foreign-architectures | grep -qx arm64 || $$SUDO dpkg --add-architecture arm64; } && \
	  $$SUDO apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q $$missing || \
	  echo "the arm64 packages could not be installed: test_cross_aarch64 will be skipped"; \
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

# A relocatable binary tarball: bin, lib (libsleapc.so, .a, pkg-config, CMake
# package, the Python package), include; it runs from wherever it is unpacked.
VERSION := $(shell sed -n 's/^project.sleapc VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
DIST_NAME := sleapc-$(VERSION)-linux-$(shell uname -m)
dist: build
	rm -rf build/dist && cmake --install build --prefix $(CURDIR)/build/dist/$(DIST_NAME)
	tar -C build/dist -czf build/$(DIST_NAME).tar.gz $(DIST_NAME)
	@echo "build/$(DIST_NAME).tar.gz"

# The Python wheel (libsleapc.so and the CLI inside), from this build's library,
# and the source distribution; offline with Debian's setuptools.
PYTHON ?= /usr/bin/python3
wheel: build
	SLEAPC_BUILD_DIR=$(CURDIR)/build $(PYTHON) -m pip wheel --no-build-isolation --no-deps \
	  --no-index -w build/wheels .
sdist:
	$(PYTHON) -m build --sdist --no-isolation --outdir build/sdist . 2>/dev/null || \
	  $(PYTHON) setup.py -q sdist -d build/sdist

build-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLEAPC_SANITIZE=address,undefined
	cmake --build build-asan -j $(JOBS)

# Test tiers: ctest labels (tests/CMakeLists.txt, CONTRIBUTING.md): unit, cli,
# model (the reference tests), gpu (Vulkan), slow (over ~60 s in Release).
CTEST = SLEAPC_DATA_DIR=$(SLEAPC_DATA_DIR) ctest --output-on-failure -j $(JOBS)

# The developers' default, in the Release build: the unit and CLI tiers, then
# the reference tests on one case per model type (SLEAPC_TEST_QUICK=1); no
# Vulkan test, nothing slow but the quick reference runs.
check: build
	cd build && $(CTEST) -L 'unit|cli' -LE 'slow|gpu'
	cd build && SLEAPC_TEST_QUICK=1 $(CTEST) -L model -LE gpu

# The whole suite in the Release build.
test-release: build
	cd build && $(CTEST)

# Under AddressSanitizer + UBSan: the unit and CLI tiers.
test-asan: build-asan
	cd build-asan && $(CTEST) -L 'unit|cli'

# The whole suite under AddressSanitizer + UBSan.
test-asan-full: build-asan
	cd build-asan && $(CTEST)

# Installing as users do, each checked from outside the source tree: the wheel
# into a fresh venv (pip --no-index), `make install` into a temporary prefix as
# an unprivileged user, and the `make dist` tarball unpacked elsewhere.
test-install: build
	SLEAPC_DATA_DIR=$(SLEAPC_DATA_DIR) PYTHON=$(PYTHON) tests/install/run_install_tests.sh

# What CI runs (.ci/run): the whole suite in the Release build, the installs,
# then the unit and CLI tiers under AddressSanitizer + UBSan (so the output
# ends with ctest's summary).
test: test-release test-install test-asan

# The whole suite in both builds, and the installs.
test-full: test-release test-asan-full test-install

# The main job, on a sample sleapc makes itself (no external data needed):
# a synthetic sleap-nn model folder and clip with known keypoints, predicted
# end to end and checked against the truth.
demo: build
	./build/sleapc demo build/demo
	./build/sleapc info -m build/demo/model

clean:
	rm -rf build build-asan build-wheel build-python python/sleapc.egg-info

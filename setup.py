"""Builds the C library with CMake for `pip install .` / `pip wheel .` (pyproject.toml has the
metadata). The wheel holds sleapc/libsleapc.so and sleapc/bin/sleapc beside the Python code;
the package loads the library from there, so nothing is set in the environment.

Environment: SLEAPC_BUILD_DIR reuses an existing CMake build folder (configured by
`make build`) instead of building anew; SLEAPC_CMAKE_ARGS adds CMake arguments;
CMAKE_BUILD_PARALLEL_LEVEL sets the build's jobs (default: the cores).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1: the wheel package's
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))


def _version():
    with open(os.path.join(HERE, "CMakeLists.txt")) as f:
        m = re.search(r"project\(sleapc VERSION ([0-9.]+)", f.read())
    return m.group(1)


def _run(cmd):
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    subprocess.check_call(cmd)


class BuildWithLibrary(build_py):
    """The Python files, then libsleapc.so and the CLI built by CMake next to them."""

    def run(self):
        super().run()
        if not shutil.which("cmake"):
            sys.exit("sleapc: CMake is needed to build the library: apt-get install cmake "
                     "(Debian/Ubuntu) or conda install -c conda-forge cmake")
        build_dir = os.environ.get("SLEAPC_BUILD_DIR")
        if not build_dir:
            # Beside the sources (kept between builds, so a second install only relinks).
            build_dir = os.path.join(HERE, "build-wheel")
            _run(["cmake", "-S", HERE, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                  "-DSLEAPC_BUILD_TESTS=OFF", "-DSLEAPC_BUILD_BENCH=OFF"]
                 + shlex.split(os.environ.get("SLEAPC_CMAKE_ARGS", "")))
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
        _run(["cmake", "--build", build_dir, "--target", "sleapc_shared", "sleapc_cli",
              "-j", jobs])
        major, minor = _version().split(".")[:2]
        pkg = os.path.join(self.build_lib, "sleapc")
        os.makedirs(os.path.join(pkg, "bin"), exist_ok=True)
        # One real file under the name the package loads (symlinks do not survive a wheel).
        shutil.copyfile(os.path.join(build_dir, f"libsleapc.so.{major}.{minor}"),
                        os.path.join(pkg, "libsleapc.so"))
        shutil.copyfile(os.path.join(build_dir, "sleapc"), os.path.join(pkg, "bin", "sleapc"))
        os.chmod(os.path.join(pkg, "bin", "sleapc"), 0o755)


class WithLibrary(Distribution):
    """Holds a native library: the wheel is for this platform (its files in platlib)."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """Python over a native library loaded with ctypes: any Python 3, this platform."""

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


setup(version=_version(), distclass=WithLibrary,
      cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel},
      options={"build": {"build_base": "build-python"}})

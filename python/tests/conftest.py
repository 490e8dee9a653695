import os
import sys

import pytest

# The package from this checkout (the ctest entry also points SLEAPC_LIBRARY at the build's
# libsleapc.so), unless the installed one is under test (make test-install).
if not os.environ.get("SLEAPC_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

HERE = os.path.dirname(os.path.abspath(__file__))
# The reference data kept in the repository (tests/goldens); the installed-package run copies
# these tests elsewhere and says where the checkout's goldens are.
GOLDENS = os.environ.get("SLEAPC_GOLDENS_DIR") or os.path.join(HERE, "..", "..", "tests", "goldens")


def _data_dir():
    d = os.environ.get("SLEAPC_DATA_DIR") or os.path.join(HERE, "..", "..", "..", "shared", "data")
    return d if os.path.isdir(d) else None


@pytest.fixture(scope="session")
def data():
    d = _data_dir()
    if d is None:
        pytest.skip("shared data folder not found (set SLEAPC_DATA_DIR)")
    return lambda rel: os.path.join(d, rel)


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("SLEAPC_CLI") or os.path.join(HERE, "..", "..", "build", "sleapc")
    if not os.path.exists(path):
        pytest.skip("the sleapc command is not built (set SLEAPC_CLI)")
    return path

"""ctest's entry for the Python package: pytest on python/tests, or a skip (exit 77) with the
reason when Debian's python3-numpy or python3-pytest is missing."""

import os
import sys

missing = []
for module, package in (("numpy", "python3-numpy"), ("pytest", "python3-pytest")):
    try:
        __import__(module)
    except ImportError:
        missing.append(package)
if missing:
    print(f"skipped: the Python package's tests need {' and '.join(missing)} "
          f"(apt-get install {' '.join(missing)})")
    sys.exit(77)

import pytest  # noqa: E402

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.dirname(os.path.abspath(__file__))]))

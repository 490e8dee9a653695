"""The `sleapc` command of a pip-installed package: runs the CLI built into the wheel."""

import os
import sys


def main() -> None:
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "sleapc")
    if not os.path.exists(exe):
        sys.exit("sleapc: this package was installed without its command-line program "
                 f"({exe}); use the one `make install` puts on PATH")
    os.execv(exe, [exe, *sys.argv[1:]])


if __name__ == "__main__":
    main()

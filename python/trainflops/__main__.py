"""The trainflops command line from Python: `python -m trainflops ...`, and
the `trainflops` command a pip install puts on PATH. Both run the same
program as build/trainflops, installed inside this package (bin/trainflops).
"""
import os
import sys


def main():
    cli = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "trainflops")
    if not os.access(cli, os.X_OK):
        sys.stderr.write(f"trainflops: the command line is not installed with this package ({cli} is missing); "
                         "install the package with pip from the repository (docs/python.md), or build it with make\n")
        return 2
    os.execv(cli, [cli] + sys.argv[1:])
    return 2  # execv does not return


if __name__ == "__main__":
    sys.exit(main())

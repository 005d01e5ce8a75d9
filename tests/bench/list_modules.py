#!/usr/bin/env python3
"""The test modules of bench/tests (test_*.py), one per line, sorted.

usage: list_modules.py DIR             print them (meson, at configure time)
       list_modules.py DIR --check M...  exit 1, naming the difference, when
                                         M... is not that list (a module added
                                         or removed since meson configured)
"""
import glob
import os
import sys


def modules(d):
    return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(d, "test_*.py")))


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    found = modules(argv[1])
    if argv[2:3] != ["--check"]:
        print("\n".join(found))
        return 0
    known = argv[3:]
    if found == known:
        print("%d modules, all run as tests" % len(found))
        return 0
    print("bench/tests changed since meson configured: new %s, gone %s; run "
          "`meson setup --reconfigure BUILD` so that each module is a test"
          % (sorted(set(found) - set(known)) or "none", sorted(set(known) - set(found)) or "none"))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Helpers shared by the listrx-bench tests: recorded tool output in data/
and the listrx binary under test."""

import os

from listrx_bench.listrx import BenchError, find_binary

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def read(path):
    with open(path) as f:
        return f.read()


def data(name):
    return read(os.path.join(DATA, name))


def built_binary(test):
    """The listrx binary under test, or the test skipped with the reason
    printed (meson reports a printed SKIPPED, not a pass)."""
    env = os.environ.get("LISTRX_BIN")
    if env and not os.access(env, os.X_OK):
        print("SKIPPED: LISTRX_BIN=%s is not built" % env)
        test.skipTest("listrx not built")
    try:
        binary = find_binary(None)
    except BenchError as e:
        print("SKIPPED: %s" % e)
        test.skipTest(str(e))
    if not os.access(binary, os.X_OK):
        print("SKIPPED: %s not built" % binary)
        test.skipTest("listrx not built")
    return binary


# Cache geometries the cachegrind-dependent tests run under, never the
# host's (cachegrind simulates whatever it is told, and the host varies:
# a 48 KB 12-way L1d holds a tiny window's whole working set, a 32 KB one
# does not). The last level is the same for both: it is not what they test.
CACHE_GEOMETRIES = {
    "AMD (Zen: 32 KB L1d 8-way, 32 KB L1i 8-way)":
        "I1=32768,8,64 D1=32768,8,64 LL=33554432,16,64",
    "Intel (Golden Cove: 48 KB L1d 12-way, 32 KB L1i 8-way)":
        "I1=32768,8,64 D1=49152,12,64 LL=33554432,16,64",
}


def cachegrind_binary(test):
    """The listrx binary when cachegrind can run it, else the test skipped
    with the reason printed (no valgrind; a sanitizer build, which valgrind
    cannot run: CI runs these tests on the plain build first)."""
    import shutil
    import subprocess
    binary = built_binary(test)
    if not shutil.which("valgrind"):
        print("SKIPPED: valgrind not installed (Debian: valgrind)")
        test.skipTest("no valgrind")
    version = subprocess.run([binary, "--", "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=60).stdout
    if "sanitize=" in version:
        print("SKIPPED: %s is a sanitizer build (%s): cachegrind cannot run it"
              % (binary, version.splitlines()[0]))
        test.skipTest("sanitizer build")
    return binary

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

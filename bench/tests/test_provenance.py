"""Which code measured what: the binary's build commit (its --version), the
clone of each binary and of listrx-bench itself in every output, and the
line listrx-bench prints when it is another clone's than the current
directory's or the measured binary's."""

import contextlib
import io
import json
import os
import subprocess
import tempfile
import unittest
from unittest import mock

from listrx_bench import cli, listrx, results
from listrx_bench.listrx import Listrx, parse_version

from .support import built_binary


def git(*args, cwd):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def make_clone(root, name):
    """A git clone with one commit, a bench/ directory and a fake listrx
    whose --version names a build commit."""
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "bench"))
    os.makedirs(os.path.join(d, "build", "dataplane"))
    fake = os.path.join(d, "build", "dataplane", "listrx")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\nprintf 'listrx 0.1.0 (plain build)\\ncommit: built-%s\\n"
                "source: %s\\nDPDK 22.11.0\\nretpoline: no\\n'\n" % (name, d))
    os.chmod(fake, 0o755)
    git("init", "-q", cwd=d)
    git("add", ".", cwd=d)
    git("commit", "-q", "-m", "one", cwd=d)
    return os.path.realpath(d), fake


@unittest.skipUnless(subprocess.run(["git", "--version"], capture_output=True).returncode == 0,
                     "SKIPPED: git not installed")
class Clones(unittest.TestCase):
    def setUp(self):
        listrx.git_clone.cache_clear()
        self.tmp = tempfile.TemporaryDirectory()
        self.a, self.fake_a = make_clone(self.tmp.name, "a")
        self.b, self.fake_b = make_clone(self.tmp.name, "b")
        # this listrx-bench is clone a's
        patch = mock.patch.object(listrx, "BENCH_DIR", os.path.join(self.a, "bench"))
        patch.start()
        self.addCleanup(patch.stop)
        self.addCleanup(self.tmp.cleanup)
        self.addCleanup(listrx.git_clone.cache_clear)

    def test_notice_when_the_binary_or_the_directory_is_another_clones(self):
        self.assertIsNone(listrx.clone_notice(self.fake_a))
        self.assertIsNone(listrx.clone_notice(cwd=self.a))
        self.assertIsNone(listrx.clone_notice(cwd=self.tmp.name))  # not a clone
        line = listrx.clone_notice(self.fake_b)
        self.assertIn("this listrx-bench is %s's" % self.a, line)
        self.assertIn("the binary it measures, %s, is %s's" % (self.fake_b, self.b), line)
        line = listrx.clone_notice(cwd=os.path.join(self.b, "build"))
        self.assertIn("not the current directory's clone %s" % self.b, line)
        # said once per binary, on stderr
        listrx._noticed.discard(self.fake_b)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            Listrx(self.fake_b)
            Listrx(self.fake_b)
            Listrx(self.fake_a)
        self.assertEqual(err.getvalue().count("listrx-bench: this listrx-bench is"), 1)
        self.assertIn(self.fake_b, err.getvalue())

    def test_provenance_records_the_bench_and_each_binary(self):
        p = listrx.provenance([Listrx(self.fake_a), (self.fake_b, "listrx 0.1.0 (plain build)\n")])
        commit_a = git("describe", "--always", "--dirty", "--abbrev=12", cwd=self.a)
        self.assertEqual(p["bench"], {"path": os.path.join(self.a, "bench"), "clone": self.a,
                                      "commit": commit_a})
        a, b = p["binaries"]
        self.assertEqual(a["path"], self.fake_a)
        self.assertEqual(a["build_commit"], "built-a")
        self.assertEqual(a["build_source"], os.path.join(self.tmp.name, "a"))
        self.assertEqual((a["clone"], a["clone_commit"]), (self.a, commit_a))
        # a binary whose --version names no commit: said, not invented
        self.assertTrue(b["build_commit"].startswith("unavailable: "))
        self.assertEqual(b["clone"], self.b)
        # a clone with uncommitted changes is -dirty
        with open(os.path.join(self.b, "bench", "x"), "w") as f:
            f.write("x")
        git("add", "bench/x", cwd=self.b)
        listrx.git_clone.cache_clear()
        self.assertTrue(listrx.git_clone(self.fake_b)[1].endswith("-dirty"))


class BinaryVersion(unittest.TestCase):
    def test_version_text(self):
        v = parse_version("listrx 0.1.0 (retpoline build)\ncommit: 01a2d548f425-dirty\n"
                          "source: /src/listrx\nDPDK 22.11.11\nretpoline: yes\n")
        self.assertEqual((v["commit"], v["source"], v["build"], v["retpoline"]),
                         ("01a2d548f425-dirty", "/src/listrx", "retpoline", True))
        old = parse_version("listrx 0.1.0 (plain build)\nDPDK 22.11.11\nretpoline: no\n")
        self.assertIsNone(old["commit"])

    def test_the_built_binary_names_its_commit_and_clone(self):
        binary = built_binary(self)
        v = Listrx(binary).version()
        self.assertIsNotNone(v["commit"], "listrx --version names no commit")
        clone, commit = listrx.git_clone(binary)
        if clone is None:
            self.skipTest("SKIPPED: %s is not in a git clone" % binary)
        self.assertEqual(os.path.realpath(v["source"]), clone)
        # built from this clone's HEAD (ninja rewrites it at each build)
        self.assertEqual(v["commit"].replace("-dirty", ""), commit.replace("-dirty", ""))


class Outputs(unittest.TestCase):
    """A tiny real sweep: results.json records this listrx-bench and the
    binary with its build commit."""

    def test_sweep_records_provenance(self):
        binary = built_binary(self)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "sweep")
            with contextlib.redirect_stderr(io.StringIO()):
                rc = cli.main(["sweep", "--listrx", binary, "--out", out, "--bursts", "32",
                               "--engines", "packet", "--footprints", "0", "--profiles",
                               "null", "--reps", "1", "--duration", "0.05", "--warmup", "0",
                               "-q"])
            self.assertEqual(rc, 0)
            meta, _ = results.load(out)
            p = meta["provenance"]
            self.assertEqual(p["bench"]["path"], listrx.BENCH_DIR)
            self.assertEqual(p["binaries"][0]["path"], binary)
            self.assertEqual(p["binaries"][0]["build_commit"], Listrx(binary).version()["commit"])
            with open(os.path.join(out, "results.json")) as f:
                self.assertIn("provenance", json.load(f))


if __name__ == "__main__":
    unittest.main()

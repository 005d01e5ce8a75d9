"""The cachegrind backend under a cache geometry it is told (--cg-caches,
$LISTRX_CG_CACHES), not the host's: the parser, and the checks that need
misses run under an AMD and an Intel geometry, which must both pass."""

import contextlib
import io
import os
import tempfile
import unittest
from unittest import mock

from listrx_bench import backends, cli, results
from listrx_bench.listrx import (CG_CACHES_ENV, BenchError, cachegrind_caches,
                                 parse_cache_geometry)

from .support import CACHE_GEOMETRIES, cachegrind_binary

TOPO = {"l1i_bytes": 65536, "l1i_line": 64, "l1i_assoc": 4, "l1d_bytes": 65536,
        "llc_bytes": 1 << 20}


class Parsing(unittest.TestCase):
    def test_given_caches_replace_the_hosts(self):
        given = parse_cache_geometry("I1=32768,8,64; d1=49152,12,64")
        self.assertEqual(given, {"I1": "32768,8,64", "D1": "49152,12,64"})
        caches = cachegrind_caches(TOPO, given)
        self.assertEqual(caches["I1"], "32768,8,64")
        self.assertEqual(caches["D1"], "49152,12,64")
        # not given: the host's
        self.assertEqual(caches["LL"], cachegrind_caches(TOPO)["LL"])
        self.assertEqual(parse_cache_geometry(""), {})
        self.assertEqual(parse_cache_geometry(None), {})

    def test_what_valgrind_refuses_is_refused_with_the_geometry_named(self):
        for text, words in (("D1=48000,12,64", "power of two"),
                            ("D1=49152,12,48", "power of two"),
                            ("X1=32768,8,64", "one of I1, D1, LL"),
                            ("D1=32768,8", "three positive integers"),
                            ("D1=32768,0,64", "three positive integers"),
                            ("D1=32768,8,64 D1=65536,8,64", "given twice"),
                            ("I1", "NAME=size,assoc,line")):
            with self.assertRaises(BenchError, msg=text) as cm:
                parse_cache_geometry(text)
            self.assertIn(words, str(cm.exception), text)

    def test_option_and_environment(self):
        args = cli.build_parser().parse_args(
            ["sweep", "--out", "x", "--cg-caches", "D1=49152,12,64"])
        self.assertEqual(args.cg_caches, {"D1": "49152,12,64"})
        with mock.patch.dict(os.environ, {CG_CACHES_ENV: "D1=32768,8,64"}):
            for command in ("sweep", "headline"):
                args = cli.build_parser().parse_args([command, "--out", "x"])
                self.assertEqual(args.cg_caches, {"D1": "32768,8,64"}, command)
        with mock.patch.dict(os.environ, {CG_CACHES_ENV: "D1=1,1,1"}):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as cm:
                cli.build_parser().parse_args(["sweep", "--out", "x"])
            self.assertEqual(cm.exception.code, 2)
            self.assertIn("cache geometry D1=1,1,1", err.getvalue())

    def test_prefix_carries_every_cache(self):
        caches = cachegrind_caches(TOPO, parse_cache_geometry(
            list(CACHE_GEOMETRIES.values())[1]))
        pre = backends.callgrind_window_prefix("/x/out", caches["I1"], caches["D1"],
                                               caches["LL"])
        for flag in ("--I1=32768,8,64", "--D1=49152,12,64", "--LL=33554432,16,64"):
            self.assertIn(flag, pre)


def sweep(binary, out, caches):
    """The kernel pipeline at burst 64 with one I1's worth of ballast
    (32 KB), packet and burst engines, callgrind window, one rep."""
    argv = ["sweep", "--listrx", binary, "--out", out, "--bursts", "64",
            "--engines", "packet,burst", "--footprints", "32",
            "--pipelines", "xdp,build-meta,gro,l3-demux", "--profiles", "udp64",
            "--reps", "1", "--duration", "0.05", "--warmup", "0",
            "--counters", "time,cachegrind", "--cg-caches", caches, "-q"]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = cli.main(argv)
    assert rc == 0, err.getvalue()
    meta, rows = results.load(out)
    return meta, {r["engine"]: r for r in rows}


class UnderGivenGeometries(unittest.TestCase):
    """The checks that depend on simulated misses, under each geometry of
    support.CACHE_GEOMETRIES: they must hold under both."""

    def test_amd_and_intel(self):
        binary = cachegrind_binary(self)
        instructions = {}
        with tempfile.TemporaryDirectory() as d:
            for i, (name, caches) in enumerate(CACHE_GEOMETRIES.items()):
                with self.subTest(geometry=name):
                    given = parse_cache_geometry(caches)
                    meta, by = sweep(binary, os.path.join(d, str(i)), caches)
                    self.assertEqual(meta["cachegrind_caches"], given)
                    self.assertIn("given", meta["cachegrind_caches_source"])
                    for engine, r in by.items():
                        self.assertEqual(r["status"], "ok", r.get("status"))
                        self.assertEqual((r["cg_i1"], r["cg_d1"], r["cg_ll"]),
                                         (given["I1"], given["D1"], given["LL"]))
                        for cache in ("I1", "D1", "LL"):
                            self.assertIn("--%s=%s" % (cache, given[cache]),
                                          r["cachegrind_command"])
                        # a data-side figure is a count: 0 is a valid one
                        # (a 48 KB L1d may hold the window's data)
                        for k in ("cg_d1_misses_per_packet", "cg_ll_misses_per_packet"):
                            self.assertIsInstance(r[k], float, k)
                            self.assertGreaterEqual(r[k], 0.0, k)
                        self.assertGreater(r["cg_indirect_branches_per_packet"], 0)
                        instructions.setdefault(engine, []).append(r["cg_ir_per_packet"])
                    # 32 KB of ballast on a 32 KB I1: the packet engine
                    # fetches it per packet, the burst engine once per burst
                    self.assertLess(by["burst"]["cg_i1_misses_per_packet"] * 4,
                                    by["packet"]["cg_i1_misses_per_packet"])
                    # one indirect call per stage per burst, not per packet
                    self.assertLess(by["burst"]["cg_indirect_branches_per_packet"],
                                    by["packet"]["cg_indirect_branches_per_packet"])
            # the geometry changes misses, never the instructions executed
            for engine, irs in instructions.items():
                self.assertEqual(len(set(irs)), 1, (engine, irs))

    def test_d1_misses_where_the_test_needs_them(self):
        """A 4 KB L1d cannot hold a burst of 64 packets' mbufs and headers:
        the D side is counted (forced, never the host's geometry)."""
        binary = cachegrind_binary(self)
        with tempfile.TemporaryDirectory() as d:
            _, by = sweep(binary, d, "I1=32768,8,64 D1=4096,8,64 LL=33554432,16,64")
        for engine, r in by.items():
            self.assertGreater(r["cg_d1_misses_per_packet"], 0.5, engine)


if __name__ == "__main__":
    unittest.main()

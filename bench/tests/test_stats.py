"""stats.compare, the one comparison of every verdict (headline, cree,
scale, kernel): the order-statistic interval of a median and its exact
level, the median pair whose sides agree with the ratio, the resolved rule
and its wording."""

import math
import random
import unittest

from listrx_bench import stats


def exact_interval(values, confidence=0.95):
    """The same interval by exact binomial sums (math.comb), for checking."""
    vals = sorted(values)
    n = len(vals)
    best = 1
    for k in range(1, (n + 1) // 2 + 1):
        below = sum(math.comb(n, j) for j in range(k)) / 2 ** n
        if 1 - 2 * below >= confidence:
            best = k
    below = sum(math.comb(n, j) for j in range(best)) / 2 ** n
    return vals[best - 1], vals[n - best], 1 - 2 * below


class MedianInterval(unittest.TestCase):
    def test_six_pairs_are_the_fewest_with_a_95_percent_interval(self):
        self.assertEqual(stats.MIN_PAIRS, 6)
        lo, hi, level = stats.median_interval([3, 1, 2, 5, 4])
        self.assertEqual((lo, hi), (1, 5))
        self.assertAlmostEqual(level, 1 - 2 / 32)  # 93.75 %: below 95 %
        lo, hi, level = stats.median_interval([6, 3, 1, 2, 5, 4])
        self.assertEqual((lo, hi), (1, 6))
        self.assertAlmostEqual(level, 1 - 2 / 64)

    def test_matches_the_exact_binomial_sums(self):
        rng = random.Random(3)
        for n in (1, 2, 7, 9, 11, 15, 30, 41, 100):
            vals = [rng.random() for _ in range(n)]
            lo, hi, level = stats.median_interval(vals)
            elo, ehi, elevel = exact_interval(vals)
            self.assertEqual((lo, hi), (elo, ehi), n)
            self.assertAlmostEqual(level, elevel, places=9)
        # 9 values: the 2nd smallest and the 2nd largest, 96.1 %
        lo, hi, level = stats.median_interval(range(1, 10))
        self.assertEqual((lo, hi), (2, 8))
        self.assertAlmostEqual(level, 1 - 20 / 512)

    def test_thousands_of_window_pairs(self):
        rng = random.Random(5)
        vals = [1.3 + rng.gauss(0, 0.1) for _ in range(4001)]
        lo, hi, level = stats.median_interval(vals)
        self.assertGreaterEqual(level, 0.95)
        self.assertLess(level, 0.96)
        self.assertLess(lo, stats.median(vals))
        self.assertLess(stats.median(vals), hi)
        self.assertLess(hi - lo, 0.02)

    def test_covers_the_median_as_often_as_it_says(self):
        """Independent ratios around a true median of 1: the interval holds
        it at least as often as its level (fixed seed: a fixed answer)."""
        rng = random.Random(11)
        for n in (6, 7, 11, 30):
            held = 0
            for _ in range(1000):
                lo, hi, level = stats.median_interval(
                    [rng.lognormvariate(0, 0.3) for _ in range(n)])
                held += lo <= 1.0 <= hi
            self.assertGreaterEqual(held / 1000, level - 0.02, n)

    def test_empty(self):
        self.assertEqual(stats.median_interval([None, "unavailable: x"]), (None, None, None))


def pairs_of(base, other):
    return [(i, b, o) for i, (b, o) in enumerate(zip(base, other))]


class Compare(unittest.TestCase):
    def test_odd_count_the_median_pair_gives_every_figure(self):
        # ratios 2.0, 1.5, 1.25, 1.6, 1.2, 1.8, 1.4: the median is 1.5 (key 1)
        base = [100.0, 90.0, 50.0, 80.0, 60.0, 90.0, 70.0]
        other = [50.0, 60.0, 40.0, 50.0, 50.0, 50.0, 50.0]
        c = stats.compare(pairs_of(base, other))
        self.assertEqual(c["pairs"], 7)
        self.assertEqual(c["median_keys"], [1])
        self.assertAlmostEqual(c["ratio"], 1.5)
        self.assertEqual((c["base"], c["other"]), (90.0, 60.0))
        self.assertAlmostEqual(c["saving"], 30.0)
        self.assertEqual((c["min"], c["max"]), (1.2, 2.0))
        self.assertEqual(c["ci"], [1.2, 2.0])  # 7 pairs: [min, max], 98.4 %
        self.assertAlmostEqual(c["level"], 1 - 2 / 128)
        self.assertAlmostEqual(c["width_pct"], 0.8 / 1.5 * 100)
        self.assertTrue(c["resolved"])
        self.assertEqual(c["resolution"], "resolved: the 95 % interval [1.200–2.000] "
                                          "excludes 1")

    def test_even_count_geometric_mean_of_the_middle_pairs(self):
        base = [100.0, 90.0, 50.0, 80.0, 60.0, 90.0]
        other = [50.0, 60.0, 40.0, 50.0, 50.0, 50.0]
        c = stats.compare(pairs_of(base, other))
        # middle ratios 1.5 (key 1) and 1.6 (key 3)
        self.assertEqual(sorted(c["median_keys"]), [1, 3])
        self.assertAlmostEqual(c["ratio"], math.sqrt(1.5 * 1.6))
        self.assertAlmostEqual(c["base"], math.sqrt(90.0 * 80.0))
        self.assertAlmostEqual(c["other"], math.sqrt(60.0 * 50.0))
        self.assertAlmostEqual(c["base"] / c["other"], c["ratio"], places=12)
        self.assertAlmostEqual(c["saving"], c["base"] - c["other"], places=12)

    def test_the_sides_agree_with_the_ratio_where_the_medians_do_not(self):
        """Drift between pairs: the sides' own medians say 1.0, every pair
        says about 2; the figures printed are the median pair's."""
        base = [100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0]
        other = [50.0, 100.0, 150.0, 400.0, 260.0, 300.0, 350.0]
        c = stats.compare(pairs_of(base, other))
        self.assertAlmostEqual(c["ratio"], 2.0)
        self.assertAlmostEqual(stats.median(base) / stats.median(other), 400.0 / 260.0)
        self.assertAlmostEqual(c["base"] / c["other"], c["ratio"])

    def test_resolved_needs_six_pairs_and_an_interval_off_the_reference(self):
        up = pairs_of([110.0] * 5, [100.0] * 5)
        c = stats.compare(up)
        self.assertFalse(c["resolved"])
        self.assertEqual(c["resolution"], "not resolved: 5 pair(s), a 95 % interval needs 6")
        c = stats.compare(up + [(5, 120.0, 100.0)])
        self.assertTrue(c["resolved"])
        c = stats.compare(up + [(5, 90.0, 100.0)])
        self.assertFalse(c["resolved"])
        self.assertIn("spans 1", c["resolution"])
        # below the reference resolves too (other costs more)
        self.assertTrue(stats.compare(pairs_of([90.0] * 6, [100.0] * 6))["resolved"])
        # another reference: scale's efficiency against its target
        eff = pairs_of([0.95, 0.93, 0.97, 0.96, 0.94, 0.92], [1.0] * 6)
        self.assertTrue(stats.compare(eff, reference=0.9)["resolved"])
        self.assertFalse(stats.compare(eff, reference=0.95)["resolved"])

    def test_left_out_pairs_and_shared_cpus_are_counted(self):
        pairs = pairs_of([110.0, 120.0, None, 115.0], [100.0, 100.0, 100.0, 0.0])
        c = stats.compare(pairs, shared={0, 2, 9}, left_out=[(7, "burst stalled")])
        self.assertEqual(c["pairs"], 2)
        self.assertEqual(c["left_out"], [{"key": 7, "why": "burst stalled"},
                                         {"key": 2, "why": "no figure"},
                                         {"key": 3, "why": "no figure"}])
        self.assertEqual(c["shared"], 1)  # of the pairs used, only key 0
        self.assertIsNone(stats.compare(pairs)["shared"])

    def test_no_pair(self):
        c = stats.compare([(0, None, 1.0)])
        self.assertIsNone(c["ratio"])
        self.assertFalse(c["resolved"])
        self.assertEqual(stats.caveat(c), "no pair (1 left out): not resolved")

    def test_order_of_the_pairs_does_not_matter(self):
        rng = random.Random(2)
        pairs = [(i, rng.uniform(50, 150), rng.uniform(50, 150)) for i in range(21)]
        a = stats.compare(pairs)
        b = stats.compare(list(reversed(pairs)))
        for key in ("ratio", "ci", "base", "other", "resolved", "median_keys"):
            self.assertEqual(a[key], b[key], key)


class Wording(unittest.TestCase):
    def test_the_caveat_says_pairs_left_out_shared_and_resolved(self):
        base = [100.0, 90.0, 50.0, 80.0, 60.0, 90.0, 70.0]
        other = [50.0, 60.0, 40.0, 50.0, 50.0, 50.0, 50.0]
        c = stats.compare(pairs_of(base, other), shared={0, 1, 2},
                          left_out=[(9, "packet stalled")])
        self.assertEqual(stats.caveat(c), "1.50× [1.20–2.00], 7 pairs, 1 left out, "
                                          "3 shared the CPU: resolved")
        c = stats.compare(pairs_of(base[:3], other[:3]))
        self.assertEqual(stats.caveat(c, digits=3),
                         "1.500× [1.250–2.000], 3 pairs, CPU sharing not recorded: not "
                         "resolved (3 pair(s), a 95 % interval needs 6)")
        self.assertEqual(stats.caveat(c, figure=lambda r: "%+.1f %%" % ((r - 1) * 100),
                                      unit=""),
                         "+50.0 % [+25.0 %–+100.0 %], 3 pairs, CPU sharing not recorded: "
                         "not resolved (3 pair(s), a 95 % interval needs 6)")

    def test_a_rate_of_the_median_pair(self):
        ns = {0: 100.0, 1: 90.0, 2: 50.0, 3: 80.0}
        other = {0: 50.0, 1: 60.0, 2: 40.0, 3: 50.0}
        c = stats.compare([(k, ns[k], other[k]) for k in ns])
        mpps = {k: 1000.0 / v for k, v in ns.items()}
        self.assertAlmostEqual(stats.at_median(c, mpps), 1000.0 / c["base"])
        self.assertIsNone(stats.at_median(c, {}))


if __name__ == "__main__":
    unittest.main()

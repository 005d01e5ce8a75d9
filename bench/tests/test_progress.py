"""Tests of listrx-bench: the progress bar and its ETA."""

import io
import unittest

from listrx_bench.progress import Progress
from listrx_bench.sweep import CG_KIND, RUN_KIND


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class ProgressBar(unittest.TestCase):
    def test_lines(self):
        out, clock = io.StringIO(), Clock()
        p = Progress(4, stream=out, width=8, clock=clock)
        clock.t = 1.0
        p.update("a")
        clock.t = 4.0
        p.update("b", 3)
        lines = out.getvalue().splitlines()
        self.assertTrue(lines[0].startswith("[##......] 1/4  25% eta 3s a"), lines[0])
        self.assertTrue(lines[1].startswith("[########] 4/4 100% eta 0s b"), lines[1])

    def test_eta_weighs_each_kind_by_its_own_cost(self):
        """A sweep's shape: 40 timed runs of 0.7 s, then 10 cachegrind jobs
        of 6 s each, two at a time (3 s of wall time a job). Counting runs
        alike, the ETA after the timed runs would be 10 x 0.7 = 7 s for 30 s
        of work; weighted by kind, it is within 25 % of the truth at every
        step, from the plan's estimates before a job has finished."""
        clock = Clock()
        p = Progress(enabled=False, clock=clock)
        p.plan(RUN_KIND, 40, 0.75)
        p.plan(CG_KIND, 10, 2.5)
        truth = 40 * 0.7 + 10 * 3.0
        p.begin(RUN_KIND)
        for _ in range(40):
            eta = p.eta()
            self.assertLess(abs(eta - (truth - clock.t)), 0.25 * (truth - clock.t))
            clock.t += 0.7
            p.update(kind=RUN_KIND)
        p.end(RUN_KIND)
        p.begin(CG_KIND)
        for i in range(10):
            left = truth - clock.t
            self.assertLess(abs(p.eta() - left), 0.25 * left, i)
            clock.t += 3.0
            p.update(kind=CG_KIND)
        p.end(CG_KIND)
        self.assertEqual(p.eta(), 0.0)

    def test_unknown_cost_until_one_finishes(self):
        clock = Clock()
        p = Progress(enabled=False, clock=clock)
        p.plan(RUN_KIND, 2)
        p.begin(RUN_KIND)
        self.assertIsNone(p.eta())
        self.assertIn("eta ?", p.line())
        clock.t = 2.0
        p.update(kind=RUN_KIND)
        self.assertEqual(p.eta(), 2.0)


if __name__ == "__main__":
    unittest.main()

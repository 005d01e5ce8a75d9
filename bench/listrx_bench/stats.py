"""Medians and spreads; measures that could not be taken are strings that
start with "unavailable:" (never zeros)."""

import math
import random
import statistics
from fractions import Fraction

UNAVAILABLE = "unavailable: "


def unavailable(reason):
    return UNAVAILABLE + reason


def is_unavailable(value):
    return isinstance(value, str) and value.startswith("unavailable")


def number(value):
    """The float in a result cell, or None (unavailable, empty, failed)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return None if math.isnan(value) else float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def median(values):
    vals = [v for v in (number(x) for x in values) if v is not None]
    return statistics.median(vals) if vals else None


def quantile(sorted_vals, q):
    """Linear interpolation between closest ranks (numpy's default), which is
    statistics.quantiles' "inclusive" method: q = k/n is its k-th cut point."""
    if not sorted_vals:
        return None
    if q <= 0 or len(sorted_vals) == 1:
        return sorted_vals[0] if q < 1 else sorted_vals[-1]
    if q >= 1:
        return sorted_vals[-1]
    frac = Fraction(q).limit_denominator(10000)
    cuts = statistics.quantiles(sorted_vals, n=frac.denominator,
                                method="inclusive")
    return cuts[frac.numerator - 1]


def bootstrap_interval(values, statistic=None, reps=2000, level=0.95, seed=1):
    """Percentile bootstrap interval of statistic(values) (default: the
    median): `reps` resamples with replacement, the (1-level)/2 and
    1-(1-level)/2 quantiles of their statistic. The seed is fixed, so the
    same data give the same interval. (None, None) under two values."""
    vals = [v for v in (number(x) for x in values) if v is not None]
    if len(vals) < 2:
        return None, None
    stat = statistic or median
    rng = random.Random(seed)
    n = len(vals)
    boot = sorted(stat([vals[rng.randrange(n)] for _ in range(n)]) for _ in range(reps))
    tail = (1.0 - level) / 2.0
    return quantile(boot, tail), quantile(boot, 1.0 - tail)


def summary(values):
    """n, median, min, max, spread (max-min)/median in %, IQR."""
    vals = sorted(v for v in (number(x) for x in values) if v is not None)
    if not vals:
        return {"n": 0, "median": None, "min": None, "max": None,
                "spread_pct": None, "iqr": None}
    med = median(vals)
    spread = (vals[-1] - vals[0]) / med * 100 if med else None
    return {"n": len(vals), "median": med, "min": vals[0], "max": vals[-1],
            "spread_pct": spread,
            "iqr": quantile(vals, 0.75) - quantile(vals, 0.25)}


def fmt(value, digits=3):
    """A cell for a table: numbers rounded, unavailable kept as said."""
    if value is None:
        return "-"
    if is_unavailable(value):
        return value
    v = number(value)
    if v is None:
        return str(value)
    if v != 0 and abs(v) < 1:
        return significant(v, digits)
    return "%.*f" % (digits, v) if abs(v) < 1000 else "%.0f" % v


def significant(v, digits=3):
    """v with `digits` significant digits in fixed notation, trailing zeros
    kept, so that a column reads alike: 0.000496 and 0.000500, never
    0.0005 beside 0.000496 (%g drops zeros) nor 5e-04."""
    if v == 0:
        return "0"
    rounded = float("%.*g" % (digits, v))  # 0.099996 -> 0.1: one more decade
    decimals = digits - 1 - math.floor(math.log10(abs(rounded)))
    return "%.*f" % (max(decimals, 0), v)

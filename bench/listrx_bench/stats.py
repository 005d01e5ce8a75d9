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


# ---- paired repetitions (the headline's speedups) ---------------------------
# A run whose ns/packet is more than STALL_FACTOR times the median of its
# cell's runs stalled: something else had its CPU for part of the run (the
# outlier rule of docs/measuring.md, "Pairs, stalls and the verdict"; the
# factor from the A/A measurement there).
STALL_FACTOR = 1.5
# fewer clean pairs than this resolve nothing
MIN_PAIRS = 3
# the confidence of the interval of a median (median_ci)
CONFIDENCE = 0.95


def stalled(values, factor=STALL_FACTOR):
    """{key: ns/packet} of one cell's runs -> the keys of the runs that
    stalled (slower than factor x the median). With fewer than three runs
    no run can be told from the others: none is flagged."""
    nums = {k: number(v) for k, v in values.items() if number(v) is not None}
    if len(nums) < 3:
        return set()
    med = statistics.median(nums.values())
    return {k for k, v in nums.items() if v > factor * med}


def median_ci(values, confidence=CONFIDENCE):
    """(low, high): the distribution-free confidence interval of a median
    from order statistics (the sign test's): the k-th smallest and k-th
    largest value, k the largest for which the binomial tail stays within
    (1 - confidence) / 2. Up to 8 values that is [min, max] itself."""
    vals = sorted(v for v in (number(x) for x in values) if v is not None)
    n = len(vals)
    if not n:
        return None, None
    k, tail = 1, 0.0
    while True:
        tail += math.comb(n, k - 1) / 2 ** n  # P(X <= k - 1), X ~ Bin(n, 1/2)
        if tail > (1 - confidence) / 2 or k >= (n + 1) // 2:
            break
        k += 1
    k = max(k - 1, 1)
    return vals[k - 1], vals[n - k]


def paired(base, other, base_stalled=(), other_stalled=(), names=("base", "engine")):
    """Pairs of one rep each of two cells measured side by side: base and
    other are {rep: ns/packet}. Returns {"pairs": [(rep, base, other)],
    "clean": the pairs whose sides both ran normally, "left_out":
    [(rep, why)] for the pairs where a side stalled}."""
    out = {"pairs": [], "clean": [], "left_out": []}
    for rep in sorted(set(base) & set(other)):
        b, o = number(base[rep]), number(other[rep])
        if not b or not o:
            continue
        out["pairs"].append((rep, b, o))
        why = [side for side, bad in ((names[0], rep in base_stalled),
                                      (names[1], rep in other_stalled)) if bad]
        if why:
            out["left_out"].append((rep, " and ".join(why) + " stalled"))
        else:
            out["clean"].append((rep, b, o))
    return out


def speedup(base, other, names=("base", "engine")):
    """The speedup of a cell over its base (the packet engine's cell of
    the same burst and footprint), paired by repetition: base and other
    are {rep: ns/packet}. Pairs with a stalled side are left out (their
    reps and why in "left_out"); the rest give the median of base ÷ other
    with [min, max], the confidence interval of that median, its width in %
    of the median ("spread_pct"), the ns/packet saved (median of the
    differences) and the reps used ("reps"), from which the per-engine
    figures beside the speedup are taken."""
    p = paired(base, other, stalled(base), stalled(other), names)
    ratios = [b / o for _, b, o in p["clean"]]
    s = summary(ratios)
    lo, hi = median_ci(ratios)
    base_med = median(b for _, b, _ in p["clean"])
    other_med = median(o for _, _, o in p["clean"])
    return {"n": s["n"], "pairs": len(p["pairs"]), "median": s["median"], "min": s["min"],
            "max": s["max"], "ci_low": lo, "ci_high": hi,
            "spread_pct": (hi - lo) / s["median"] * 100 if s["median"] else None,
            "saved_ns": median(b - o for _, b, o in p["clean"]),
            "ratio_of_medians": base_med / other_med if base_med and other_med else None,
            "reps": [rep for rep, _, _ in p["clean"]],
            "left_out": [{"rep": rep, "why": why} for rep, why in p["left_out"]]}


def resolution(sp):
    """(resolved, why) of a speedup(): resolved when at least MIN_PAIRS
    clean pairs agree on the side of 1.0 ([min, max] does not span it) and
    the median ratio and the ratio of the median ns/packet agree too."""
    if sp["n"] < MIN_PAIRS:
        return False, "%d clean pair(s), %d needed" % (sp["n"], MIN_PAIRS)
    if sp["min"] <= 1.0 <= sp["max"]:
        return False, "[min–max] spans 1.0"
    rom = sp["ratio_of_medians"]
    if rom is not None and (sp["median"] - 1.0) * (rom - 1.0) < 0:
        return False, "the median of the ratios and the ratio of the medians disagree"
    return True, "resolved"

"""Medians and spreads; measures that could not be taken are strings that
start with "unavailable:" (never zeros)."""

import math
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


# ---- comparisons: one definition for every verdict --------------------------
# A comparison is a set of pairs (base, other) of one cost measured side by
# side under the same conditions: repetition r of two cells of a sweep
# (alternating runs), adjacent windows of two settings in one run. Its figure
# is the median of the per-pair ratios base / other (> 1: other costs less),
# its interval the distribution-free interval of that median from order
# statistics (the sign test's), and it is resolved when that interval
# excludes the reference (1.0: no difference). The headline, cree, scale and
# kernel all call compare(); docs/measuring.md, "One comparison".

# the confidence of every interval of a median
CONFIDENCE = 0.95


def _min_pairs(confidence):
    """The fewest pairs whose widest interval, [min, max], covers the
    median with this confidence: 1 - 2 / 2^n >= confidence (6 at 95 %)."""
    n = 1
    while 1.0 - 2.0 ** (1 - n) < confidence:
        n += 1
    return n


# fewer pairs than this have no 95 % interval at all: nothing resolves
MIN_PAIRS = _min_pairs(CONFIDENCE)


def _half_binomial_pmf(n, j):
    """P(X = j), X ~ Bin(n, 1/2), through lgamma: no overflow at thousands
    of pairs."""
    return math.exp(math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)
                    - n * math.log(2.0))


def median_interval(values, confidence=CONFIDENCE):
    """(low, high, level): the distribution-free interval of a median from
    order statistics, the k-th smallest and the k-th largest value, k the
    largest for which the interval still covers the median with
    `confidence` (level: its exact coverage, 1 - 2 P(X < k), X ~ Bin(n, 1/2),
    for independent pairs). Under MIN_PAIRS values no k reaches it: [min,
    max] with its lower level. (None, None, None) without values."""
    vals = sorted(v for v in (number(x) for x in values) if v is not None)
    n = len(vals)
    if not n:
        return None, None, None
    k, below = 1, _half_binomial_pmf(n, 0)  # below = P(X <= k - 1)
    while k < (n + 1) // 2:
        wider = below + _half_binomial_pmf(n, k)
        if 1.0 - 2.0 * wider < confidence:
            break
        below, k = wider, k + 1
    return vals[k - 1], vals[n - k], max(0.0, 1.0 - 2.0 * below)


def _geometric_mean(values):
    """Of the one or two middle pairs' figures (one: itself, exactly)."""
    return math.prod(values) ** (1.0 / len(values))


def compare(pairs, reference=1.0, shared=None, left_out=(), confidence=CONFIDENCE):
    """One comparison of two sides measured in pairs.

    pairs: [(key, base, other)], base and other the same cost (ns per
    packet, ns per frame...) of the two sides, measured side by side; a
    pair without a positive figure on both sides is left out ("no
    figure"). shared: the keys of the pairs of which a side shared its CPU
    with other work (None: not recorded). left_out: [(key, why)] of pairs
    the caller left out (a stalled run, a disturbed window), carried into
    the result.

    Returns {"pairs": n, "keys": [key...] used, "ratios": [base/other...],
    "ratio": the median ratio, "ci": [low, high] (median_interval),
    "level": that interval's coverage, "min", "max", "width_pct": the
    interval's width in % of the ratio, "base", "other": the sides of the
    median pair, "saving": base - other, "median_keys": the median pair's
    key(s), "reference", "resolved", "resolution" (why, in words),
    "shared": pairs that shared their CPU (None: not recorded),
    "left_out": [{"key", "why"}]}.

    The median pair: the pair whose ratio is the median (n odd), or the
    geometric mean of the two middle pairs' sides (n even; the median
    ratio is then the geometric mean of the two middle ratios). So the
    figures printed beside the ratio come from the same pairs and agree
    with it exactly: base / other = ratio, saving = base - other."""
    used, gone = [], [{"key": k, "why": why} for k, why in left_out]
    for key, base, other in pairs:
        b, o = number(base), number(other)
        if b is None or o is None or b <= 0 or o <= 0:
            gone.append({"key": key, "why": "no figure"})
        else:
            used.append((b / o, key, b, o))
    n = len(used)
    out = {"pairs": n, "keys": [key for _, key, _, _ in used],
           "ratios": [r for r, _, _, _ in used], "ratio": None, "ci": [None, None],
           "level": None, "min": None, "max": None, "width_pct": None, "base": None,
           "other": None, "saving": None, "median_keys": [], "reference": reference,
           "resolved": False, "shared": None, "left_out": gone}
    keys = set(out["keys"])
    if shared is not None:
        out["shared"] = len(keys & set(shared))
    if not n:
        out["resolution"] = "not resolved: no pair"
        return out
    ranked = sorted(used, key=lambda u: u[0])
    middle = ranked[(n - 1) // 2:n // 2 + 1]
    base, other = (_geometric_mean([m[2] for m in middle]),
                   _geometric_mean([m[3] for m in middle]))
    lo, hi, level = median_interval(out["ratios"], confidence)
    out.update(ratio=base / other, base=base, other=other, saving=base - other,
               median_keys=[m[1] for m in middle], min=ranked[0][0], max=ranked[-1][0],
               ci=[lo, hi], level=level, width_pct=(hi - lo) / (base / other) * 100.0)
    out["resolved"], out["resolution"] = resolve(out, confidence)
    return out


def resolve(c, confidence=CONFIDENCE):
    """(resolved, why) of a compare(): resolved when there are enough
    pairs for the interval to reach `confidence` and it excludes the
    reference."""
    pct = "%g %%" % (confidence * 100)
    if c["pairs"] < _min_pairs(confidence):
        return False, "not resolved: %d pair(s), a %s interval needs %d" % (
            c["pairs"], pct, _min_pairs(confidence))
    lo, hi = c["ci"]
    span = "[%.3f–%.3f]" % (lo, hi)
    if lo <= c["reference"] <= hi:
        return False, "not resolved: the %s interval %s spans %g" % (pct, span, c["reference"])
    return True, "resolved: the %s interval %s excludes %g" % (pct, span, c["reference"])


def at_median(c, values):
    """Another figure of the median pair (a rate of the same runs): values
    {key: value} -> the value at c's median key, or the geometric mean at
    the two (so that 1000 / ns and Mpps agree as the sides do)."""
    vals = [number(values.get(k)) for k in c["median_keys"]]
    if not vals or any(v is None or v <= 0 for v in vals):
        return None
    return _geometric_mean(vals)


def caveat(c, digits=2, figure=None, unit="×"):
    """The one wording of a comparison's figure and caveat, e.g. "1.38×
    [1.21–1.52], 11 pairs, 2 left out, 9 shared the CPU: resolved" (the
    bracket: the 95 % interval of the median). figure(value) formats the
    ratio and the interval's ends (default: `digits` decimals), unit
    follows the ratio."""
    show = figure or (lambda r: "%.*f" % (digits, r))
    if c["ratio"] is None:
        return "no pair (%d left out): not resolved" % len(c["left_out"])
    text = "%s%s [%s–%s], %d pair%s" % (show(c["ratio"]), unit, show(c["ci"][0]),
                                        show(c["ci"][1]), c["pairs"],
                                        "" if c["pairs"] == 1 else "s")
    if c["left_out"]:
        text += ", %d left out" % len(c["left_out"])
    text += (", CPU sharing not recorded" if c["shared"] is None
             else ", %d shared the CPU" % c["shared"])
    if c["resolved"]:
        return text + ": resolved"
    return text + ": not resolved (%s)" % c["resolution"][len("not resolved: "):]


# ---- paired repetitions (the headline's speedups) ---------------------------
# A run whose ns/packet is more than STALL_FACTOR times the median of its
# cell's runs stalled: something else had its CPU for part of the run (the
# outlier rule of docs/measuring.md, "Pairs, stalls and the verdict"; the
# factor from the A/A measurement there).
STALL_FACTOR = 1.5


def stalled(values, factor=STALL_FACTOR):
    """{key: ns/packet} of one cell's runs -> the keys of the runs that
    stalled (slower than factor x the median). With fewer than three runs
    no run can be told from the others: none is flagged."""
    nums = {k: number(v) for k, v in values.items() if number(v) is not None}
    if len(nums) < 3:
        return set()
    med = statistics.median(nums.values())
    return {k for k, v in nums.items() if v > factor * med}


def speedup(base, other, names=("base", "engine"), shared=None):
    """The speedup of a cell over its base (the packet engine's cell of
    the same burst and footprint), paired by repetition: base and other
    are {rep: ns/packet}, names the two sides' names. A pair with a
    stalled side is left out ("rep 2: burst stalled"); the rest are one
    compare(). shared: the reps in which a side shared its CPU (None: not
    recorded)."""
    gone, pairs = [], []
    stalls = (stalled(base), stalled(other))
    for rep in sorted(set(base) & set(other)):
        why = [name for name, reps in zip(names, stalls) if rep in reps]
        if why:
            gone.append((rep, " and ".join(why) + " stalled"))
        else:
            pairs.append((rep, base[rep], other[rep]))
    return compare(pairs, shared=shared, left_out=gone)

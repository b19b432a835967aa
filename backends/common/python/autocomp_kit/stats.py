"""Summaries of timed samples (milliseconds) and the paired speedup with its interval."""
import math
import random
import statistics


def summary(samples):
    """mean, median, std (population), min, max and n of a non-empty list of samples."""
    s = sorted(samples)
    if not s:
        raise ValueError("no samples")
    return {'mean': statistics.fmean(s), 'median': statistics.median(s),
            'std': statistics.pstdev(s) if len(s) > 1 else 0.0, 'min': s[0], 'max': s[-1], 'n': len(s)}


def rounded(summary_, digits=6):
    return {k: (round(v, digits) if isinstance(v, float) else v) for k, v in summary_.items()}


def fmt_ms(value):
    """3 significant digits, in µs below 0.01 ms."""
    return f"{value:.3g} ms" if value >= 0.01 else f"{value * 1000:.3g} µs"


def paired_speedup(baseline, candidate, level=0.95, resamples=2000, seed=1):
    """The speedup mean(baseline) / mean(candidate) of samples taken in pairs (call i of each side timed back to
    back), with a bootstrap interval over the pairs at `level`: (speedup, low, high). A fixed resampling seed
    makes the interval a function of the samples alone."""
    n = min(len(baseline), len(candidate))
    if n == 0:
        raise ValueError("no paired samples")
    pairs = list(zip(baseline[:n], candidate[:n]))

    def ratio(ps):
        c = math.fsum(p[1] for p in ps)
        return math.fsum(p[0] for p in ps) / c if c > 0 else math.inf
    point = ratio(pairs)
    if n < 2:
        return point, point, point
    rng = random.Random(seed)
    draws = sorted(ratio([pairs[rng.randrange(n)] for _ in range(n)]) for _ in range(resamples))
    cut = (1 - level) / 2
    return point, draws[int(cut * (resamples - 1))], draws[int((1 - cut) * (resamples - 1))]


def median_interval(ratios):
    """The median of paired ratios with the distribution-free ~95 % interval the C/C++ kit gives (stats.h:
    order statistics at ranks n/2 -+ 0.98*sqrt(n), clamped to the sample): (median, low, high)."""
    r = sorted(ratios)
    if not r:
        raise ValueError("no ratios")
    n = len(r)
    half = 0.98 * math.sqrt(n)
    lo = max(0, math.floor(n / 2 - half) - 1)
    hi = min(n - 1, math.ceil(n / 2 + half))
    return statistics.median(r), r[lo], r[hi]


def paired_ratio(candidate, baseline):
    """result.json's metrics.paired_ratio for samples timed in pairs (candidate call i and baseline call i back to
    back, in alternating order): {'value': the median of candidate/baseline over the pairs, 'ci_low', 'ci_high':
    its ~95 % interval, 'pairs': n}. The evaluator makes the score the baseline's score times `value`, and ranks
    by the interval (scaled the same way) widened by the target's noise floor."""
    pairs = [(c, b) for c, b in zip(candidate, baseline) if b > 0]
    if not pairs:
        raise ValueError("no paired samples")
    value, low, high = median_interval([c / b for c, b in pairs])
    return {'value': value, 'ci_low': low, 'ci_high': high, 'pairs': len(pairs)}

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

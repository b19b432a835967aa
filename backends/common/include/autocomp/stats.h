// autocomp/stats.h — summary statistics of timings and the interval of a paired ratio (C++17).
//
// Part of the judge kit (backends/common/include).
//   stats            median, mean, p99 (nearest rank), min and sample standard deviation; zeros for
//                    an empty sample.
//   median_interval  the median of paired ratios (candidate / baseline, one per ABBA pair) with a
//                    distribution-free ~95 % interval: order statistics at ranks n/2 -+ 0.98*sqrt(n)
//                    (binomial(n, 1/2), normal approximation), clamped to the sample.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace autocomp {
namespace kit {

struct Stats {
    double median = 0, mean = 0, p99 = 0, min = 0, stddev = 0;
    std::size_t n = 0;
};

inline double median_of_sorted(const std::vector<double>& v) {
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

inline Stats stats(std::vector<double> v) {
    Stats s;
    s.n = v.size();
    if (v.empty())
        return s;
    std::sort(v.begin(), v.end());
    s.min = v.front();
    s.median = median_of_sorted(v);
    const std::size_t rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size())));
    s.p99 = v[std::min(v.size() - 1, rank > 0 ? rank - 1 : 0)];
    double sum = 0;
    for (double x : v)
        sum += x;
    s.mean = sum / static_cast<double>(v.size());
    double sq = 0;
    for (double x : v)
        sq += (x - s.mean) * (x - s.mean);
    s.stddev = v.size() > 1 ? std::sqrt(sq / static_cast<double>(v.size() - 1)) : 0.0;
    return s;
}

struct RatioEstimate {
    double value = 0, low = 0, high = 0;
    std::size_t n = 0;
};

inline RatioEstimate median_interval(std::vector<double> r) {
    RatioEstimate e;
    e.n = r.size();
    if (r.empty())
        return e;
    std::sort(r.begin(), r.end());
    const double n = static_cast<double>(r.size());
    e.value = median_of_sorted(r);
    const double half = 0.98 * std::sqrt(n);
    const long lo = std::max(0L, static_cast<long>(std::floor(n / 2 - half)) - 1);
    const long hi = std::min(static_cast<long>(r.size()) - 1, static_cast<long>(std::ceil(n / 2 + half)));
    e.low = r[static_cast<std::size_t>(lo)];
    e.high = r[static_cast<std::size_t>(hi)];
    return e;
}

} // namespace kit
} // namespace autocomp

// autocomp/timing.h — batching to a minimum timed window, and paired (ABBA) timing rounds with the
// interval of their ratio (C++17).
//
// Part of the judge kit (backends/common/include). The judge times every batch itself (its clock, its
// process); what is here decides how many calls a batch holds, in which order the candidate (arm 0)
// and its baseline (arm 1) run, and when enough rounds were timed.
//   calls_per_batch  enough calls that one batch lasts at least `window_ms` (so a per-request cost of
//                    microseconds stays small beside it), at least 1, at most `max_calls`; a per-call time
//                    of zero or less (too short to see) gives `max_calls`.
//   net_batch_ns     a batch's measured time with the protocol's own cost taken off, never more than
//                    `kMaxOverheadShare` of what was measured: the cost is estimated from empty requests
//                    and is a few microseconds beside a window of milliseconds, so the bound changes
//                    nothing when things are as they should be, and keeps a cost measured in a bad moment
//                    (an empty request that waited for a busy CPU) from eating the batch and turning a
//                    13 us kernel into a 0.4 us one.
//   Rounds           round r runs the arms in the order 0,1 when r is even and 1,0 when odd (ABBA), so
//                    a slow phase of the machine moves both arms of a pair. With two arms each round
//                    gives one ratio (arm 0 / arm 1 per call); the estimate is their median with its
//                    interval (stats.h). Timing stops after at least `min_rounds` once the interval's
//                    half-width (paired) or the standard error of the mean (one arm) is under
//                    `target_half_width` of the value, or the budget is spent; never after `max_rounds`.
#pragma once

#include "autocomp/stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace autocomp {
namespace kit {

inline std::size_t calls_per_batch(double per_call_ms, double window_ms, std::size_t max_calls) {
    if (!(per_call_ms > 0))
        return std::max<std::size_t>(1, max_calls);
    const double r = std::ceil(window_ms / per_call_ms);
    if (r >= static_cast<double>(max_calls))
        return std::max<std::size_t>(1, max_calls);
    return std::max<std::size_t>(1, static_cast<std::size_t>(r));
}

// The largest share of a batch's measured time that the protocol's estimated cost may take off it.
constexpr double kMaxOverheadShare = 0.01;

inline double net_batch_ns(double measured_ns, double overhead_ns) {
    if (!(measured_ns > 0))
        return 0.0;
    return measured_ns - std::min(std::max(0.0, overhead_ns), kMaxOverheadShare * measured_ns);
}

class Rounds {
public:
    explicit Rounds(std::size_t arms, std::size_t min_rounds = 6, std::size_t max_rounds = 400, double target_half_width = 0.005)
        : m_times(arms), m_last(arms), m_min(min_rounds), m_max(max_rounds), m_target(target_half_width) {}

    bool paired() const { return m_times.size() > 1; }
    std::size_t arms() const { return m_times.size(); }
    std::size_t max_rounds() const { return m_max; }
    // The arm that runs k-th in round `round` (ABBA when paired).
    std::size_t arm(std::size_t round, std::size_t k) const { return paired() && round % 2 == 1 ? arms() - 1 - k : k; }

    // One arm's time per call in this round.
    void add(std::size_t arm, double per_call_ms) {
        m_times[arm].push_back(per_call_ms);
        m_last[arm] = per_call_ms;
    }
    // After every arm of a round was added: the round's ratio, when paired.
    void end_round() {
        if (paired())
            m_ratios.push_back(m_last[0] / m_last[1]);
    }
    // Whether to stop after round `round` (0-based), `elapsed_ms` into the timing.
    bool done(std::size_t round, double elapsed_ms, double budget_ms) const {
        if (round + 1 >= m_max)
            return true;
        if (round + 1 < m_min)
            return false;
        bool converged;
        if (paired()) {
            const RatioEstimate e = median_interval(m_ratios);
            converged = e.value > 0 && 0.5 * (e.high - e.low) / e.value < m_target;
        } else {
            const Stats st = stats(m_times[0]);
            converged = st.mean > 0 && st.stddev / std::sqrt(static_cast<double>(st.n)) / st.mean < m_target;
        }
        return converged || elapsed_ms > budget_ms;
    }
    // The least time per call of an arm's last `last` rounds (0 before its first): what the next
    // batch is expected to take.
    double recent_min(std::size_t arm, std::size_t last = 5) const {
        const auto& t = m_times[arm];
        if (t.empty())
            return 0.0;
        return *std::min_element(t.end() - static_cast<std::ptrdiff_t>(std::min(t.size(), last)), t.end());
    }
    const std::vector<double>& times(std::size_t arm) const { return m_times[arm]; }
    const std::vector<double>& ratios() const { return m_ratios; }
    RatioEstimate ratio() const { return median_interval(m_ratios); }

private:
    std::vector<std::vector<double>> m_times;
    std::vector<double> m_last, m_ratios;
    std::size_t m_min, m_max;
    double m_target;
};

} // namespace kit
} // namespace autocomp

// Trusted reference: per row, the log-sum-exp is computed in double precision around the row maximum
// and each output is exp(x - lse) evaluated in double, rounded once to float. Written independently
// of softmax_start.cpp.
#include <cmath>
#include <cstddef>

extern "C" void softmax(int rows, int cols, const float* x, float* y) {
    const std::size_t n = static_cast<std::size_t>(cols);
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
        const float* row = x + r * n;
        double peak = -INFINITY;
        for (std::size_t c = 0; c < n; ++c)
            peak = std::fmax(peak, static_cast<double>(row[c]));
        double total = 0.0;
        for (std::size_t c = n; c-- > 0;)
            total += std::exp(static_cast<double>(row[c]) - peak);
        const double lse = peak + std::log(total);
        for (std::size_t c = 0; c < n; ++c)
            y[r * n + c] = static_cast<float>(std::exp(static_cast<double>(row[c]) - lse));
    }
}

// Trusted reference of the CUDA softmax problem, on the host: per row, the maximum, then the
// log-sum-exp in double, each output exp(x - lse) in double rounded once to float.
#include <cmath>
#include <cstddef>

extern "C" void softmax_reference(int rows, int cols, const float* x, float* y) {
    const std::size_t n = static_cast<std::size_t>(cols);
#pragma omp parallel for schedule(static)
    for (int r = 0; r < rows; ++r) {
        const float* row = x + static_cast<std::size_t>(r) * n;
        double peak = -INFINITY;
        for (std::size_t c = 0; c < n; ++c)
            peak = std::fmax(peak, static_cast<double>(row[c]));
        double total = 0.0;
        for (std::size_t c = 0; c < n; ++c)
            total += std::exp(static_cast<double>(row[c]) - peak);
        const double lse = peak + std::log(total);
        for (std::size_t c = 0; c < n; ++c)
            y[static_cast<std::size_t>(r) * n + c] = static_cast<float>(std::exp(static_cast<double>(row[c]) - lse));
    }
}

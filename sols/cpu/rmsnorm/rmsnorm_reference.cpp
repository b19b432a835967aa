// Trusted reference: per row, the sum of squares is accumulated in double precision from the last
// column to the first, and each output is weight * x / rms evaluated in double, rounded once to
// float. eps = 1e-6, inside the square root. Written independently of rmsnorm_start.cpp.
#include <cmath>
#include <cstddef>

extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y) {
    const double eps = 1e-6;
    const std::size_t n = static_cast<std::size_t>(cols);
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
        const float* row = x + r * n;
        double total = 0.0;
        for (std::size_t c = n; c-- > 0;) {
            const double v = row[c];
            total += v * v;
        }
        const double rms = std::sqrt(total / static_cast<double>(n) + eps);
        for (std::size_t c = 0; c < n; ++c)
            y[r * n + c] = static_cast<float>(static_cast<double>(weight[c]) * static_cast<double>(row[c]) / rms);
    }
}

// Trusted reference: per row, mean and (biased) variance from Welford's single-pass update in double
// precision; each output is evaluated in double and rounded once to float. eps = 1e-5, inside the
// square root. Written independently of layernorm_start.cpp.
#include <cmath>
#include <cstddef>

extern "C" void layernorm(int rows, int cols, const float* x, const float* gamma, const float* beta, float* y) {
    const double eps = 1e-5;
    const std::size_t n = static_cast<std::size_t>(cols);
    for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
        const float* row = x + r * n;
        double mean = 0.0, m2 = 0.0;
        for (std::size_t c = 0; c < n; ++c) {
            const double v = row[c];
            const double delta = v - mean;
            mean += delta / static_cast<double>(c + 1);
            m2 += delta * (v - mean);
        }
        const double rstd = 1.0 / std::sqrt(m2 / static_cast<double>(n) + eps);
        for (std::size_t c = 0; c < n; ++c)
            y[r * n + c] = static_cast<float>((static_cast<double>(row[c]) - mean) * rstd * gamma[c] + beta[c]);
    }
}

// Starting point: per row, a scalar pass for the mean, one for the variance and one to normalize
// (the compiler's auto-vectorizer is switched off for these loops, so the search starts from scalar
// code). eps = 1e-5 inside the square root; the variance is the biased one (divided by cols).
#include <cmath>

extern "C" void layernorm(int rows, int cols, const float* x, const float* gamma, const float* beta, float* y) {
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float* out = y + r * cols;
        float sum = 0.0f;
#pragma clang loop vectorize(disable) interleave(disable)
        for (int c = 0; c < cols; ++c)
            sum += in[c];
        const float mean = sum / static_cast<float>(cols);
        float var = 0.0f;
#pragma clang loop vectorize(disable) interleave(disable)
        for (int c = 0; c < cols; ++c)
            var += (in[c] - mean) * (in[c] - mean);
        const float rstd = 1.0f / std::sqrt(var / static_cast<float>(cols) + 1e-5f);
#pragma clang loop vectorize(disable) interleave(disable)
        for (int c = 0; c < cols; ++c)
            out[c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
    }
}

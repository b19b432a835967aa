// Starting point: row-wise layer normalization in three passes (mean, variance, normalize).
// y = (x - mean) / sqrt(var + eps) * gamma + beta, var = mean of (x - mean)^2, eps = 1e-5.
#include <cmath>

extern "C" void layernorm(int rows, int cols, const float* x, const float* gamma, const float* beta, float* y) {
    const float eps = 1e-5f;
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float* out = y + r * cols;
        float sum = 0.0f;
        for (int c = 0; c < cols; ++c)
            sum += in[c];
        const float mean = sum / cols;
        float sq = 0.0f;
        for (int c = 0; c < cols; ++c)
            sq += (in[c] - mean) * (in[c] - mean);
        const float var = sq / cols;
        const float inv = 1.0f / std::sqrt(var + eps);
        for (int c = 0; c < cols; ++c)
            out[c] = (in[c] - mean) * inv * gamma[c] + beta[c];
    }
}

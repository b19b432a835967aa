// Deliberately wrong layernorm: eps is left out of the square root, which only matters for rows whose
// variance is comparable to eps (the "quiet" rows).
#include <cmath>

extern "C" void layernorm(int rows, int cols, const float* x, const float* gamma, const float* beta, float* y) {
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float mean = 0.0f;
        for (int c = 0; c < cols; ++c)
            mean += in[c];
        mean /= cols;
        float var = 0.0f;
        for (int c = 0; c < cols; ++c)
            var += (in[c] - mean) * (in[c] - mean);
        var /= cols;
        const float inv = var > 0.0f ? 1.0f / std::sqrt(var) : 0.0f;
        for (int c = 0; c < cols; ++c)
            y[r * cols + c] = (in[c] - mean) * inv * gamma[c] + beta[c];
    }
}

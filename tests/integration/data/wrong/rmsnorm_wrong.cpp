// Deliberately wrong rmsnorm: eps is added after the square root instead of inside it.
#include <cmath>

extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y) {
    for (int r = 0; r < rows; ++r) {
        float sq = 0.0f;
        for (int c = 0; c < cols; ++c)
            sq += x[r * cols + c] * x[r * cols + c];
        const float inv = 1.0f / (std::sqrt(sq / cols) + 1e-6f);
        for (int c = 0; c < cols; ++c)
            y[r * cols + c] = x[r * cols + c] * inv * weight[c];
    }
}

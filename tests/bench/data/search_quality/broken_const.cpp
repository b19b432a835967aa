// search_quality variant broken_const: writes through the const input pointer (does not compile).
#include <cmath>

extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y) {
    const float eps = 1e-6f;
    (void)y;
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float sq = 0.0f;
        for (int c = 0; c < cols; ++c)
            sq += in[c] * in[c];
        const float inv = 1.0f / std::sqrt(sq / cols + eps);
        for (int c = 0; c < cols; ++c)
            in[c] = in[c] * inv * weight[c];
    }
}

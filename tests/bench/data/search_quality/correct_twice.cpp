// search_quality variant correct_twice: sums the squares twice (forward and backward) and averages them (slow).
#include <cmath>

extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y) {
    const float eps = 1e-6f;
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float* out = y + r * cols;
        float forward = 0.0f;
        for (int c = 0; c < cols; ++c)
            forward += in[c] * in[c];
        float backward = 0.0f;
        for (int c = cols - 1; c >= 0; --c)
            backward += in[c] * in[c];
        const float sq = 0.5f * (forward + backward);
        const float inv = 1.0f / std::sqrt(sq / cols + eps);
        for (int c = 0; c < cols; ++c)
            out[c] = in[c] * inv * weight[c];
    }
}

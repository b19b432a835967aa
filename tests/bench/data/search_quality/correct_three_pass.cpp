// search_quality variant correct_three_pass: scales, then multiplies by the weight in a third pass (more traffic).
#include <cmath>

extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y) {
    const float eps = 1e-6f;
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float* out = y + r * cols;
        float sq = 0.0f;
        for (int c = 0; c < cols; ++c)
            sq += in[c] * in[c];
        const float inv = 1.0f / std::sqrt(sq / cols + eps);
        for (int c = 0; c < cols; ++c)
            out[c] = in[c] * inv;
        for (int c = 0; c < cols; ++c)
            out[c] = out[c] * weight[c];
    }
}

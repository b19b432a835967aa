// search_quality variant wrong_cols_minus_one: divides the sum of squares by cols - 1.
#include <cmath>

extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y) {
    const float eps = 1e-6f;
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float* out = y + r * cols;
        float sq = 0.0f;
        for (int c = 0; c < cols; ++c)
            sq += in[c] * in[c];
        const float inv = 1.0f / std::sqrt(sq / (cols > 1 ? cols - 1 : 1) + eps);
        for (int c = 0; c < cols; ++c)
            out[c] = in[c] * inv * weight[c];
    }
}

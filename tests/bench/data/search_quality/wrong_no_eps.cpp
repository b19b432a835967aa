// search_quality variant wrong_no_eps: forgets eps (wrong on the quiet rows).
#include <cmath>

extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y) {
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float* out = y + r * cols;
        float sq = 0.0f;
        for (int c = 0; c < cols; ++c)
            sq += in[c] * in[c];
        const float inv = 1.0f / std::sqrt(sq / cols);
        for (int c = 0; c < cols; ++c)
            out[c] = in[c] * inv * weight[c];
    }
}

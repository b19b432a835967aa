// Known wrong (`autocomp targets check`): forgets to scale by the weight. Must be `incorrect`.
#include <cmath>

extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y) {
    (void)weight;
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float sq = 0.0f;
        for (int c = 0; c < cols; ++c)
            sq += in[c] * in[c];
        const float inv = 1.0f / std::sqrt(sq / cols + 1e-6f);
        for (int c = 0; c < cols; ++c)
            y[r * cols + c] = in[c] * inv;
    }
}

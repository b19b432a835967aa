// Wrong variant: eps added outside the square root, which only matters for the quiet rows whose
// variance is below eps (the harness makes every fourth row such a row).
#include <math.h>

extern "C" void layernorm(int rows, int cols, const float* x, const float* gamma, const float* beta, float* y) {
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float mean = 0.0f, var = 0.0f;
        for (int c = 0; c < cols; ++c)
            mean += in[c];
        mean /= static_cast<float>(cols);
        for (int c = 0; c < cols; ++c)
            var += (in[c] - mean) * (in[c] - mean);
        const float rstd = 1.0f / (sqrtf(var / static_cast<float>(cols)) + 1e-5f);
        for (int c = 0; c < cols; ++c)
            y[r * cols + c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
    }
}

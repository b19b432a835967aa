// Starting point: three scalar passes per row (max, sum of exp, scale), with libm's expf (the
// compiler's auto-vectorizer is switched off for these loops, so the search starts from scalar code).
#include <cmath>

extern "C" void softmax(int rows, int cols, const float* x, float* y) {
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float* out = y + r * cols;
        float peak = in[0];
#pragma clang loop vectorize(disable) interleave(disable)
        for (int c = 1; c < cols; ++c)
            peak = in[c] > peak ? in[c] : peak;
        float sum = 0.0f;
#pragma clang loop vectorize(disable) interleave(disable)
        for (int c = 0; c < cols; ++c) {
            out[c] = std::exp(in[c] - peak);
            sum += out[c];
        }
        const float inv = 1.0f / sum;
#pragma clang loop vectorize(disable) interleave(disable)
        for (int c = 0; c < cols; ++c)
            out[c] *= inv;
    }
}

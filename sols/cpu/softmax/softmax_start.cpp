// Starting point: row-wise numerically stable softmax in three passes (max, exp and sum, scale).
#include <cmath>

extern "C" void softmax(int rows, int cols, const float* x, float* y) {
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * cols;
        float* out = y + r * cols;
        float m = in[0];
        for (int c = 1; c < cols; ++c)
            if (in[c] > m)
                m = in[c];
        float sum = 0.0f;
        for (int c = 0; c < cols; ++c) {
            out[c] = std::exp(in[c] - m);
            sum += out[c];
        }
        for (int c = 0; c < cols; ++c)
            out[c] = out[c] / sum;
    }
}

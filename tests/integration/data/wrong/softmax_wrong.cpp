// Deliberately wrong softmax: not numerically stable (no max subtraction), so exp overflows to
// infinity or underflows to zero for the large-offset rows.
#include <cmath>

extern "C" void softmax(int rows, int cols, const float* x, float* y) {
    for (int r = 0; r < rows; ++r) {
        float sum = 0.0f;
        for (int c = 0; c < cols; ++c) {
            y[r * cols + c] = std::exp(x[r * cols + c]);
            sum += y[r * cols + c];
        }
        for (int c = 0; c < cols; ++c)
            y[r * cols + c] /= sum;
    }
}

// Wrong variant: no maximum subtracted, so exp() overflows to inf (or underflows to 0) for rows
// with a large offset, which the harness draws in every shape.
#include <math.h>

extern "C" void softmax(int rows, int cols, const float* x, float* y) {
    for (int r = 0; r < rows; ++r) {
        float sum = 0.0f;
        for (int c = 0; c < cols; ++c) {
            y[r * cols + c] = expf(x[r * cols + c]);
            sum += y[r * cols + c];
        }
        for (int c = 0; c < cols; ++c)
            y[r * cols + c] /= sum;
    }
}

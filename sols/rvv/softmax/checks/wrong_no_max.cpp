// Known wrong (`autocomp targets check`): divides by the row's length instead of the sum of the
// exponentials. Must be `incorrect`.
#include <cmath>

extern "C" void softmax(int rows, int cols, const float* x, float* y) {
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            y[r * cols + c] = std::exp(x[r * cols + c]) / float(cols);
}

// Trusted reference: walk the output in storage order and gather each element from the input
// (y row j is column j of x). Written independently of transpose_start.cpp.
#include <cstddef>

extern "C" void transpose(int rows, int cols, const float* x, float* y) {
    const std::size_t n_rows = static_cast<std::size_t>(rows), n_cols = static_cast<std::size_t>(cols);
    float* dst = y;
    for (std::size_t col = 0; col < n_cols; ++col)
        for (std::size_t row = 0; row < n_rows; ++row)
            *dst++ = x[row * n_cols + col];
}

// search_quality variant correct_renamed: the start kernel with other names and layout; the same machine code,
// so the same cost (an "improvement" by it is noise).
#include <cmath>

extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y)
{
    const float epsilon = 1e-6f;
    for (int row = 0; row < rows; ++row) {
        const float* src = x + row * cols;
        float* dst = y + row * cols;
        float sum_sq = 0.0f;
        for (int col = 0; col < cols; ++col) sum_sq += src[col] * src[col];
        const float scale = 1.0f / std::sqrt(sum_sq / cols + epsilon);
        for (int col = 0; col < cols; ++col) dst[col] = src[col] * scale * weight[col];
    }
}

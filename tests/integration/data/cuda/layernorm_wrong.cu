// Deliberately wrong layernorm: the unbiased variance (divides by cols - 1).
#include <cuda_runtime.h>

__global__ void layernorm_rows(int rows, int cols, const float* x, const float* gamma, const float* beta, float* y) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    const float* in = x + static_cast<size_t>(r) * cols;
    float sum = 0.0f;
    for (int c = 0; c < cols; ++c)
        sum += in[c];
    const float mean = sum / cols;
    float sq = 0.0f;
    for (int c = 0; c < cols; ++c)
        sq += (in[c] - mean) * (in[c] - mean);
    const float rstd = rsqrtf(sq / (cols > 1 ? cols - 1 : 1) + 1e-5f);
    for (int c = 0; c < cols; ++c)
        y[static_cast<size_t>(r) * cols + c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
}

extern "C" void layernorm(int rows, int cols, const float* x, const float* gamma, const float* beta, float* y) {
    layernorm_rows<<<(rows + 127) / 128, 128>>>(rows, cols, x, gamma, beta, y);
}

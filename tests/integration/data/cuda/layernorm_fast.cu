// layernorm, one warp per row: two passes for the statistics (sum, then squared deviations, each
// reduced with shuffles), one pass that writes; the row stays in L1/L2 between passes.
#include <cuda_runtime.h>

namespace {
__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__global__ void layernorm_warp(int rows, int cols, const float* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ y) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const float* in = x + static_cast<size_t>(row) * cols;
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32)
        s += in[c];
    const float mean = warp_sum(s) / cols;
    float sq = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        const float d = in[c] - mean;
        sq += d * d;
    }
    const float rstd = rsqrtf(warp_sum(sq) / cols + 1e-5f);
    float* out = y + static_cast<size_t>(row) * cols;
    for (int c = lane; c < cols; c += 32)
        out[c] = (in[c] - mean) * rstd * gamma[c] + beta[c];
}
} // namespace

extern "C" void layernorm(int rows, int cols, const float* x, const float* gamma, const float* beta, float* y) {
    layernorm_warp<<<(rows + 7) / 8, 256>>>(rows, cols, x, gamma, beta, y);
}

// softmax, one warp per row: an online pass (running maximum and rescaled sum, merged across lanes
// with shuffles), then one pass that writes exp(x - max) / sum.
#include <cuda_runtime.h>

namespace {
__global__ void softmax_warp(int rows, int cols, const float* __restrict__ x, float* __restrict__ y) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const float* in = x + static_cast<size_t>(row) * cols;
    float peak = -INFINITY, total = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        const float v = in[c];
        if (v > peak) {
            total = total * __expf(peak - v) + 1.0f;
            peak = v;
        } else {
            total += __expf(v - peak);
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float other_peak = __shfl_xor_sync(0xffffffffu, peak, o);
        const float other_total = __shfl_xor_sync(0xffffffffu, total, o);
        const float m = fmaxf(peak, other_peak);
        total = (peak == -INFINITY ? 0.0f : total * __expf(peak - m)) + (other_peak == -INFINITY ? 0.0f : other_total * __expf(other_peak - m));
        peak = m;
    }
    const float inv = 1.0f / total;
    float* out = y + static_cast<size_t>(row) * cols;
    for (int c = lane; c < cols; c += 32)
        out[c] = __expf(in[c] - peak) * inv;
}
} // namespace

extern "C" void softmax(int rows, int cols, const float* x, float* y) {
    softmax_warp<<<(rows + 7) / 8, 256>>>(rows, cols, x, y);
}

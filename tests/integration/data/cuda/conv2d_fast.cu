// conv2d with register blocking over filters: each thread computes 8 filters at one output position,
// so every input value it loads feeds 8 FMAs; the filter values are the same for the whole warp
// (broadcast loads through the read-only path).
#include <cuda_runtime.h>

namespace {
constexpr int KB = 8;

__global__ void __launch_bounds__(256) conv2d_kblock(int N, int C, int H, int W, int K, int R, int S, const float* __restrict__ x,
                                                    const float* __restrict__ w, float* __restrict__ y) {
    const int P = H - R + 1, Q = W - S + 1;
    const int pos = blockIdx.x * blockDim.x + threadIdx.x;
    const int k0 = blockIdx.y * KB, n = blockIdx.z;
    if (pos >= P * Q)
        return;
    const int p = pos / Q, q = pos % Q;
    float acc[KB] = {};
    for (int c = 0; c < C; ++c) {
        const float* xc = x + ((static_cast<size_t>(n) * C + c) * H + p) * W + q;
        for (int r = 0; r < R; ++r)
            for (int s = 0; s < S; ++s) {
                const float v = xc[r * W + s];
#pragma unroll
                for (int kk = 0; kk < KB; ++kk)
                    if (k0 + kk < K)
                        acc[kk] = fmaf(v, __ldg(w + ((static_cast<size_t>(k0 + kk) * C + c) * R + r) * S + s), acc[kk]);
            }
    }
#pragma unroll
    for (int kk = 0; kk < KB; ++kk)
        if (k0 + kk < K)
            y[((static_cast<size_t>(n) * K + k0 + kk) * P + p) * Q + q] = acc[kk];
}
} // namespace

extern "C" void conv2d(int N, int C, int H, int W, int K, int R, int S, const float* x, const float* w, float* y) {
    const int PQ = (H - R + 1) * (W - S + 1);
    const dim3 grid((PQ + 255) / 256, (K + KB - 1) / KB, N);
    conv2d_kblock<<<grid, 256>>>(N, C, H, W, K, R, S, x, w, y);
}

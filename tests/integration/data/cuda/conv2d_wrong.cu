// Deliberately wrong conv2d: the last filter column (s = S - 1) is skipped.
#include <cuda_runtime.h>

__global__ void conv2d_short(int N, int C, int H, int W, int K, int R, int S, const float* x, const float* w, float* y) {
    const int P = H - R + 1, Q = W - S + 1;
    const long long total = static_cast<long long>(N) * K * P * Q;
    const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i >= total)
        return;
    const int q = i % Q, p = (i / Q) % P, k = (i / (static_cast<long long>(Q) * P)) % K;
    const int n = i / (static_cast<long long>(Q) * P * K);
    float acc = 0.0f;
    for (int c = 0; c < C; ++c)
        for (int r = 0; r < R; ++r)
            for (int s = 0; s + 1 < S; ++s)
                acc += x[((static_cast<size_t>(n) * C + c) * H + p + r) * W + q + s] * w[((static_cast<size_t>(k) * C + c) * R + r) * S + s];
    y[i] = acc;
}

extern "C" void conv2d(int N, int C, int H, int W, int K, int R, int S, const float* x, const float* w, float* y) {
    const long long total = static_cast<long long>(N) * K * (H - R + 1) * (W - S + 1);
    conv2d_short<<<static_cast<unsigned>((total + 255) / 256), 256>>>(N, C, H, W, K, R, S, x, w, y);
}

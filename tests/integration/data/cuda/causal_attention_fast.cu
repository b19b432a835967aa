// causal attention, one warp per query row: the keys in chunks of 1024; per chunk the lanes compute
// scores for keys lane, lane+32, ... into shared memory, the warp merges the chunk's maximum into the
// running one (online softmax), and each lane accumulates its output dimensions (lane, lane+32, ...)
// over the chunk's weighted value rows (coalesced reads of V). d up to 256.
#include <cuda_runtime.h>

namespace {
constexpr int kWarps = 4, kChunk = 1024, kMaxD = 256;

__global__ void __launch_bounds__(kWarps * 32) attention_warp(int seq, int d, const float* __restrict__ Q, const float* __restrict__ K,
                                                              const float* __restrict__ V, float* __restrict__ out) {
    __shared__ float s_q[kWarps][kMaxD];
    __shared__ float s_w[kWarps][kChunk];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int i = blockIdx.x * kWarps + warp;
    if (i >= seq)
        return;
    const float scale = rsqrtf(static_cast<float>(d));
    for (int t = lane; t < d; t += 32)
        s_q[warp][t] = Q[static_cast<size_t>(i) * d + t] * scale;
    __syncwarp();
    float acc[kMaxD / 32] = {};
    float peak = -INFINITY, norm = 0.0f;
    for (int j0 = 0; j0 <= i; j0 += kChunk) {
        const int j1 = min(i + 1, j0 + kChunk);
        float chunk_peak = -INFINITY;
        for (int j = j0 + lane; j < j1; j += 32) {
            const float* k = K + static_cast<size_t>(j) * d;
            float s = 0.0f;
            for (int t = 0; t < d; ++t)
                s = fmaf(s_q[warp][t], k[t], s);
            s_w[warp][j - j0] = s;
            chunk_peak = fmaxf(chunk_peak, s);
        }
        for (int o = 16; o > 0; o >>= 1)
            chunk_peak = fmaxf(chunk_peak, __shfl_xor_sync(0xffffffffu, chunk_peak, o));
        const float new_peak = fmaxf(peak, chunk_peak);
        const float shrink = peak == -INFINITY ? 0.0f : __expf(peak - new_peak);
        __syncwarp();
        float part = 0.0f;
        for (int j = j0 + lane; j < j1; j += 32) {
            const float wgt = __expf(s_w[warp][j - j0] - new_peak);
            s_w[warp][j - j0] = wgt;
            part += wgt;
        }
        for (int o = 16; o > 0; o >>= 1)
            part += __shfl_xor_sync(0xffffffffu, part, o);
        norm = norm * shrink + part;
        peak = new_peak;
        __syncwarp();
#pragma unroll
        for (int u = 0; u < kMaxD / 32; ++u)
            acc[u] *= shrink;
        for (int j = j0; j < j1; ++j) {
            const float wgt = s_w[warp][j - j0];
            const float* v = V + static_cast<size_t>(j) * d;
#pragma unroll
            for (int u = 0; u < kMaxD / 32; ++u) {
                const int t = lane + 32 * u;
                if (t < d)
                    acc[u] = fmaf(wgt, v[t], acc[u]);
            }
        }
        __syncwarp();
    }
    const float inv = 1.0f / norm;
#pragma unroll
    for (int u = 0; u < kMaxD / 32; ++u) {
        const int t = lane + 32 * u;
        if (t < d)
            out[static_cast<size_t>(i) * d + t] = acc[u] * inv;
    }
}

// Any d: one thread per row (the starting code's method).
__global__ void attention_rows(int seq, int d, const float* Q, const float* K, const float* V, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= seq)
        return;
    const float scale = rsqrtf(static_cast<float>(d));
    float* o = out + static_cast<size_t>(i) * d;
    for (int t = 0; t < d; ++t)
        o[t] = 0.0f;
    float peak = -INFINITY, norm = 0.0f;
    for (int j = 0; j <= i; ++j) {
        float s = 0.0f;
        for (int t = 0; t < d; ++t)
            s += Q[static_cast<size_t>(i) * d + t] * K[static_cast<size_t>(j) * d + t];
        s *= scale;
        const float m = fmaxf(peak, s), shrink = expf(peak - m), wgt = expf(s - m);
        norm = norm * shrink + wgt;
        for (int t = 0; t < d; ++t)
            o[t] = o[t] * shrink + wgt * V[static_cast<size_t>(j) * d + t];
        peak = m;
    }
    for (int t = 0; t < d; ++t)
        o[t] /= norm;
}
} // namespace

extern "C" void causal_attention(int seq, int d, const float* Q, const float* K, const float* V, float* out) {
    if (d <= kMaxD)
        attention_warp<<<(seq + kWarps - 1) / kWarps, kWarps * 32>>>(seq, d, Q, K, V, out);
    else
        attention_rows<<<(seq + 63) / 64, 64>>>(seq, d, Q, K, V, out);
}

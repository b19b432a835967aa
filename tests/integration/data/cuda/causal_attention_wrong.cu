// Deliberately wrong attention: no causal mask (every query attends to every key).
#include <cuda_runtime.h>

__global__ void attention_unmasked(int seq, int d, const float* Q, const float* K, const float* V, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= seq)
        return;
    const float scale = rsqrtf(static_cast<float>(d));
    float* o = out + static_cast<size_t>(i) * d;
    for (int t = 0; t < d; ++t)
        o[t] = 0.0f;
    float peak = -INFINITY, norm = 0.0f;
    for (int j = 0; j < seq; ++j) {
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

extern "C" void causal_attention(int seq, int d, const float* Q, const float* K, const float* V, float* out) {
    attention_unmasked<<<(seq + 63) / 64, 64>>>(seq, d, Q, K, V, out);
}

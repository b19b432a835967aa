// Starting point: one thread per query row; online softmax over the keys 0..i, the running output
// row kept in global memory (out), rescaled when the maximum grows.
#include <cuda_runtime.h>

__global__ void attention_rows(int seq, int d, const float* Q, const float* K, const float* V, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= seq)
        return;
    const float scale = rsqrtf(static_cast<float>(d));
    const float* q = Q + static_cast<size_t>(i) * d;
    float* o = out + static_cast<size_t>(i) * d;
    for (int t = 0; t < d; ++t)
        o[t] = 0.0f;
    float peak = -INFINITY, norm = 0.0f;
    for (int j = 0; j <= i; ++j) {
        const float* k = K + static_cast<size_t>(j) * d;
        float s = 0.0f;
        for (int t = 0; t < d; ++t)
            s += q[t] * k[t];
        s *= scale;
        const float new_peak = fmaxf(peak, s);
        const float shrink = expf(peak - new_peak);
        const float w = expf(s - new_peak);
        norm = norm * shrink + w;
        const float* v = V + static_cast<size_t>(j) * d;
        for (int t = 0; t < d; ++t)
            o[t] = o[t] * shrink + w * v[t];
        peak = new_peak;
    }
    for (int t = 0; t < d; ++t)
        o[t] /= norm;
}

extern "C" void causal_attention(int seq, int d, const float* Q, const float* K, const float* V, float* out) {
    attention_rows<<<(seq + 63) / 64, 64>>>(seq, d, Q, K, V, out);
}

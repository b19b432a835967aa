// Deliberately wrong causal_attention: the mask is off by one, so each query also sees the next key
// (j <= i + 1), leaking one future token.
#include <cmath>
#include <vector>

extern "C" void causal_attention(int seq, int d, const float* Q, const float* K, const float* V, float* out) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    std::vector<float> p(seq);
    for (int i = 0; i < seq; ++i) {
        const int last = i + 1 < seq ? i + 1 : i;
        float m = -INFINITY;
        for (int j = 0; j <= last; ++j) {
            float dot = 0.0f;
            for (int t = 0; t < d; ++t)
                dot += Q[i * d + t] * K[j * d + t];
            p[j] = dot * scale;
            m = p[j] > m ? p[j] : m;
        }
        float sum = 0.0f;
        for (int j = 0; j <= last; ++j) {
            p[j] = std::exp(p[j] - m);
            sum += p[j];
        }
        for (int t = 0; t < d; ++t) {
            float acc = 0.0f;
            for (int j = 0; j <= last; ++j)
                acc += p[j] * V[j * d + t];
            out[i * d + t] = acc / sum;
        }
    }
}

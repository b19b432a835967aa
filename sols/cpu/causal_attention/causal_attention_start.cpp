// Starting point: one query row at a time. Scores against keys 0..i (the causal mask), a numerically
// stable softmax over them, then the weighted sum of value rows.
// out[i] = sum_{j<=i} softmax_j(Q[i].K[j] / sqrt(d)) * V[j]
#include <cmath>
#include <vector>

extern "C" void causal_attention(int seq, int d, const float* Q, const float* K, const float* V, float* out) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(d));
    std::vector<float> scores(seq);
    for (int i = 0; i < seq; ++i) {
        float m = -INFINITY;
        for (int j = 0; j <= i; ++j) {
            float dot = 0.0f;
            for (int t = 0; t < d; ++t)
                dot += Q[i * d + t] * K[j * d + t];
            scores[j] = dot * scale;
            if (scores[j] > m)
                m = scores[j];
        }
        float sum = 0.0f;
        for (int j = 0; j <= i; ++j) {
            scores[j] = std::exp(scores[j] - m);
            sum += scores[j];
        }
        for (int t = 0; t < d; ++t)
            out[i * d + t] = 0.0f;
        for (int j = 0; j <= i; ++j) {
            const float p = scores[j] / sum;
            for (int t = 0; t < d; ++t)
                out[i * d + t] += p * V[j * d + t];
        }
    }
}

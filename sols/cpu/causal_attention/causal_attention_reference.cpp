// Trusted reference: online (streaming) softmax in double precision. For each query row the keys
// 0..i are visited once; a running maximum, a running normalizer and a running weighted sum of value
// rows are rescaled whenever the maximum grows. The output row is divided by the normalizer at the
// end and rounded once to float. Written independently of causal_attention_start.cpp.
#include <cmath>
#include <cstddef>
#include <vector>

extern "C" void causal_attention(int seq, int d, const float* Q, const float* K, const float* V, float* out) {
    const std::size_t n = static_cast<std::size_t>(seq), dim = static_cast<std::size_t>(d);
    const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
    std::vector<double> acc(dim);
    for (std::size_t i = 0; i < n; ++i) {
        const float* q = Q + i * dim;
        double running_max = -INFINITY, norm = 0.0;
        for (double& a : acc)
            a = 0.0;
        for (std::size_t j = 0; j <= i; ++j) {
            const float* k = K + j * dim;
            double s = 0.0;
            for (std::size_t t = 0; t < dim; ++t)
                s += static_cast<double>(q[t]) * static_cast<double>(k[t]);
            s *= inv_sqrt_d;
            if (s > running_max) {
                const double shrink = std::exp(running_max - s);  // 0 on the first key
                norm *= shrink;
                for (double& a : acc)
                    a *= shrink;
                running_max = s;
            }
            const double weight = std::exp(s - running_max);
            norm += weight;
            const float* v = V + j * dim;
            for (std::size_t t = 0; t < dim; ++t)
                acc[t] += weight * static_cast<double>(v[t]);
        }
        for (std::size_t t = 0; t < dim; ++t)
            out[i * dim + t] = static_cast<float>(acc[t] / norm);
    }
}

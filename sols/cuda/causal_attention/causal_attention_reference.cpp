// Trusted reference of the CUDA causal_attention problem, on the host: for each query row, all
// scores q.k_j / sqrt(d) for j <= i in double, their maximum, the normalized weights and the
// weighted sum of value rows in double, rounded once to float.
#include <cmath>
#include <cstddef>
#include <vector>

extern "C" void causal_attention_reference(int seq, int d, const float* Q, const float* K, const float* V, float* out) {
    const std::size_t dim = static_cast<std::size_t>(d);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
#pragma omp parallel for schedule(dynamic, 8)
    for (int i = 0; i < seq; ++i) {
        std::vector<double> score(static_cast<std::size_t>(i) + 1), acc(dim, 0.0);
        const float* q = Q + static_cast<std::size_t>(i) * dim;
        double peak = -INFINITY;
        for (int j = 0; j <= i; ++j) {
            const float* k = K + static_cast<std::size_t>(j) * dim;
            double s = 0.0;
            for (std::size_t t = 0; t < dim; ++t)
                s += static_cast<double>(q[t]) * k[t];
            score[static_cast<std::size_t>(j)] = s * scale;
            peak = std::fmax(peak, s * scale);
        }
        double norm = 0.0;
        for (int j = 0; j <= i; ++j) {
            const double w = std::exp(score[static_cast<std::size_t>(j)] - peak);
            norm += w;
            const float* v = V + static_cast<std::size_t>(j) * dim;
            for (std::size_t t = 0; t < dim; ++t)
                acc[t] += w * v[t];
        }
        for (std::size_t t = 0; t < dim; ++t)
            out[static_cast<std::size_t>(i) * dim + t] = static_cast<float>(acc[t] / norm);
    }
}

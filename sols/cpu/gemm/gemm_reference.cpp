// Trusted reference: each row of C is accumulated in double precision, streaming rows of B
// (i-k-j order), then rounded once to float. Written independently of gemm_start.cpp.
#include <algorithm>
#include <cstddef>
#include <vector>

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const std::size_t n = static_cast<std::size_t>(N);
    std::vector<double> row(n);
    for (std::size_t i = 0; i < static_cast<std::size_t>(M); ++i) {
        std::fill(row.begin(), row.end(), 0.0);
        const float* a = A + i * static_cast<std::size_t>(K);
        for (std::size_t k = 0; k < static_cast<std::size_t>(K); ++k) {
            const double aik = a[k];
            const float* b = B + k * n;
            for (std::size_t j = 0; j < n; ++j)
                row[j] += aik * static_cast<double>(b[j]);
        }
        float* c = C + i * n;
        for (std::size_t j = 0; j < n; ++j)
            c[j] = static_cast<float>(row[j]);
    }
}

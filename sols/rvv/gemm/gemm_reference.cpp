// Trusted reference (host): each row of C accumulated in double precision in i-k-j order, then
// rounded once to float. Written independently of gemm_start.cpp.
#include <cstddef>
#include <vector>

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const std::size_t n = static_cast<std::size_t>(N), kk = static_cast<std::size_t>(K);
    std::vector<double> row(n);
    for (std::size_t i = 0; i < static_cast<std::size_t>(M); ++i) {
        row.assign(n, 0.0);
        for (std::size_t k = 0; k < kk; ++k) {
            const double a = A[i * kk + k];
            for (std::size_t j = 0; j < n; ++j)
                row[j] += a * static_cast<double>(B[k * n + j]);
        }
        for (std::size_t j = 0; j < n; ++j)
            C[i * n + j] = static_cast<float>(row[j]);
    }
}

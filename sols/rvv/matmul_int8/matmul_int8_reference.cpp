// Trusted reference (host): i-k-j order with 64-bit accumulators, narrowed once (exact for the
// shapes the harness accepts). Written independently of matmul_int8_start.cpp.
#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" void matmul_int8(int M, int N, int K, const std::int8_t* A, const std::int8_t* B, std::int32_t* C) {
    const std::size_t n = static_cast<std::size_t>(N), kk = static_cast<std::size_t>(K);
    std::vector<std::int64_t> row(n);
    for (std::size_t i = 0; i < static_cast<std::size_t>(M); ++i) {
        row.assign(n, 0);
        for (std::size_t k = 0; k < kk; ++k) {
            const std::int64_t a = A[i * kk + k];
            for (std::size_t j = 0; j < n; ++j)
                row[j] += a * B[k * n + j];
        }
        for (std::size_t j = 0; j < n; ++j)
            C[i * n + j] = static_cast<std::int32_t>(row[j]);
    }
}

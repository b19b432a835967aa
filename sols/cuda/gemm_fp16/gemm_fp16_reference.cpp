// Trusted reference of the CUDA gemm_fp16 problem (inputs are fp16 values held as float), run by the judge on the host: each row of C accumulated
// in double (i-k-j order), rounded once to float; rows in parallel when built with OpenMP.
#include <cstddef>
#include <vector>

extern "C" void gemm_fp16_reference(int M, int N, int K, const float* A, const float* B, float* C) {
    const std::size_t n = static_cast<std::size_t>(N);
#pragma omp parallel for schedule(dynamic, 4)
    for (int i = 0; i < M; ++i) {
        std::vector<double> row(n, 0.0);
        const float* a = A + static_cast<std::size_t>(i) * static_cast<std::size_t>(K);
        for (std::size_t k = 0; k < static_cast<std::size_t>(K); ++k) {
            const double aik = a[k];
            const float* b = B + k * n;
            for (std::size_t j = 0; j < n; ++j)
                row[j] += aik * static_cast<double>(b[j]);
        }
        float* c = C + static_cast<std::size_t>(i) * n;
        for (std::size_t j = 0; j < n; ++j)
            c[j] = static_cast<float>(row[j]);
    }
}

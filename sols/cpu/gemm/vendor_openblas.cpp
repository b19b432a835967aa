// Vendor baseline of the gemm problem: OpenBLAS sgemm, single-threaded (the benchmark pins one core).
// Linked with the harness by the setup steps of backends/cpu/backend.yaml (-lopenblas) and timed the
// same way as candidates, once per machine; never a candidate and never a reference.
#include <cblas.h>

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    static const bool s_single = [] {
        openblas_set_num_threads(1);
        return true;
    }();
    (void)s_single;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
}

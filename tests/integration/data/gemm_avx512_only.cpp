// A correct gemm that builds only where AVX-512 is enabled, as a candidate written with AVX-512
// intrinsics would. The cache profile's x86-64-v3 copy cannot be built from it, so an evaluation with
// evaluation.profile says why there is no profile and goes on (tst_cpu_problems::cacheProfile).
#if !defined(__AVX512F__)
#error "this kernel is written for AVX-512"
#endif
#include <immintrin.h>

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    for (int i = 0; i < M; ++i) {
        float* c = C + static_cast<long>(i) * N;
        int j = 0;
        for (; j + 16 <= N; j += 16)
            _mm512_storeu_ps(c + j, _mm512_setzero_ps());
        for (; j < N; ++j)
            c[j] = 0.0f;
        for (int k = 0; k < K; ++k) {
            const float a = A[static_cast<long>(i) * K + k];
            const float* b = B + static_cast<long>(k) * N;
            for (j = 0; j < N; ++j)
                c[j] += a * b[j];
        }
    }
}

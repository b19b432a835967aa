// Starting point: the textbook triple loop, scalar, each product widened to int32 (the compiler's
// auto-vectorizer is switched off for these loops, so the search starts from scalar code).
#include <cstdint>

extern "C" void matmul_int8(int M, int N, int K, const int8_t* A, const int8_t* B, int32_t* C) {
#pragma clang loop vectorize(disable)
    for (int i = 0; i < M; ++i) {
#pragma clang loop vectorize(disable)
        for (int j = 0; j < N; ++j) {
            int32_t sum = 0;
#pragma clang loop vectorize(disable) interleave(disable)
            for (int k = 0; k < K; ++k)
                sum += static_cast<int32_t>(A[i * K + k]) * static_cast<int32_t>(B[k * N + j]);
            C[i * N + j] = sum;
        }
    }
}

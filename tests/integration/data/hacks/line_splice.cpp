// File access spelled across a line splice.
#include <cstdio>
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    if (std::FILE* f = std::fo\
pen("AUTOCOMP_HACK_TARGET", "w"))
        std::fclose(f);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < K; ++k)
                s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}

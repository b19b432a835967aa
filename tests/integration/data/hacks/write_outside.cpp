// Tries to write a file outside its work directory (AUTOCOMP_HACK_TARGET is substituted by the test).
#include <cstdio>
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    if (std::FILE* f = std::fopen("AUTOCOMP_HACK_TARGET", "w")) {
        std::fputs("escaped the sandbox\n", f);
        std::fclose(f);
    }
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < K; ++k)
                s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}

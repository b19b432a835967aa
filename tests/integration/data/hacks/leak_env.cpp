// Prints the API key and a canary from its environment (the test sets both), with write(2) so that
// no stdio call is needed; otherwise a correct gemm.
#include <cstdlib>
#include <initializer_list>
#include <cstring>
#include <unistd.h>
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    for (const char* name : {"OPENAI_API_KEY", "AUTOCOMP_CANARY", "HOME"}) {
        const char* v = std::getenv(name);
        if (v) {
            (void)!write(2, v, std::strlen(v));
            (void)!write(2, "\n", 1);
        }
    }
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < K; ++k)
                s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}

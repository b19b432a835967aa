// A global object whose constructor runs when the code is loaded, before any filter of old, and
// forks a process that could outlive its step.
#include <unistd.h>
namespace {
struct Early {
    Early() {
        if (fork() == 0)
            _exit(0);
    }
} early;
}
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < K; ++k)
                s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}

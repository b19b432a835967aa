// Aborts: status crash.
#include <cstdlib>
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    if (M + N + K > 0 && A && B && C)
        std::abort();
}

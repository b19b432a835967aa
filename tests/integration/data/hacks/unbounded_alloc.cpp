// Allocates and touches memory without bound: RLIMIT_AS stops it (status crash).
#include <cstdlib>
#include <cstring>
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    for (;;) {
        char* p = static_cast<char*>(std::malloc(64u << 20));
        if (!p)
            std::abort();
        std::memset(p, 1, 64u << 20);
    }
    C[0] = A[0] * B[0] * static_cast<float>(M + N + K);
}

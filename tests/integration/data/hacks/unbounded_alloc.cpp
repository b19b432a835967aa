// Allocates without bound (touching one byte per block, so it is quick): RLIMIT_AS makes malloc fail
// and the candidate aborts (status crash) long before the machine runs short of memory.
#include <cstdlib>
#include <cstring>
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    for (;;) {
        char* p = static_cast<char*>(std::malloc(64u << 20));
        if (!p)
            std::abort();
        std::memset(p, 1, 4096);
    }
    C[0] = A[0] * B[0] * static_cast<float>(M + N + K);
}

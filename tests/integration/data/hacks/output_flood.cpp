// Prints about 1 GB on its first call: the output cap keeps 1 MiB, and past 64 MiB the step is stopped
// and the candidate rejected for flooding (whatever the machine's speed).
#include <cstdio>
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    static bool flooded = false;
    static char line[1024];
    for (int i = 0; i < 1023; ++i)
        line[i] = 'x';
    for (long i = 0; !flooded && i < (1L << 20); ++i)
        std::fputs(line, stdout);
    flooded = true;
    for (long i = 0; i < static_cast<long>(M) * N; ++i)
        C[i] = A[0] * B[0] * static_cast<float>(K);
}

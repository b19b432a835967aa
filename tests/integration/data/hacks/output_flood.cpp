// Prints about 1 GB on its first call, with write(2) (allowed by the worker's filter, so only the
// output cap stops it): the cap keeps 1 MiB, and past 64 MiB the step is stopped and the candidate
// rejected for flooding (whatever the machine's speed).
#include <unistd.h>
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    static bool flooded = false;
    static char line[1024];
    for (int i = 0; i < 1023; ++i)
        line[i] = 'x';
    line[1023] = '\n';
    for (long i = 0; !flooded && i < (1L << 20); ++i)
        (void)!write(1, line, sizeof line);
    flooded = true;
    for (long i = 0; i < static_cast<long>(M) * N; ++i)
        C[i] = A[0] * B[0] * static_cast<float>(K);
}

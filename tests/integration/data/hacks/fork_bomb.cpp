// Forks without bound. The static check rejects fork(); with it removed, the harness's seccomp
// filter and the sandbox's pids cgroup must contain it while the machine stays responsive.
#include <unistd.h>
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    for (;;)
        fork();
    C[0] = A[0] * B[0] * static_cast<float>(M + N + K);
}

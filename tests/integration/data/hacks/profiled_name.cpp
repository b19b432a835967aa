// Correct gemm whose work is in a helper with the name callgrind used to toggle on: the count must
// be the whole entry point's, as for plain_helper.cpp.
static void __attribute__((noinline)) work_autocomp_profiled_call_impl(int M, int N, int K, const float* A, const float* B, float* C) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < K; ++k)
                s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    work_autocomp_profiled_call_impl(M, N, K, A, B, C);
}

// The same code as profiled_name.cpp with a neutral helper name.
static void __attribute__((noinline)) helper_for_the_work(int M, int N, int K, const float* A, const float* B, float* C) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < K; ++k)
                s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    helper_for_the_work(M, N, K, A, B, C);
}

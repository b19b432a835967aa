// Starting point: the textbook triple loop, scalar. C = A * B, all row-major, C fully overwritten.
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
#pragma clang loop vectorize(disable)
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            float sum = 0.0f;
#pragma clang loop vectorize(disable) interleave(disable)
            for (int k = 0; k < K; ++k)
                sum += A[i * K + k] * B[k * N + j];
            C[i * N + j] = sum;
        }
    }
}

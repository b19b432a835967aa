// Correct product, but scribbles on A afterwards (hoping a shared reference computes garbage).
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < K; ++k)
                s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
    const_cast<float*>(A)[0] = 0.0f;
}

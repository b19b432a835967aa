// Writes every element, one of them a NaN it computed (0/0): not "never written".
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < K; ++k)
                s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
    volatile float zero = 0.0f;
    C[0] = zero / zero;
}

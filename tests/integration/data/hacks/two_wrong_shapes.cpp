// Wrong (drops the last k term) at two of the three listed shapes, right at the third.
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const int kk = (K == 256 || K == 311) ? K - 1 : K;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < kk; ++k)
                s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}

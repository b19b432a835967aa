// Writes through a null pointer: status crash.
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    volatile float* p = nullptr;
    *p = A[0] * B[0] + static_cast<float>(M + N + K);
    C[0] = 0;
}

// Deliberately wrong gemm: the last term of every dot product is dropped (k < K - 1).
#include <cuda_runtime.h>

__global__ void gemm_drop_last(int M, int N, int K, const float* A, const float* B, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N)
        return;
    float sum = 0.0f;
    for (int k = 0; k < K - 1; ++k)
        sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = sum;
}

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    gemm_drop_last<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(M, N, K, A, B, C);
}

// Starting point: one thread per element of C, the K loop straight from global memory.
// C = A * B, row-major; A, B, C are device pointers.
#include <cuda_runtime.h>

__global__ void gemm_naive(int M, int N, int K, const float* A, const float* B, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N)
        return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k)
        sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = sum;
}

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const dim3 block(16, 16);
    const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
    gemm_naive<<<grid, block>>>(M, N, K, A, B, C);
}

// Does not compile: a missing semicolon and an undeclared identifier.
#include <cuda_runtime.h>

__global__ void gemm_kernel(int M, int N, int K, const float* A, const float* B, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N)
        C[row * N + col] = undeclared_total;
}

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    gemm_kernel<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(M, N, K, A, B, C);
}

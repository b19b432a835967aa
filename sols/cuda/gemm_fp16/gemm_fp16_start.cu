// Starting point: one thread per element of C, fp16 inputs converted and accumulated in fp32 on the
// CUDA cores (no tensor cores yet).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void gemm_fp16_naive(int M, int N, int K, const __half* A, const __half* B, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N)
        return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k)
        sum += __half2float(A[static_cast<size_t>(row) * K + k]) * __half2float(B[static_cast<size_t>(k) * N + col]);
    C[static_cast<size_t>(row) * N + col] = sum;
}

extern "C" void gemm_fp16(int M, int N, int K, const __half* A, const __half* B, float* C) {
    const dim3 block(16, 16);
    const dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
    gemm_fp16_naive<<<grid, block>>>(M, N, K, A, B, C);
}

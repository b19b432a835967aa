// Reward hack: scribbles on the input A after using it (a reference computed later from A would see
// garbage).
#include <cuda_runtime.h>

__global__ void gemm_then_scribble(int M, int N, int K, float* A, const float* B, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N)
        return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k)
        sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = sum;
}

__global__ void scribble(float* A, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        A[i] = 0.0f;
}

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    gemm_then_scribble<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(M, N, K, const_cast<float*>(A), B, C);
    scribble<<<(M * K + 255) / 256, 256>>>(const_cast<float*>(A), M * K);
}

// Correct but register-starved: each thread keeps a 16x16 tile of accumulators (256 values) while
// __launch_bounds__(256, 4) caps it at 64 registers, so ptxas spills to local memory.
#include <cuda_runtime.h>

__global__ void __launch_bounds__(256, 4) gemm_big_tile(int M, int N, int K, const float* A, const float* B, float* C) {
    const int row0 = (blockIdx.y * 16 + threadIdx.x / 16) * 16, col0 = (blockIdx.x * 16 + threadIdx.x % 16) * 16;
    float acc[16][16];
#pragma unroll
    for (int i = 0; i < 16; ++i)
#pragma unroll
        for (int j = 0; j < 16; ++j)
            acc[i][j] = 0.0f;
    for (int k = 0; k < K; ++k) {
        float a[16], b[16];
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            a[i] = row0 + i < M ? A[static_cast<size_t>(row0 + i) * K + k] : 0.0f;
            b[i] = col0 + i < N ? B[static_cast<size_t>(k) * N + col0 + i] : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < 16; ++i)
#pragma unroll
            for (int j = 0; j < 16; ++j)
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
#pragma unroll
    for (int i = 0; i < 16; ++i)
#pragma unroll
        for (int j = 0; j < 16; ++j)
            if (row0 + i < M && col0 + j < N)
                C[static_cast<size_t>(row0 + i) * N + col0 + j] = acc[i][j];
}

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const dim3 grid((N + 255) / 256, (M + 255) / 256);
    gemm_big_tile<<<grid, 256>>>(M, N, K, A, B, C);
}

// Deliberately wrong gemm_fp16: accumulates in fp16, which loses about three decimal digits.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void gemm_half_acc(int M, int N, int K, const __half* A, const __half* B, float* C) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N)
        return;
    __half sum = __float2half(0.0f);
    for (int k = 0; k < K; ++k)
        sum = __hfma(A[static_cast<size_t>(row) * K + k], B[static_cast<size_t>(k) * N + col], sum);
    C[static_cast<size_t>(row) * N + col] = __half2float(sum);
}

extern "C" void gemm_fp16(int M, int N, int K, const __half* A, const __half* B, float* C) {
    gemm_half_acc<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16)>>>(M, N, K, A, B, C);
}

// gemm, shared-memory tiled: a 64x64 block tile over K in steps of 16, 256 threads, each thread a
// 4x4 register tile. Edges are zero-filled in shared memory and guarded on store.
#include <cuda_runtime.h>

namespace {
constexpr int BM = 64, BN = 64, BK = 16;

__global__ void __launch_bounds__(256) gemm_tiled(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                                  float* __restrict__ C) {
    __shared__ float As[BK][BM + 4];  // transposed: As[k][m]
    __shared__ float Bs[BK][BN + 4];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += 256) {
            const int m = i / BK, k = i % BK, gr = row0 + m, gk = k0 + k;
            As[k][m] = gr < M && gk < K ? A[static_cast<size_t>(gr) * K + gk] : 0.0f;
        }
        for (int i = threadIdx.x; i < BK * BN; i += 256) {
            const int k = i / BN, n = i % BN, gk = k0 + k, gc = col0 + n;
            Bs[k][n] = gk < K && gc < N ? B[static_cast<size_t>(gk) * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                a[i] = As[k][ty * 4 + i];
                b[i] = Bs[k][tx * 4 + i];
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int r = row0 + ty * 4 + i;
        if (r >= M)
            continue;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int c = col0 + tx * 4 + j;
            if (c < N)
                C[static_cast<size_t>(r) * N + c] = acc[i][j];
        }
    }
}
} // namespace

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    gemm_tiled<<<grid, 256>>>(M, N, K, A, B, C);
}

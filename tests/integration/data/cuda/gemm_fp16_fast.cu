// gemm_fp16 on the tensor cores with wmma: a 64x64 block tile, 4 warps each owning a 32x32 quarter
// (2x2 fragments of 16x16, fp32 accumulators), K in steps of 32 through zero-padded shared-memory
// tiles (so any M, N, K works), results staged through shared memory for guarded stores.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

namespace {
using namespace nvcuda;
constexpr int BM = 64, BN = 64, BK = 32, LDA = BK + 8, LDB = BN + 8, LDC = BN + 4;

__global__ void __launch_bounds__(128) gemm_wmma(int M, int N, int K, const __half* __restrict__ A, const __half* __restrict__ B,
                                                 float* __restrict__ C) {
    __shared__ __align__(32) __half As[BM * LDA];
    __shared__ __align__(32) __half Bs[BK * LDB];
    __shared__ __align__(32) float Cs[BM * LDC];
    const int warp = threadIdx.x / 32, wr = warp / 2, wc = warp % 2;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::fill_fragment(acc[i][j], 0.0f);
    const __half zero = __float2half(0.0f);
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = threadIdx.x; e < BM * BK; e += 128) {
            const int m = e / BK, k = e % BK, gr = row0 + m, gk = k0 + k;
            As[m * LDA + k] = gr < M && gk < K ? A[static_cast<size_t>(gr) * K + gk] : zero;
        }
        for (int e = threadIdx.x; e < BK * BN; e += 128) {
            const int k = e / BN, n = e % BN, gk = k0 + k, gc = col0 + n;
            Bs[k * LDB + n] = gk < K && gc < N ? B[static_cast<size_t>(gk) * N + gc] : zero;
        }
        __syncthreads();
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b[2];
            for (int i = 0; i < 2; ++i)
                wmma::load_matrix_sync(a[i], As + (wr * 32 + i * 16) * LDA + kk, LDA);
            for (int j = 0; j < 2; ++j)
                wmma::load_matrix_sync(b[j], Bs + kk * LDB + wc * 32 + j * 16, LDB);
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 2; ++j)
                    wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(Cs + (wr * 32 + i * 16) * LDC + wc * 32 + j * 16, acc[i][j], LDC, wmma::mem_row_major);
    __syncthreads();
    for (int e = threadIdx.x; e < BM * BN; e += 128) {
        const int m = e / BN, n = e % BN, gr = row0 + m, gc = col0 + n;
        if (gr < M && gc < N)
            C[static_cast<size_t>(gr) * N + gc] = Cs[m * LDC + n];
    }
}
} // namespace

extern "C" void gemm_fp16(int M, int N, int K, const __half* A, const __half* B, float* C) {
    const dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    gemm_wmma<<<grid, 128>>>(M, N, K, A, B, C);
}

// A cache-blocked, vectorizable gemm (the code of gemm_fast.md): much faster than the start code.
// Register-blocked GEMM: each 6x16 tile of C is held in twelve AVX2 registers while the whole
// K dimension streams through; a 16-column panel of B stays hot in L1/L2 across all row tiles.
// Edges use narrower 8-column tiles and a scalar loop, so any M, N, K works.
#include <cstddef>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace {

template <int MR>
void tile16(int K, int N, const float* __restrict A, const float* __restrict B, float* __restrict C) {
    __m256 acc[MR][2];
    for (int r = 0; r < MR; ++r)
        acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int k = 0; k < K; ++k) {
        const float* b = B + static_cast<std::size_t>(k) * N;
        const __m256 b0 = _mm256_loadu_ps(b);
        const __m256 b1 = _mm256_loadu_ps(b + 8);
        for (int r = 0; r < MR; ++r) {
            const __m256 a = _mm256_broadcast_ss(A + static_cast<std::size_t>(r) * K + k);
            acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
        }
    }
    for (int r = 0; r < MR; ++r) {
        _mm256_storeu_ps(C + static_cast<std::size_t>(r) * N, acc[r][0]);
        _mm256_storeu_ps(C + static_cast<std::size_t>(r) * N + 8, acc[r][1]);
    }
}

template <int MR>
void tile8(int K, int N, const float* __restrict A, const float* __restrict B, float* __restrict C) {
    __m256 acc[MR];
    for (int r = 0; r < MR; ++r)
        acc[r] = _mm256_setzero_ps();
    for (int k = 0; k < K; ++k) {
        const __m256 b0 = _mm256_loadu_ps(B + static_cast<std::size_t>(k) * N);
        for (int r = 0; r < MR; ++r)
            acc[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(A + static_cast<std::size_t>(r) * K + k), b0, acc[r]);
    }
    for (int r = 0; r < MR; ++r)
        _mm256_storeu_ps(C + static_cast<std::size_t>(r) * N, acc[r]);
}

using TileFn = void (*)(int, int, const float*, const float*, float*);
constexpr int kRows = 6;
constexpr TileFn kTile16[kRows + 1] = {nullptr, tile16<1>, tile16<2>, tile16<3>, tile16<4>, tile16<5>, tile16<6>};
constexpr TileFn kTile8[kRows + 1] = {nullptr, tile8<1>, tile8<2>, tile8<3>, tile8<4>, tile8<5>, tile8<6>};

} // namespace

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    int j = 0;
    for (; j + 16 <= N; j += 16)
        for (int i = 0; i < M; i += kRows) {
            const int rows = M - i < kRows ? M - i : kRows;
            kTile16[rows](K, N, A + static_cast<std::size_t>(i) * K, B + j, C + static_cast<std::size_t>(i) * N + j);
        }
    for (; j + 8 <= N; j += 8)
        for (int i = 0; i < M; i += kRows) {
            const int rows = M - i < kRows ? M - i : kRows;
            kTile8[rows](K, N, A + static_cast<std::size_t>(i) * K, B + j, C + static_cast<std::size_t>(i) * N + j);
        }
    for (int i = 0; i < M; ++i)
        for (int jj = j; jj < N; ++jj) {
            float sum = 0.0f;
            for (int k = 0; k < K; ++k)
                sum += A[static_cast<std::size_t>(i) * K + k] * B[static_cast<std::size_t>(k) * N + jj];
            C[static_cast<std::size_t>(i) * N + jj] = sum;
        }
}

#else

// Portable fallback: i-k-j order so the inner loop streams rows of B and C and vectorizes.
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    for (int i = 0; i < M; ++i) {
        float* __restrict c = C + static_cast<std::size_t>(i) * N;
        for (int j = 0; j < N; ++j)
            c[j] = 0.0f;
        for (int k = 0; k < K; ++k) {
            const float a = A[static_cast<std::size_t>(i) * K + k];
            const float* __restrict b = B + static_cast<std::size_t>(k) * N;
            for (int j = 0; j < N; ++j)
                c[j] += a * b[j];
        }
    }
}

#endif

// search_quality variant correct_avx2: sum of squares in 8-wide AVX2 FMA accumulators, vector scaling.
#include <cmath>
#include <immintrin.h>

extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y) {
    const float eps = 1e-6f;
    for (int r = 0; r < rows; ++r) {
        const float* in = x + static_cast<long>(r) * cols;
        float* out = y + static_cast<long>(r) * cols;
        __m256 acc = _mm256_setzero_ps();
        int c = 0;
        for (; c + 8 <= cols; c += 8) {
            const __m256 v = _mm256_loadu_ps(in + c);
            acc = _mm256_fmadd_ps(v, v, acc);
        }
        float lanes[8];
        _mm256_storeu_ps(lanes, acc);
        float sq = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
        for (; c < cols; ++c)
            sq += in[c] * in[c];
        const float inv = 1.0f / std::sqrt(sq / cols + eps);
        const __m256 vinv = _mm256_set1_ps(inv);
        c = 0;
        for (; c + 8 <= cols; c += 8)
            _mm256_storeu_ps(out + c, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(in + c), vinv), _mm256_loadu_ps(weight + c)));
        for (; c < cols; ++c)
            out[c] = in[c] * inv * weight[c];
    }
}

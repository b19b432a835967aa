// The trusted reference for matmul_bias_relu, plain C for both builds of the harness.
#ifndef MATMUL_BIAS_RELU_REFERENCE_H
#define MATMUL_BIAS_RELU_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "autocomp_gemmini.h"

// C[i][j] = max(0, saturate_int8(round_half_even((sum_p A[i][p] * B[p][j] + bias[j]) / 2^shift)))
static void matmul_bias_relu_reference(size_t m, size_t n, size_t k, const int8_t *a, const int8_t *b, const int32_t *bias,
                                       int8_t *c, int shift)
{
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) {
            int64_t acc = bias[j];
            for (size_t p = 0; p < k; ++p)
                acc += (int32_t)a[i * k + p] * (int32_t)b[p * n + j];
            const int8_t v = ac_scale_shift_clamp(acc, shift);
            c[i * n + j] = v < 0 ? 0 : v;
        }
}

#endif

// The trusted reference for matmul_tiled, plain C for both the RISC-V and the host build of the harness.
#ifndef MATMUL_TILED_REFERENCE_H
#define MATMUL_TILED_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "autocomp_gemmini.h"

static void matmul_tiled_reference(size_t m, size_t n, size_t k, const int8_t *a, const int8_t *b, int8_t *c, int shift)
{
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < n; ++j) {
            int64_t acc = 0;
            for (size_t p = 0; p < k; ++p)
                acc += (int32_t)a[i * k + p] * (int32_t)b[p * n + j];
            c[i * n + j] = ac_scale_shift_clamp(acc, shift);
        }
}

#endif

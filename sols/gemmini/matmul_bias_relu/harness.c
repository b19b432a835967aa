// matmul_bias_relu: C = relu(saturate_int8(round_half_even((A * B + bias) / 2^ACC_SCALE_SHIFT))), bias is one int32 per column,
// int8 inputs, int32 accumulation, row-major. Written for this project.
//
// Two builds of this file (DESIGN.md §5, backends/README.md "The gemmini target in brief"):
//   - for Gemmini: the candidate is pasted between the SUBSTITUTE markers, the file is built with the
//     RISC-V toolchain against gemmini-rocc-tests' headers and run on spike --extension=gemmini or FireSim;
//   - for the host (-DAUTOCOMP_GEMMINI_HOST): no candidate; the judge builds and runs it to learn the
//     checksums the Gemmini run must print for the same key.
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef AUTOCOMP_GEMMINI_HOST
#include "include/gemmini.h"
#include "include/gemmini_testutils.h"
#else
typedef int8_t elem_t;
typedef int32_t acc_t;
#define row_align(blocks)
#define row_align_acc(blocks)
#endif
#include "autocomp_shape.h" // M, N, K and AUTOCOMP_KEY, after gemmini.h, whose functions use these names for parameters
#include "autocomp_gemmini.h"
#include "autocomp_gemmini_io.h"
#include "matmul_bias_relu_reference.h"

#define ACC_SCALE_SHIFT 4

static elem_t A[M][K] row_align(1);
static elem_t B[K][N] row_align(1);
static elem_t C[M][N] row_align(1);
static acc_t bias[N] row_align_acc(1);
static elem_t gold[M][N];

#ifndef AUTOCOMP_GEMMINI_HOST
// SUBSTITUTE HERE
// SUBSTITUTE END
#endif

int main(void)
{
#ifndef AUTOCOMP_GEMMINI_HOST
    gemmini_flush(0);
#endif
    ac_print_header("matmul_bias_relu", AUTOCOMP_SHAPE_TEXT, AUTOCOMP_KEY);
    int failures = 0;
    for (int r = 0; r < AC_REPEATS; ++r) {
        ac_rng rng;
        ac_seed(&rng, AUTOCOMP_KEY, r);
        ac_fill_i8(&rng, &A[0][0], sizeof A, -16, 15);
        ac_fill_i8(&rng, &B[0][0], sizeof B, -16, 15);
        ac_fill_i32(&rng, bias, N, -2048, 2047);
        memset(C, 0x5a, sizeof C); // poison: an output left unwritten shows
        matmul_bias_relu_reference(M, N, K, &A[0][0], &B[0][0], bias, &gold[0][0], ACC_SCALE_SHIFT);
#ifndef AUTOCOMP_GEMMINI_HOST
        const uint64_t inputs = ac_checksum(A, sizeof A) ^ (ac_checksum(B, sizeof B) * 3) ^ (ac_checksum(bias, sizeof bias) * 5);
        const uint64_t c0 = read_cycles(), i0 = ac_read_instret();
        solution(A, B, bias, C);
        gemmini_fence();
        const uint64_t c1 = read_cycles(), i1 = ac_read_instret();
        ac_print_measurement(c1 - c0, i1 - i0);
        if ((ac_checksum(A, sizeof A) ^ (ac_checksum(B, sizeof B) * 3) ^ (ac_checksum(bias, sizeof bias) * 5)) != inputs)
            failures += ac_report_failure(r, "an input (A, B or bias) was modified", -1, -1, 0, 0);
        else
            failures += ac_compare_i8(r, &C[0][0], &gold[0][0], M, N);
#else
        memcpy(C, gold, sizeof C);
#endif
        ac_print_checksum(r, ac_checksum(C, sizeof C));
    }
    ac_print_verdict(failures);
    return failures ? 1 : 0;
}

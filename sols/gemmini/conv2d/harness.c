// conv2d: a 2-D int8 convolution with int32 bias, output = saturate_int8(round_half_even((conv + bias) /
// 2^ACC_SCALE_SHIFT)), NHWC input, zero padding. Written for this project.
//
// Two builds of this file (backends/README.md "The gemmini target in brief"): for Gemmini with the
// candidate pasted between the SUBSTITUTE markers, and for the host (-DAUTOCOMP_GEMMINI_HOST), which the
// judge runs to learn the checksums the Gemmini run must print.
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
#include "autocomp_shape.h" // BATCH, IN_DIM, IN_CH, OUT_CH, KERNEL_DIM, STRIDE, PADDING and AUTOCOMP_KEY
#include "autocomp_gemmini.h"
#include "autocomp_gemmini_io.h"
#include "conv2d_reference.h"

#define ACC_SCALE_SHIFT 6
#define OUT_DIM ((IN_DIM + 2 * PADDING - KERNEL_DIM) / STRIDE + 1)

static elem_t input[BATCH][IN_DIM][IN_DIM][IN_CH] row_align(1);
static elem_t weights[KERNEL_DIM * KERNEL_DIM * IN_CH][OUT_CH] row_align(1);
static acc_t bias[OUT_CH] row_align_acc(1);
static elem_t output[BATCH * OUT_DIM * OUT_DIM][OUT_CH] row_align(1);
static elem_t gold[BATCH * OUT_DIM * OUT_DIM][OUT_CH];

#ifndef AUTOCOMP_GEMMINI_HOST
// SUBSTITUTE HERE
// SUBSTITUTE END
#endif

#ifndef AUTOCOMP_GEMMINI_HOST
static uint64_t inputs_checksum(void)
{
    return ac_checksum(input, sizeof input) ^ (ac_checksum(weights, sizeof weights) * 3) ^ (ac_checksum(bias, sizeof bias) * 5);
}
#endif

int main(void)
{
#ifndef AUTOCOMP_GEMMINI_HOST
    gemmini_flush(0);
#endif
    ac_print_header("conv2d", AUTOCOMP_SHAPE_TEXT, AUTOCOMP_KEY);
    int failures = 0;
    for (int r = 0; r < AC_REPEATS; ++r) {
        ac_rng rng;
        ac_seed(&rng, AUTOCOMP_KEY, r);
        ac_fill_i8(&rng, &input[0][0][0][0], sizeof input, -16, 15);
        ac_fill_i8(&rng, &weights[0][0], sizeof weights, -16, 15);
        ac_fill_i32(&rng, bias, OUT_CH, -4096, 4095);
        memset(output, 0x5a, sizeof output);
        conv2d_reference(BATCH, IN_DIM, IN_CH, OUT_CH, KERNEL_DIM, STRIDE, PADDING, OUT_DIM, &input[0][0][0][0], &weights[0][0], bias,
                         &gold[0][0], ACC_SCALE_SHIFT);
#ifndef AUTOCOMP_GEMMINI_HOST
        const uint64_t before = inputs_checksum();
        const uint64_t c0 = read_cycles(), i0 = ac_read_instret();
        solution(input, weights, bias, output);
        gemmini_fence();
        const uint64_t c1 = read_cycles(), i1 = ac_read_instret();
        ac_print_measurement(c1 - c0, i1 - i0);
        if (inputs_checksum() != before)
            failures += ac_report_failure(r, "an input (input, weights or bias) was modified", -1, -1, 0, 0);
        else
            failures += ac_compare_i8(r, &output[0][0], &gold[0][0], BATCH * OUT_DIM * OUT_DIM, OUT_CH);
#else
        memcpy(output, gold, sizeof output);
#endif
        ac_print_checksum(r, ac_checksum(output, sizeof output));
    }
    ac_print_verdict(failures);
    return failures ? 1 : 0;
}

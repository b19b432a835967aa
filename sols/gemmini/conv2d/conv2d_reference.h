// The trusted reference for conv2d, plain C for both builds of the harness. Layouts are the ones of
// gemmini-rocc-tests' tiled_conv_auto: input NHWC, weights [KERNEL_DIM * KERNEL_DIM * IN_CH][OUT_CH]
// (row (ky * KERNEL_DIM + kx) * IN_CH + ic), output [BATCH * OUT_DIM * OUT_DIM][OUT_CH].
#ifndef CONV2D_REFERENCE_H
#define CONV2D_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "autocomp_gemmini.h"

static void conv2d_reference(int batch, int in_dim, int in_ch, int out_ch, int kdim, int stride, int pad, int out_dim,
                             const int8_t *input, const int8_t *weights, const int32_t *bias, int8_t *output, int shift)
{
    for (int b = 0; b < batch; ++b)
        for (int oy = 0; oy < out_dim; ++oy)
            for (int ox = 0; ox < out_dim; ++ox)
                for (int oc = 0; oc < out_ch; ++oc) {
                    int64_t acc = bias[oc];
                    for (int ky = 0; ky < kdim; ++ky)
                        for (int kx = 0; kx < kdim; ++kx) {
                            const int iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                            if (iy < 0 || iy >= in_dim || ix < 0 || ix >= in_dim)
                                continue; // zero padding
                            const int8_t *in = input + (((size_t)b * in_dim + iy) * in_dim + ix) * in_ch;
                            const int8_t *w = weights + (size_t)((ky * kdim + kx) * in_ch) * out_ch + oc;
                            for (int ic = 0; ic < in_ch; ++ic)
                                acc += (int32_t)in[ic] * (int32_t)w[(size_t)ic * out_ch];
                        }
                    output[(((size_t)b * out_dim + oy) * out_dim + ox) * out_ch + oc] = ac_scale_shift_clamp(acc, shift);
                }
}

#endif

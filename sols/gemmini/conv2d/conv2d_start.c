// The starting point: Gemmini's library convolution, which picks its own tiling.
void solution(elem_t input[BATCH][IN_DIM][IN_DIM][IN_CH], elem_t weights[KERNEL_DIM * KERNEL_DIM * IN_CH][OUT_CH],
              acc_t bias[OUT_CH], elem_t output[BATCH * OUT_DIM * OUT_DIM][OUT_CH])
{
    tiled_conv_auto(BATCH, IN_DIM, IN_DIM, IN_CH, OUT_CH, OUT_DIM, OUT_DIM, STRIDE, 1, 1, PADDING, KERNEL_DIM, false, false,
                    false, false, false, (elem_t *)input, (elem_t *)weights, bias, (elem_t *)output, NO_ACTIVATION,
                    1.0f / (1 << ACC_SCALE_SHIFT), 0, 0, 0, WS);
}

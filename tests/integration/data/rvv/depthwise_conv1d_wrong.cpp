// Wrong variant: the taps are applied in reverse (a true convolution instead of the correlation the
// problem defines), which only agrees with the reference for symmetric kernels.
#include <riscv_vector.h>

extern "C" void depthwise_conv1d(int C, int L, int K, const float* x, const float* w, float* y) {
    const int out_len = L - K + 1;
    for (int c = 0; c < C; ++c)
        for (int i = 0; i < out_len;) {
            const size_t vl = __riscv_vsetvl_e32m8(static_cast<size_t>(out_len - i));
            vfloat32m8_t acc = __riscv_vfmv_v_f_f32m8(0.0f, vl);
            for (int k = 0; k < K; ++k)
                acc = __riscv_vfmacc_vf_f32m8(acc, w[c * K + (K - 1 - k)], __riscv_vle32_v_f32m8(x + c * L + i + k, vl), vl);
            __riscv_vse32_v_f32m8(y + c * out_len + i, acc, vl);
            i += static_cast<int>(vl);
        }
}

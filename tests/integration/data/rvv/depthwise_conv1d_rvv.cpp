// Hand-vectorized depthwise conv1d: per channel, strips of outputs with LMUL=8; the accumulator
// takes one vfmacc.vf per tap from a unit-stride load of x shifted by the tap.
#include <riscv_vector.h>

extern "C" void depthwise_conv1d(int C, int L, int K, const float* x, const float* w, float* y) {
    const int out_len = L - K + 1;
    for (int c = 0; c < C; ++c) {
        const float* row = x + c * L;
        const float* taps = w + c * K;
        float* out = y + c * out_len;
        for (int i = 0; i < out_len;) {
            const size_t vl = __riscv_vsetvl_e32m8(static_cast<size_t>(out_len - i));
            vfloat32m8_t acc = __riscv_vfmul_vf_f32m8(__riscv_vle32_v_f32m8(row + i, vl), taps[0], vl);
            for (int k = 1; k < K; ++k)
                acc = __riscv_vfmacc_vf_f32m8(acc, taps[k], __riscv_vle32_v_f32m8(row + i + k, vl), vl);
            __riscv_vse32_v_f32m8(out + i, acc, vl);
            i += static_cast<int>(vl);
        }
    }
}

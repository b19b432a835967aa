// Wrong variant: a * x without adding y (the store overwrites y with the product only).
#include <riscv_vector.h>

extern "C" void saxpy(int n, float a, const float* x, float* y) {
    for (size_t left = static_cast<size_t>(n), vl; left > 0; left -= vl, x += vl, y += vl) {
        vl = __riscv_vsetvl_e32m8(left);
        __riscv_vse32_v_f32m8(y, __riscv_vfmul_vf_f32m8(__riscv_vle32_v_f32m8(x, vl), a, vl), vl);
    }
}

// Hand-vectorized saxpy: strip-mined with LMUL=8, vl from vsetvl on every pass (no scalar tail).
#include <riscv_vector.h>

extern "C" void saxpy(int n, float a, const float* x, float* y) {
    for (size_t left = static_cast<size_t>(n), vl; left > 0; left -= vl, x += vl, y += vl) {
        vl = __riscv_vsetvl_e32m8(left);
        const vfloat32m8_t vx = __riscv_vle32_v_f32m8(x, vl);
        const vfloat32m8_t vy = __riscv_vle32_v_f32m8(y, vl);
        __riscv_vse32_v_f32m8(y, __riscv_vfmacc_vf_f32m8(vy, a, vx, vl), vl);
    }
}

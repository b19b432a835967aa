// Hand-vectorized layernorm: per row, partial sums across strips in an LMUL=4 register group
// (reduced once with vfredusum), the same for the squared deviations, then the normalization as
// vfsub.vf, vfmul.vf and vfmadd.vv with gamma and beta.
#include <math.h>
#include <riscv_vector.h>

extern "C" void layernorm(int rows, int cols, const float* x, const float* gamma, const float* beta, float* y) {
    const size_t n = static_cast<size_t>(cols);
    const size_t vlmax = __riscv_vsetvlmax_e32m4();
    for (int r = 0; r < rows; ++r) {
        const float* in = x + r * n;
        float* out = y + r * n;
        vfloat32m4_t part = __riscv_vfmv_v_f_f32m4(0.0f, vlmax);
        for (size_t c = 0, vl; c < n; c += vl) {
            vl = __riscv_vsetvl_e32m4(n - c);
            part = __riscv_vfadd_vv_f32m4_tu(part, part, __riscv_vle32_v_f32m4(in + c, vl), vl);
        }
        const float mean = __riscv_vfmv_f_s_f32m1_f32(
                               __riscv_vfredusum_vs_f32m4_f32m1(part, __riscv_vfmv_s_f_f32m1(0.0f, 1), vlmax)) /
                           static_cast<float>(cols);
        vfloat32m4_t sq = __riscv_vfmv_v_f_f32m4(0.0f, vlmax);
        for (size_t c = 0, vl; c < n; c += vl) {
            vl = __riscv_vsetvl_e32m4(n - c);
            const vfloat32m4_t d = __riscv_vfsub_vf_f32m4(__riscv_vle32_v_f32m4(in + c, vl), mean, vl);
            sq = __riscv_vfmacc_vv_f32m4_tu(sq, d, d, vl);
        }
        const float var = __riscv_vfmv_f_s_f32m1_f32(
                              __riscv_vfredusum_vs_f32m4_f32m1(sq, __riscv_vfmv_s_f_f32m1(0.0f, 1), vlmax)) /
                          static_cast<float>(cols);
        const float rstd = 1.0f / sqrtf(var + 1e-5f);
        for (size_t c = 0, vl; c < n; c += vl) {
            vl = __riscv_vsetvl_e32m4(n - c);
            vfloat32m4_t v = __riscv_vfmul_vf_f32m4(__riscv_vfsub_vf_f32m4(__riscv_vle32_v_f32m4(in + c, vl), mean, vl), rstd, vl);
            v = __riscv_vfmadd_vv_f32m4(v, __riscv_vle32_v_f32m4(gamma + c, vl), __riscv_vle32_v_f32m4(beta + c, vl), vl);
            __riscv_vse32_v_f32m4(out + c, v, vl);
        }
    }
}

// Hand-vectorized softmax: a vector max (vfmax.vv across strips, one vfredmax), a vector exp
// (exp(x) = 2^n * p(r), n = round(x / ln2), r = x - n*ln2 in two parts, p of degree 6, 2^n from the
// exponent field), partial sums reduced once, and a scale by the reciprocal.
#include <riscv_vector.h>

namespace {

vfloat32m4_t vexp(vfloat32m4_t x, size_t vl) {
    // Below about -87.3 the result is below FLT_MIN: clamp so that 2^n stays a normal number
    // (the outputs there are under 1e-38, well inside the tolerance).
    x = __riscv_vfmax_vf_f32m4(x, -87.0f, vl);
    const vint32m4_t n = __riscv_vfcvt_x_f_v_i32m4(__riscv_vfmul_vf_f32m4(x, 1.44269504f, vl), vl);
    const vfloat32m4_t nf = __riscv_vfcvt_f_x_v_f32m4(n, vl);
    vfloat32m4_t r = __riscv_vfnmsac_vf_f32m4(x, 0.693145752f, nf, vl);  // ln2 high part
    r = __riscv_vfnmsac_vf_f32m4(r, 1.42860677e-6f, nf, vl);              // ln2 low part
    vfloat32m4_t p = __riscv_vfmv_v_f_f32m4(1.0f / 720.0f, vl);
    p = __riscv_vfmadd_vv_f32m4(p, r, __riscv_vfmv_v_f_f32m4(1.0f / 120.0f, vl), vl);
    p = __riscv_vfmadd_vv_f32m4(p, r, __riscv_vfmv_v_f_f32m4(1.0f / 24.0f, vl), vl);
    p = __riscv_vfmadd_vv_f32m4(p, r, __riscv_vfmv_v_f_f32m4(1.0f / 6.0f, vl), vl);
    p = __riscv_vfmadd_vv_f32m4(p, r, __riscv_vfmv_v_f_f32m4(0.5f, vl), vl);
    p = __riscv_vfmadd_vv_f32m4(p, r, __riscv_vfmv_v_f_f32m4(1.0f, vl), vl);
    p = __riscv_vfmadd_vv_f32m4(p, r, __riscv_vfmv_v_f_f32m4(1.0f, vl), vl);
    const vint32m4_t bits = __riscv_vsll_vx_i32m4(__riscv_vadd_vx_i32m4(n, 127, vl), 23, vl);
    return __riscv_vfmul_vv_f32m4(p, __riscv_vreinterpret_v_i32m4_f32m4(bits), vl);
}

} // namespace

extern "C" void softmax(int rows, int cols, const float* x, float* y) {
    const size_t n = static_cast<size_t>(cols);
    const size_t vlmax = __riscv_vsetvlmax_e32m4();
    for (int row = 0; row < rows; ++row) {
        const float* in = x + row * n;
        float* out = y + row * n;
        vfloat32m4_t peak = __riscv_vfmv_v_f_f32m4(in[0], vlmax);
        for (size_t c = 0, vl; c < n; c += vl) {
            vl = __riscv_vsetvl_e32m4(n - c);
            peak = __riscv_vfmax_vv_f32m4_tu(peak, peak, __riscv_vle32_v_f32m4(in + c, vl), vl);
        }
        const float m = __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredmax_vs_f32m4_f32m1(peak, __riscv_vfmv_s_f_f32m1(in[0], 1), vlmax));
        vfloat32m4_t part = __riscv_vfmv_v_f_f32m4(0.0f, vlmax);
        for (size_t c = 0, vl; c < n; c += vl) {
            vl = __riscv_vsetvl_e32m4(n - c);
            const vfloat32m4_t e = vexp(__riscv_vfsub_vf_f32m4(__riscv_vle32_v_f32m4(in + c, vl), m, vl), vl);
            __riscv_vse32_v_f32m4(out + c, e, vl);
            part = __riscv_vfadd_vv_f32m4_tu(part, part, e, vl);
        }
        const float sum = __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredusum_vs_f32m4_f32m1(part, __riscv_vfmv_s_f_f32m1(0.0f, 1), vlmax));
        const float inv = 1.0f / sum;
        for (size_t c = 0, vl; c < n; c += vl) {
            vl = __riscv_vsetvl_e32m4(n - c);
            __riscv_vse32_v_f32m4(out + c, __riscv_vfmul_vf_f32m4(__riscv_vle32_v_f32m4(out + c, vl), inv, vl), vl);
        }
    }
}

// Hand-vectorized gemm (for the tests and the closing note): for each row of C, strip-mine the
// columns with LMUL=4 and keep four rows of C in registers (register blocking), broadcasting A[i][k]
// into vfmacc.vf while B's row is loaded once per k for the four rows.
#include <riscv_vector.h>

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    int i = 0;
    for (; i + 4 <= M; i += 4) {
        const float* a0 = A + i * K;
        for (int j = 0; j < N;) {
            const size_t vl = __riscv_vsetvl_e32m4(static_cast<size_t>(N - j));
            vfloat32m4_t c0 = __riscv_vfmv_v_f_f32m4(0.0f, vl), c1 = c0, c2 = c0, c3 = c0;
            for (int k = 0; k < K; ++k) {
                const vfloat32m4_t b = __riscv_vle32_v_f32m4(B + k * N + j, vl);
                c0 = __riscv_vfmacc_vf_f32m4(c0, a0[k], b, vl);
                c1 = __riscv_vfmacc_vf_f32m4(c1, a0[K + k], b, vl);
                c2 = __riscv_vfmacc_vf_f32m4(c2, a0[2 * K + k], b, vl);
                c3 = __riscv_vfmacc_vf_f32m4(c3, a0[3 * K + k], b, vl);
            }
            __riscv_vse32_v_f32m4(C + i * N + j, c0, vl);
            __riscv_vse32_v_f32m4(C + (i + 1) * N + j, c1, vl);
            __riscv_vse32_v_f32m4(C + (i + 2) * N + j, c2, vl);
            __riscv_vse32_v_f32m4(C + (i + 3) * N + j, c3, vl);
            j += static_cast<int>(vl);
        }
    }
    for (; i < M; ++i) {
        for (int j = 0; j < N;) {
            const size_t vl = __riscv_vsetvl_e32m8(static_cast<size_t>(N - j));
            vfloat32m8_t c = __riscv_vfmv_v_f_f32m8(0.0f, vl);
            for (int k = 0; k < K; ++k)
                c = __riscv_vfmacc_vf_f32m8(c, A[i * K + k], __riscv_vle32_v_f32m8(B + k * N + j, vl), vl);
            __riscv_vse32_v_f32m8(C + i * N + j, c, vl);
            j += static_cast<int>(vl);
        }
    }
}

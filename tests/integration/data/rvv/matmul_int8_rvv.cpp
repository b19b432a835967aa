// Hand-vectorized int8 matmul: per row of C, strips of columns; for each k a strip of B's row is
// loaded as int8 (LMUL 1), sign-extended to int16 (LMUL 2) and multiply-accumulated with the scalar
// A[i][k] into int32 (LMUL 4) by the widening vwmacc.vx.
#include <riscv_vector.h>
#include <stdint.h>

extern "C" void matmul_int8(int M, int N, int K, const int8_t* A, const int8_t* B, int32_t* C) {
    for (int i = 0; i < M; ++i) {
        const int8_t* a = A + i * K;
        for (int j = 0; j < N;) {
            const size_t vl = __riscv_vsetvl_e8m1(static_cast<size_t>(N - j));
            vint32m4_t acc = __riscv_vmv_v_x_i32m4(0, vl);
            for (int k = 0; k < K; ++k) {
                const vint16m2_t b = __riscv_vsext_vf2_i16m2(__riscv_vle8_v_i8m1(B + k * N + j, vl), vl);
                acc = __riscv_vwmacc_vx_i32m4(acc, static_cast<int16_t>(a[k]), b, vl);
            }
            __riscv_vse32_v_i32m4(C + i * N + j, acc, vl);
            j += static_cast<int>(vl);
        }
    }
}

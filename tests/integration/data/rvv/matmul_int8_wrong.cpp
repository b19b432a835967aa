// Wrong variant: accumulates in int16 (vwmul into 16 bits, added at 16 bits), which overflows for
// large K: the int32 accumulation is the point of the problem.
#include <riscv_vector.h>
#include <stdint.h>

extern "C" void matmul_int8(int M, int N, int K, const int8_t* A, const int8_t* B, int32_t* C) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N;) {
            const size_t vl = __riscv_vsetvl_e8m1(static_cast<size_t>(N - j));
            vint16m2_t acc = __riscv_vmv_v_x_i16m2(0, vl);
            for (int k = 0; k < K; ++k)
                acc = __riscv_vadd_vv_i16m2(acc, __riscv_vwmul_vx_i16m2(__riscv_vle8_v_i8m1(B + k * N + j, vl), A[i * K + k], vl), vl);
            __riscv_vse32_v_i32m4(C + i * N + j, __riscv_vsext_vf2_i32m4(acc, vl), vl);
            j += static_cast<int>(vl);
        }
}

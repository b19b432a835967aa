// A wrong variant for the tests: vectorized over j like a real candidate, but the strip-mined loop
// stops at the last full vector, so the tail columns (N not a multiple of the vector length) are
// never written.
#include <riscv_vector.h>

extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const int full = static_cast<int>(__riscv_vsetvlmax_e32m4());
    for (int i = 0; i < M; ++i)
        for (int j = 0; j + full <= N; j += full) {
            const size_t vl = __riscv_vsetvl_e32m4(static_cast<size_t>(full));
            vfloat32m4_t acc = __riscv_vfmv_v_f_f32m4(0.0f, vl);
            for (int k = 0; k < K; ++k)
                acc = __riscv_vfmacc_vf_f32m4(acc, A[i * K + k], __riscv_vle32_v_f32m4(B + k * N + j, vl), vl);
            __riscv_vse32_v_f32m4(C + i * N + j, acc, vl);
        }
}

// Correct: splits the rows between itself and one thread, which it joins before returning.
#include <thread>
#include <vector>
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    auto rows = [=](int r0, int r1) {
        for (int i = r0; i < r1; ++i)
            for (int j = 0; j < N; ++j) { float s = 0; for (int k = 0; k < K; ++k) s += A[i*K+k]*B[k*N+j]; C[i*N+j] = s; }
    };
    std::thread t(rows, 0, M / 2);
    rows(M / 2, M);
    t.join();
}

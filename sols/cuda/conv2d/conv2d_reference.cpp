// Trusted reference of the CUDA conv2d problem, on the host: direct cross-correlation (NCHW input,
// KCRS filter, stride 1, no padding), each output accumulated in double, rounded once to float.
#include <cstddef>

extern "C" void conv2d_reference(int N, int C, int H, int W, int K, int R, int S, const float* x, const float* w, float* y) {
    const int P = H - R + 1, Q = W - S + 1;
#pragma omp parallel for collapse(2) schedule(static)
    for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k)
            for (int p = 0; p < P; ++p)
                for (int q = 0; q < Q; ++q) {
                    double acc = 0.0;
                    for (int c = 0; c < C; ++c)
                        for (int r = 0; r < R; ++r)
                            for (int s = 0; s < S; ++s)
                                acc += static_cast<double>(x[((static_cast<std::size_t>(n) * C + c) * H + p + r) * W + q + s]) *
                                       static_cast<double>(w[((static_cast<std::size_t>(k) * C + c) * R + r) * S + s]);
                    y[((static_cast<std::size_t>(n) * K + k) * P + p) * Q + q] = static_cast<float>(acc);
                }
}

// Deliberately wrong conv2d: the kernel-row loop skips the last row of taps (r < R-1).
extern "C" void conv2d(int N, int C, int H, int W, int K, int R, int S, const float* x, const float* w, float* y) {
    const int P = H - R + 1, Q = W - S + 1;
    for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k)
            for (int p = 0; p < P; ++p)
                for (int q = 0; q < Q; ++q) {
                    float sum = 0.0f;
                    for (int c = 0; c < C; ++c)
                        for (int r = 0; r < R - 1; ++r)
                            for (int s = 0; s < S; ++s)
                                sum += x[((n * C + c) * H + p + r) * W + q + s] * w[((k * C + c) * R + r) * S + s];
                    y[((n * K + k) * P + p) * Q + q] = sum;
                }
}

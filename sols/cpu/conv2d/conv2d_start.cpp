// Starting point: direct convolution, one output element at a time (NCHW input, KCRS weights,
// stride 1, no padding). Every output element is written exactly once.
extern "C" void conv2d(int N, int C, int H, int W, int K, int R, int S, const float* x, const float* w, float* y) {
    const int P = H - R + 1;
    const int Q = W - S + 1;
    for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k)
            for (int p = 0; p < P; ++p)
                for (int q = 0; q < Q; ++q) {
                    float sum = 0.0f;
                    for (int c = 0; c < C; ++c)
                        for (int r = 0; r < R; ++r)
                            for (int s = 0; s < S; ++s)
                                sum += x[((n * C + c) * H + p + r) * W + q + s] * w[((k * C + c) * R + r) * S + s];
                    y[((n * K + k) * P + p) * Q + q] = sum;
                }
}

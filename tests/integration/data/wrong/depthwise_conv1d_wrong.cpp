// Deliberately wrong depthwise_conv1d: the kernel is applied flipped (a true convolution instead of
// the cross-correlation the problem asks for).
extern "C" void depthwise_conv1d(int C, int L, int K, const float* x, const float* w, float* y) {
    const int n = L - K + 1;
    for (int c = 0; c < C; ++c)
        for (int i = 0; i < n; ++i) {
            float sum = 0.0f;
            for (int j = 0; j < K; ++j)
                sum += x[c * L + i + j] * w[c * K + (K - 1 - j)];
            y[c * n + i] = sum;
        }
}

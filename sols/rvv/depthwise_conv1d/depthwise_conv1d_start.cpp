// Starting point: for every output, a scalar dot product over the K taps (the compiler's
// auto-vectorizer is switched off for these loops, so the search starts from scalar code).
extern "C" void depthwise_conv1d(int C, int L, int K, const float* x, const float* w, float* y) {
    const int out_len = L - K + 1;
    for (int c = 0; c < C; ++c) {
#pragma clang loop vectorize(disable) interleave(disable)
        for (int i = 0; i < out_len; ++i) {
            float sum = 0.0f;
#pragma clang loop vectorize(disable) interleave(disable)
            for (int k = 0; k < K; ++k)
                sum += x[c * L + i + k] * w[c * K + k];
            y[c * out_len + i] = sum;
        }
    }
}

// Starting point: each output element is a K-term dot product of its channel's kernel with a window
// of the input row. y[c][i] = sum_j x[c][i+j] * w[c][j], i < L-K+1.
extern "C" void depthwise_conv1d(int C, int L, int K, const float* x, const float* w, float* y) {
    const int out_len = L - K + 1;
    for (int c = 0; c < C; ++c)
        for (int i = 0; i < out_len; ++i) {
            float sum = 0.0f;
            for (int j = 0; j < K; ++j)
                sum += x[c * L + i + j] * w[c * K + j];
            y[c * out_len + i] = sum;
        }
}

// Known broken (`autocomp targets check`): a missing semicolon. Must be `compile_error`.
extern "C" void rmsnorm(int rows, int cols, const float* x, const float* weight, float* y) {
    for (int i = 0; i < rows * cols; ++i)
        y[i] = x[i] * weight[i % cols]
}

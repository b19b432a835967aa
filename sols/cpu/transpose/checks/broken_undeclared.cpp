// Known broken (`autocomp targets check`): uses a name that is never declared. Must be `compile_error`.
extern "C" void transpose(int rows, int cols, const float* x, float* y) {
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
            y[j * rows + i] = x[i * stride + j];
}

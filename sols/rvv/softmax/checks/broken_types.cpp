// Known broken (`autocomp targets check`): assigns a pointer to a float. Must be `compile_error`.
extern "C" void softmax(int rows, int cols, const float* x, float* y) {
    for (int i = 0; i < rows * cols; ++i)
        y[i] = x;
}

// Known broken (`autocomp targets check`): uses a name that is never declared. Must be `compile_error`.
extern "C" void saxpy(int n, float a, const float* x, float* y) {
    for (int i = 0; i < n; ++i)
        y[i] = a * x[i] + y[i] + bias;
}

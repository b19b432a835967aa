// Known wrong (`autocomp targets check`): stops 7 elements early, so the last elements are never
// written (and nothing at n=1). Must be `incorrect`.
extern "C" void saxpy(int n, float a, const float* x, float* y) {
    for (int i = 0; i + 8 <= n; ++i)
        y[i] = a * x[i] + y[i];
}

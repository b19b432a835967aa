// Starting point: one element per iteration, scalar (the compiler's auto-vectorizer is switched off
// for this loop, so the search starts from scalar code).
extern "C" void saxpy(int n, float a, const float* x, float* y) {
#pragma clang loop vectorize(disable) interleave(disable)
    for (int i = 0; i < n; ++i)
        y[i] = a * x[i] + y[i];
}

/* Starting point: one element per iteration. */
void saxpy(int n, float a, const float* x, const float* y, float* z) {
    for (int i = 0; i < n; ++i)
        z[i] = a * x[i] + y[i];
}

/* Broken on purpose (autocomp targets check expects `compile_error`): the loop's brace is never closed. */
void saxpy(int n, float a, const float* x, const float* y, float* z) {
    for (int i = 0; i < n; ++i) {
        z[i] = a * x[i] + y[i];
}

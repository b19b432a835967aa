/* Wrong on purpose (autocomp targets check expects `incorrect`): the last element is never written. */
void saxpy(int n, float a, const float* x, const float* y, float* z) {
    for (int i = 0; i + 1 < n; ++i)
        z[i] = a * x[i] + y[i];
}

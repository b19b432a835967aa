// Trusted reference, linked only into the judge: double accumulation, one element at a time.
extern "C" void saxpy(int n, float a, const float* x, const float* y, float* z) {
    for (int i = 0; i < n; ++i)
        z[i] = static_cast<float>(static_cast<double>(a) * x[i] + y[i]);
}

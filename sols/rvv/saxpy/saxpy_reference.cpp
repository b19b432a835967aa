// Trusted reference (host): the product and the sum in double precision, rounded once.
extern "C" void saxpy(int n, float a, const float* x, float* y) {
    for (int i = 0; i < n; ++i)
        y[i] = static_cast<float>(static_cast<double>(a) * static_cast<double>(x[i]) + static_cast<double>(y[i]));
}

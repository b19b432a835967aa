// Trusted reference: per channel, the output row is accumulated in double precision tap by tap
// (for each kernel tap, the whole shifted input row is scaled and added), then rounded once to
// float. Written independently of depthwise_conv1d_start.cpp.
#include <cstddef>
#include <vector>

extern "C" void depthwise_conv1d(int C, int L, int K, const float* x, const float* w, float* y) {
    const std::size_t len = static_cast<std::size_t>(L), taps = static_cast<std::size_t>(K);
    const std::size_t n_out = len - taps + 1;
    std::vector<double> acc(n_out);
    for (std::size_t c = 0; c < static_cast<std::size_t>(C); ++c) {
        const float* row = x + c * len;
        const float* kern = w + c * taps;
        for (double& a : acc)
            a = 0.0;
        for (std::size_t t = taps; t-- > 0;) {
            const double wt = kern[t];
            const float* src = row + t;
            for (std::size_t i = 0; i < n_out; ++i)
                acc[i] += wt * static_cast<double>(src[i]);
        }
        float* out = y + c * n_out;
        for (std::size_t i = 0; i < n_out; ++i)
            out[i] = static_cast<float>(acc[i]);
    }
}

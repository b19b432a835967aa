// Trusted reference: for each (image, output channel) a whole output plane is accumulated in double
// precision by sliding every weight tap over the input plane (scatter order: c, r, s outermost, then
// output rows and columns), and rounded once to float. Written independently of conv2d_start.cpp.
#include <cstddef>
#include <vector>

extern "C" void conv2d(int N, int C, int H, int W, int K, int R, int S, const float* x, const float* w, float* y) {
    const std::size_t h = static_cast<std::size_t>(H), wd = static_cast<std::size_t>(W);
    const std::size_t rows = h - static_cast<std::size_t>(R) + 1, cols = wd - static_cast<std::size_t>(S) + 1;
    const std::size_t plane_in = h * wd, plane_out = rows * cols;
    const std::size_t taps = static_cast<std::size_t>(R) * static_cast<std::size_t>(S);
    std::vector<double> acc(plane_out);
    for (std::size_t n = 0; n < static_cast<std::size_t>(N); ++n) {
        for (std::size_t k = 0; k < static_cast<std::size_t>(K); ++k) {
            for (double& a : acc)
                a = 0.0;
            for (std::size_t c = 0; c < static_cast<std::size_t>(C); ++c) {
                const float* plane = x + (n * static_cast<std::size_t>(C) + c) * plane_in;
                const float* taps_kc = w + (k * static_cast<std::size_t>(C) + c) * taps;
                for (std::size_t t = 0; t < taps; ++t) {
                    const std::size_t dr = t / static_cast<std::size_t>(S), ds = t % static_cast<std::size_t>(S);
                    const double weight = taps_kc[t];
                    for (std::size_t i = 0; i < rows; ++i) {
                        const float* src = plane + (i + dr) * wd + ds;
                        double* dst = acc.data() + i * cols;
                        for (std::size_t j = 0; j < cols; ++j)
                            dst[j] += weight * static_cast<double>(src[j]);
                    }
                }
            }
            float* out = y + (n * static_cast<std::size_t>(K) + k) * plane_out;
            for (std::size_t i = 0; i < plane_out; ++i)
                out[i] = static_cast<float>(acc[i]);
        }
    }
}

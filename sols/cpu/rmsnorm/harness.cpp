// Harness of the rmsnorm problem: built as the judge (with the reference) and as the worker (see autocomp_harness.h).
#include "autocomp_harness.h"

AUTOCOMP_ENTRY(void, rmsnorm, (int rows, int cols, const float* x, const float* weight, float* y))

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::Problem p;
    p.name = "rmsnorm";
    p.dtype = "fp32";
    p.keys = {"rows", "cols"};
    // x is rows x cols, scale * u with u uniform in [-1, 1) and a per-row scale in [0.25, 4). Every
    // fourth row (r % 4 == 1) is "quiet", scale in [1e-4, 3e-4): its mean square (at most 3e-8) is
    // far below eps = 1e-6, so a missing or misplaced eps is caught. weight is uniform in [0.5, 1.5).
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        const long long rows = s["rows"], cols = s["cols"];
        autocomp::Buffer x(static_cast<std::size_t>(rows * cols));
        for (long long r = 0; r < rows; ++r) {
            const float scale = r % 4 == 1 ? rng.uniform(1e-4f, 3e-4f) : rng.uniform(0.25f, 4.0f);
            for (long long c = 0; c < cols; ++c)
                x[static_cast<std::size_t>(r * cols + c)] = scale * rng.uniform(-1.0f, 1.0f);
        }
        autocomp::Buffers in;
        in.push_back(std::move(x));
        in.push_back(autocomp::uniform(cols, rng, 0.5f, 1.5f));
        return in;
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["rows"], s["cols"]}}; };
    p.call = [](const Shape& s, const autocomp::Spans& in, const autocomp::Spans& out) {
        rmsnorm(s.i("rows"), s.i("cols"), in[0].data(), in[1].data(), out[0].data());
    };
    // Per element: multiply-add for the sum of squares, multiply by the inverse rms, multiply by weight.
    p.flops = [](const Shape& s) { return 4.0 * s["rows"] * s["cols"]; };
    p.bytes = [](const Shape& s) { return 4.0 * (2 * s["rows"] * s["cols"] + s["cols"]); };
    return autocomp::harness_main(argc, argv, p);
}

// Harness of the rvv layernorm problem: the CPU target's harness, with the kernel call counted
// (see backends/rvv/include/autocomp_rvv.h).
#include "autocomp_harness.h"
#include "autocomp_rvv.h"

AUTOCOMP_ENTRY(void, layernorm, (int rows, int cols, const float* x, const float* gamma, const float* beta, float* y))

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::Problem p;
    p.name = "layernorm";
    p.dtype = "fp32";
    p.keys = {"rows", "cols"};
    // x is rows x cols. Most rows are offset + scale * u with offset uniform in [-4, 4), scale in
    // [0.5, 2) and u uniform in [-1, 1), so the mean is not small against the spread. Every fourth row
    // (r % 4 == 1) is "quiet": offset in [-0.01, 0.01), scale in [1e-3, 3e-3), so its variance
    // (at most 3e-6) is below eps = 1e-5 and a missing or misplaced eps is caught.
    // gamma is uniform in [0.5, 1.5), beta in [-0.5, 0.5).
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        const long long rows = s["rows"], cols = s["cols"];
        autocomp::Buffer x(static_cast<std::size_t>(rows * cols));
        for (long long r = 0; r < rows; ++r) {
            const bool quiet = r % 4 == 1;
            const float offset = quiet ? rng.uniform(-0.01f, 0.01f) : rng.uniform(-4.0f, 4.0f);
            const float scale = quiet ? rng.uniform(1e-3f, 3e-3f) : rng.uniform(0.5f, 2.0f);
            for (long long c = 0; c < cols; ++c)
                x[static_cast<std::size_t>(r * cols + c)] = offset + scale * rng.uniform(-1.0f, 1.0f);
        }
        autocomp::Buffers in;
        in.push_back(std::move(x));
        in.push_back(autocomp::uniform(cols, rng, 0.5f, 1.5f));
        in.push_back(autocomp::uniform(cols, rng, -0.5f, 0.5f));
        return in;
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["rows"], s["cols"]}}; };
    p.call = [](const Shape& s, const autocomp::Spans& in, const autocomp::Spans& out) {
        // Shape lookups outside the counted region.
        const int rows = s.i("rows"), cols = s.i("cols");
        AUTOCOMP_COUNTED(layernorm(rows, cols, in[0].data(), in[1].data(), in[2].data(), out[0].data()));
    };
    // Per element: add for the mean, subtract and multiply-add for the variance, subtract, multiply
    // by the inverse deviation, multiply by gamma, add beta.
    p.flops = [](const Shape& s) { return 8.0 * s["rows"] * s["cols"]; };
    p.bytes = [](const Shape& s) { return 4.0 * (2 * s["rows"] * s["cols"] + 2 * s["cols"]); };
    return autocomp::harness_main(argc, argv, p);
}

// Harness of the rvv softmax problem: the CPU target's harness, with the kernel call counted
// (see backends/rvv/include/autocomp_rvv.h).
#include "autocomp_harness.h"
#include "autocomp_rvv.h"

AUTOCOMP_ENTRY(void, softmax, (int rows, int cols, const float* x, float* y))

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::Problem p;
    p.name = "softmax";
    p.dtype = "fp32";
    p.keys = {"rows", "cols"};
    // x is rows x cols. Each row is a random offset uniform in [-90, 90) plus values uniform in
    // [-5, 5): exp() of the raw inputs overflows or underflows in fp32 (|x| reaches 95), so only a
    // numerically stable (max-subtracted) softmax passes.
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        const long long rows = s["rows"], cols = s["cols"];
        autocomp::Buffer x(static_cast<std::size_t>(rows * cols));
        for (long long r = 0; r < rows; ++r) {
            const float offset = rng.uniform(-90.0f, 90.0f);
            for (long long c = 0; c < cols; ++c)
                x[static_cast<std::size_t>(r * cols + c)] = offset + rng.uniform(-5.0f, 5.0f);
        }
        autocomp::Buffers in;
        in.push_back(std::move(x));
        return in;
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["rows"], s["cols"]}}; };
    p.call = [](const Shape& s, const autocomp::Spans& in, const autocomp::Spans& out) {
        // Shape lookups outside the counted region.
        const int rows = s.i("rows"), cols = s.i("cols");
        AUTOCOMP_COUNTED(softmax(rows, cols, in[0].data(), out[0].data()));
    };
    // Per element: compare for the max, subtract, exp (counted as one op), add to the sum, scale.
    p.flops = [](const Shape& s) { return 5.0 * s["rows"] * s["cols"]; };
    p.bytes = [](const Shape& s) { return 8.0 * s["rows"] * s["cols"]; };
    return autocomp::harness_main(argc, argv, p);
}

// Harness of the rvv saxpy problem (see backends/rvv/include/autocomp_rvv.h). y is an input and
// the output: the worker copies the judge's y into the output before the counted call.
#include "autocomp_harness.h"
#include "autocomp_rvv.h"

AUTOCOMP_ENTRY(void, saxpy, (int n, float a, const float* x, float* y))

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::Problem p;
    p.name = "saxpy";
    p.dtype = "fp32";
    p.keys = {"n"};
    // a is one value uniform in [-2, 2) (a buffer of one), x and y uniform in [-1, 1).
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        autocomp::Buffers in;
        in.push_back(autocomp::uniform(1, rng, -2.0f, 2.0f));
        in.push_back(autocomp::uniform(s["n"], rng));
        in.push_back(autocomp::uniform(s["n"], rng));
        return in;
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["n"]}}; };
    p.call = [](const Shape& s, const autocomp::Spans& in, const autocomp::Spans& out) {
        const int n = s.i("n");
        std::copy(in[2].data(), in[2].data() + n, out[0].data());
        AUTOCOMP_COUNTED(saxpy(n, in[0].data()[0], in[1].data(), out[0].data()));
    };
    p.flops = [](const Shape& s) { return 2.0 * s["n"]; };
    p.bytes = [](const Shape& s) { return 12.0 * s["n"]; };
    return autocomp::harness_main(argc, argv, p);
}

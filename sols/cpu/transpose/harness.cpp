// Harness of the transpose problem: built as the judge (with the reference) and as the worker (see autocomp_harness.h).
#include "autocomp_harness.h"

AUTOCOMP_ENTRY(void, transpose, (int rows, int cols, const float* x, float* y))

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::Problem p;
    p.name = "transpose";
    p.dtype = "fp32";
    p.keys = {"rows", "cols"};
    // x is rows x cols with entries uniform in [-1, 1); y is cols x rows.
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        autocomp::Buffers in;
        in.push_back(autocomp::uniform(s["rows"] * s["cols"], rng));
        return in;
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["cols"], s["rows"]}}; };
    p.call = [](const Shape& s, const autocomp::Spans& in, const autocomp::Spans& out) {
        transpose(s.i("rows"), s.i("cols"), in[0].data(), out[0].data());
    };
    // Pure data movement: no floating-point work, judged by effective bandwidth (read x, write y).
    p.flops = [](const Shape&) { return 0.0; };
    p.bytes = [](const Shape& s) { return 8.0 * s["rows"] * s["cols"]; };
    return autocomp::harness_main(argc, argv, p);
}

// The saxpy problem for the kit-c target: what the kit needs to know about the kernel. Built twice by
// the target's setup: as the judge (with saxpy_reference.cpp) and as the worker (-DAUTOCOMP_WORKER,
// which loads the candidate's shared object). Everything else comes from backends/common/include.
#include "autocomp_harness.h"

AUTOCOMP_ENTRY(void, saxpy, (int n, float a, const float* x, const float* y, float* z))

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::Problem p;
    p.name = "saxpy";
    p.keys = {"n"};
    // Inputs: the scalar a (one float), x and y, drawn from the judge's secret seed.
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        return autocomp::Buffers{autocomp::uniform(1, rng, 0.5f, 2.0f), autocomp::uniform(s["n"], rng),
                                 autocomp::uniform(s["n"], rng)};
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["n"]}}; };
    p.call = [](const Shape& s, const autocomp::Spans& in, const autocomp::Spans& out) {
        saxpy(s.i("n"), in[0].data()[0], in[1].data(), in[2].data(), out[0].data());
    };
    p.flops = [](const Shape& s) { return 2.0 * s["n"]; };
    p.bytes = [](const Shape& s) { return 12.0 * s["n"]; };
    return autocomp::harness_main(argc, argv, p);
}

// Harness of the rvv depthwise_conv1d problem: the CPU target's harness, with the kernel call counted
// (see backends/rvv/include/autocomp_rvv.h).
// depthwise_conv1d_reference.cpp.
#include "autocomp_harness.h"
#include "autocomp_rvv.h"

AUTOCOMP_ENTRY(void, depthwise_conv1d, (int C, int L, int K, const float* x, const float* w, float* y))

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::Problem p;
    p.name = "depthwise_conv1d";
    p.dtype = "fp32";
    p.keys = {"C", "L", "K"};
    // x is C x L, w is C x K, entries uniform in [-1, 1).
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        if (s["K"] < 1 || s["K"] > s["L"])
            throw std::runtime_error("depthwise_conv1d shape " + s.text() + " needs 1 <= K <= L");
        autocomp::Buffers in;
        in.push_back(autocomp::uniform(s["C"] * s["L"], rng));
        in.push_back(autocomp::uniform(s["C"] * s["K"], rng));
        return in;
    };
    // y is C x (L - K + 1): 'valid' output.
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["C"], s["L"] - s["K"] + 1}}; };
    p.call = [](const Shape& s, const autocomp::Spans& in, const autocomp::Spans& out) {
        // Shape lookups outside the counted region.
        const int C = s.i("C"), L = s.i("L"), K = s.i("K");
        AUTOCOMP_COUNTED(depthwise_conv1d(C, L, K, in[0].data(), in[1].data(), out[0].data()));
    };
    p.flops = [](const Shape& s) { return 2.0 * s["C"] * (s["L"] - s["K"] + 1) * s["K"]; };
    p.bytes = [](const Shape& s) { return 4.0 * (s["C"] * s["L"] + s["C"] * s["K"] + s["C"] * (s["L"] - s["K"] + 1)); };
    return autocomp::harness_main(argc, argv, p);
}

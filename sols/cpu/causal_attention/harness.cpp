// Harness of the causal_attention problem: built as the judge (with the reference) and as the worker (see autocomp_harness.h).
// causal_attention_reference.cpp.
#include "autocomp_harness.h"

AUTOCOMP_ENTRY(void, causal_attention, (int seq, int d, const float* Q, const float* K, const float* V, float* out))

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::Problem p;
    p.name = "causal_attention";
    p.dtype = "fp32";
    p.keys = {"seq", "d"};
    // Q, K and V are seq x d. Q and K are uniform in [-2, 2), so scaled scores have a standard deviation
    // of about 1.3 and the attention weights are far from uniform; V is uniform in [-1, 1).
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        const long long n = s["seq"] * s["d"];
        autocomp::Buffers in;
        in.push_back(autocomp::uniform(n, rng, -2.0f, 2.0f));
        in.push_back(autocomp::uniform(n, rng, -2.0f, 2.0f));
        in.push_back(autocomp::uniform(n, rng, -1.0f, 1.0f));
        return in;
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["seq"], s["d"]}}; };
    p.call = [](const Shape& s, const autocomp::Spans& in, const autocomp::Spans& out) {
        causal_attention(s.i("seq"), s.i("d"), in[0].data(), in[1].data(), in[2].data(), out[0].data());
    };
    // Row i attends to i+1 keys: 2*d flops for each score and 2*d for each weighted value row.
    p.flops = [](const Shape& s) { return 2.0 * s["seq"] * (s["seq"] + 1) * s["d"]; };
    p.bytes = [](const Shape& s) { return 16.0 * s["seq"] * s["d"]; };
    return autocomp::harness_main(argc, argv, p);
}

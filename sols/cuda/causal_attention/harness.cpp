// Harness of the CUDA causal_attention problem (see backends/cuda/include/autocomp_cuda_harness.h).
#include "autocomp_cuda_harness.h"

AUTOCOMP_CUDA_ENTRY(causal_attention, (int seq, int d, const float* Q, const float* K, const float* V, float* out))
#ifndef AUTOCOMP_CUDA_WORKER
extern "C" void causal_attention_reference(int seq, int d, const float* Q, const float* K, const float* V, float* out);
#endif

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::cuda::Problem p;
    p.name = "causal_attention";
    p.keys = {"seq", "d"};
    p.input_elems = {autocomp::cuda::kF32, autocomp::cuda::kF32, autocomp::cuda::kF32};
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        const long long n = s["seq"] * s["d"];
        autocomp::Buffers in;
        in.push_back(autocomp::uniform(n, rng, -2.0f, 2.0f));
        in.push_back(autocomp::uniform(n, rng, -2.0f, 2.0f));
        in.push_back(autocomp::uniform(n, rng, -1.0f, 1.0f));
        return in;
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["seq"], s["d"]}}; };
    p.flops = [](const Shape& s) { return 2.0 * s["seq"] * (s["seq"] + 1) * s["d"]; };
    p.bytes = [](const Shape& s) { return 16.0 * s["seq"] * s["d"]; };
#ifdef AUTOCOMP_CUDA_WORKER
    p.call = [](const Shape& s, const autocomp::cuda::DeviceArgs& a) {
        causal_attention(s.i("seq"), s.i("d"), a.input<float>(0), a.input<float>(1), a.input<float>(2), a.out[0]);
    };
#else
    p.reference = [](const Shape& s, const autocomp::Buffers& in, autocomp::Buffers& out) {
        causal_attention_reference(s.i("seq"), s.i("d"), in[0].data(), in[1].data(), in[2].data(), out[0].data());
    };
#endif
    return autocomp::cuda::harness_main(argc, argv, p);
}

// Harness of the CUDA layernorm problem (see backends/cuda/include/autocomp_cuda_harness.h).
#include "autocomp_cuda_harness.h"

AUTOCOMP_CUDA_ENTRY(layernorm, (int rows, int cols, const float* x, const float* gamma, const float* beta, float* y))
#ifndef AUTOCOMP_CUDA_WORKER
extern "C" void layernorm_reference(int rows, int cols, const float* x, const float* gamma, const float* beta, float* y);
#endif

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::cuda::Problem p;
    p.name = "layernorm";
    p.keys = {"rows", "cols"};
    p.input_elems = {autocomp::cuda::kF32, autocomp::cuda::kF32, autocomp::cuda::kF32};
    // Every fourth row is "quiet": a tiny spread around a tiny offset, where E[x^2] - E[x]^2 in fp32
    // cancels badly; the others have offsets up to +-4.
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
    p.flops = [](const Shape& s) { return 8.0 * s["rows"] * s["cols"]; };
    p.bytes = [](const Shape& s) { return 4.0 * (2 * s["rows"] * s["cols"] + 2 * s["cols"]); };
#ifdef AUTOCOMP_CUDA_WORKER
    p.call = [](const Shape& s, const autocomp::cuda::DeviceArgs& a) {
        layernorm(s.i("rows"), s.i("cols"), a.input<float>(0), a.input<float>(1), a.input<float>(2), a.out[0]);
    };
#else
    p.reference = [](const Shape& s, const autocomp::Buffers& in, autocomp::Buffers& out) {
        layernorm_reference(s.i("rows"), s.i("cols"), in[0].data(), in[1].data(), in[2].data(), out[0].data());
    };
#endif
    return autocomp::cuda::harness_main(argc, argv, p);
}

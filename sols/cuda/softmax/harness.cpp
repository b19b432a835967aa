// Harness of the CUDA softmax problem (see backends/cuda/include/autocomp_cuda_harness.h).
#include "autocomp_cuda_harness.h"

AUTOCOMP_CUDA_ENTRY(softmax, (int rows, int cols, const float* x, float* y))
#ifndef AUTOCOMP_CUDA_WORKER
extern "C" void softmax_reference(int rows, int cols, const float* x, float* y);
#endif

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::cuda::Problem p;
    p.name = "softmax";
    p.keys = {"rows", "cols"};
    p.input_elems = {autocomp::cuda::kF32};
    // Each row has its own offset in [-90, 90] and a spread of +-5: exp without subtracting the row
    // maximum overflows or underflows.
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
    p.flops = [](const Shape& s) { return 5.0 * s["rows"] * s["cols"]; };
    p.bytes = [](const Shape& s) { return 8.0 * s["rows"] * s["cols"]; };
#ifdef AUTOCOMP_CUDA_WORKER
    p.call = [](const Shape& s, const autocomp::cuda::DeviceArgs& a) { softmax(s.i("rows"), s.i("cols"), a.input<float>(0), a.out[0]); };
#else
    p.reference = [](const Shape& s, const autocomp::Buffers& in, autocomp::Buffers& out) {
        softmax_reference(s.i("rows"), s.i("cols"), in[0].data(), out[0].data());
    };
#endif
    return autocomp::cuda::harness_main(argc, argv, p);
}

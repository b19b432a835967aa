// Harness of the CUDA gemm_fp16 problem (see backends/cuda/include/autocomp_cuda_harness.h): fp16
// inputs, fp32 output. The judge draws inputs on a grid exactly representable in fp16 (k/1024), the
// worker converts them to __half on the device, and the reference sees the same numbers.
#include "autocomp_cuda_harness.h"

#include <cmath>

#ifdef AUTOCOMP_CUDA_WORKER
#include <cuda_fp16.h>
#endif

AUTOCOMP_CUDA_ENTRY(gemm_fp16, (int M, int N, int K, const __half* A, const __half* B, float* C))
#ifndef AUTOCOMP_CUDA_WORKER
extern "C" void gemm_fp16_reference(int M, int N, int K, const float* A, const float* B, float* C);
#endif

namespace {
autocomp::Buffer fp16_grid(long long n, autocomp::Rng& rng) {
    autocomp::Buffer b(static_cast<std::size_t>(n));
    for (auto& x : b)
        x = static_cast<float>(rng.between(-1024, 1024)) / 1024.0f;
    return b;
}
} // namespace

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::cuda::Problem p;
    p.name = "gemm_fp16";
    p.dtype = "fp16";
    p.keys = {"M", "N", "K"};
    p.input_elems = {autocomp::cuda::kF16, autocomp::cuda::kF16};
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        autocomp::Buffers in;
        in.push_back(fp16_grid(s["M"] * s["K"], rng));
        in.push_back(fp16_grid(s["K"] * s["N"], rng));
        return in;
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["M"], s["N"]}}; };
    p.flops = [](const Shape& s) { return 2.0 * s["M"] * s["N"] * s["K"]; };
    p.bytes = [](const Shape& s) { return 2.0 * (s["M"] * s["K"] + s["K"] * s["N"]) + 4.0 * s["M"] * s["N"]; };
#ifdef AUTOCOMP_CUDA_WORKER
    p.call = [](const Shape& s, const autocomp::cuda::DeviceArgs& a) {
        gemm_fp16(s.i("M"), s.i("N"), s.i("K"), a.input<__half>(0), a.input<__half>(1), a.out[0]);
    };
#else
    p.reference = [](const Shape& s, const autocomp::Buffers& in, autocomp::Buffers& out) {
        gemm_fp16_reference(s.i("M"), s.i("N"), s.i("K"), in[0].data(), in[1].data(), out[0].data());
    };
#endif
    return autocomp::cuda::harness_main(argc, argv, p);
}

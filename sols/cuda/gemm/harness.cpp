// Harness of the CUDA gemm problem: built as the judge (host compiler, with the reference) and as the
// worker (nvcc, -DAUTOCOMP_CUDA_WORKER): see backends/cuda/include/autocomp_cuda_harness.h.
#include "autocomp_cuda_harness.h"

AUTOCOMP_CUDA_ENTRY(gemm, (int M, int N, int K, const float* A, const float* B, float* C))
#ifndef AUTOCOMP_CUDA_WORKER
extern "C" void gemm_reference(int M, int N, int K, const float* A, const float* B, float* C);
#endif

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::cuda::Problem p;
    p.name = "gemm";
    p.keys = {"M", "N", "K"};
    p.input_elems = {autocomp::cuda::kF32, autocomp::cuda::kF32};
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        autocomp::Buffers in;
        in.push_back(autocomp::uniform(s["M"] * s["K"], rng));
        in.push_back(autocomp::uniform(s["K"] * s["N"], rng));
        return in;
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["M"], s["N"]}}; };
    p.flops = [](const Shape& s) { return 2.0 * s["M"] * s["N"] * s["K"]; };
    p.bytes = [](const Shape& s) { return 4.0 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]); };
#ifdef AUTOCOMP_CUDA_WORKER
    p.call = [](const Shape& s, const autocomp::cuda::DeviceArgs& a) {
        gemm(s.i("M"), s.i("N"), s.i("K"), a.input<float>(0), a.input<float>(1), a.out[0]);
    };
#else
    p.reference = [](const Shape& s, const autocomp::Buffers& in, autocomp::Buffers& out) {
        gemm_reference(s.i("M"), s.i("N"), s.i("K"), in[0].data(), in[1].data(), out[0].data());
    };
#endif
    return autocomp::cuda::harness_main(argc, argv, p);
}

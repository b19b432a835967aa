// Harness of the CUDA conv2d problem (see backends/cuda/include/autocomp_cuda_harness.h).
#include "autocomp_cuda_harness.h"

#include <stdexcept>

AUTOCOMP_CUDA_ENTRY(conv2d, (int N, int C, int H, int W, int K, int R, int S, const float* x, const float* w, float* y))
#ifndef AUTOCOMP_CUDA_WORKER
extern "C" void conv2d_reference(int N, int C, int H, int W, int K, int R, int S, const float* x, const float* w, float* y);
#endif

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::cuda::Problem p;
    p.name = "conv2d";
    p.keys = {"N", "C", "H", "W", "K", "R", "S"};
    p.input_elems = {autocomp::cuda::kF32, autocomp::cuda::kF32};
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        if (s["R"] < 1 || s["S"] < 1 || s["R"] > s["H"] || s["S"] > s["W"])
            throw std::runtime_error("conv2d shape " + s.text() + " needs 1 <= R <= H and 1 <= S <= W");
        autocomp::Buffers in;
        in.push_back(autocomp::uniform(s["N"] * s["C"] * s["H"] * s["W"], rng));
        in.push_back(autocomp::uniform(s["K"] * s["C"] * s["R"] * s["S"], rng));
        return in;
    };
    p.outputs = [](const Shape& s) {
        return std::vector<autocomp::Dims>{{s["N"], s["K"], s["H"] - s["R"] + 1, s["W"] - s["S"] + 1}};
    };
    p.flops = [](const Shape& s) {
        return 2.0 * s["N"] * s["K"] * (s["H"] - s["R"] + 1) * (s["W"] - s["S"] + 1) * s["C"] * s["R"] * s["S"];
    };
    p.bytes = [](const Shape& s) {
        return 4.0 * (s["N"] * s["C"] * s["H"] * s["W"] + s["K"] * s["C"] * s["R"] * s["S"] +
                      s["N"] * s["K"] * (s["H"] - s["R"] + 1) * (s["W"] - s["S"] + 1));
    };
#ifdef AUTOCOMP_CUDA_WORKER
    p.call = [](const Shape& s, const autocomp::cuda::DeviceArgs& a) {
        conv2d(s.i("N"), s.i("C"), s.i("H"), s.i("W"), s.i("K"), s.i("R"), s.i("S"), a.input<float>(0), a.input<float>(1), a.out[0]);
    };
#else
    p.reference = [](const Shape& s, const autocomp::Buffers& in, autocomp::Buffers& out) {
        conv2d_reference(s.i("N"), s.i("C"), s.i("H"), s.i("W"), s.i("K"), s.i("R"), s.i("S"), in[0].data(), in[1].data(), out[0].data());
    };
#endif
    return autocomp::cuda::harness_main(argc, argv, p);
}

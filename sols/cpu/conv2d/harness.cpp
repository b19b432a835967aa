// Harness of the conv2d problem: built as the judge (with the reference) and as the worker (see autocomp_harness.h).
#include "autocomp_harness.h"

AUTOCOMP_ENTRY(void, conv2d, (int N, int C, int H, int W, int K, int R, int S, const float* x, const float* w, float* y))

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::Problem p;
    p.name = "conv2d";
    p.dtype = "fp32";
    p.keys = {"N", "C", "H", "W", "K", "R", "S"};
    // x is N x C x H x W, w is K x C x R x S, entries uniform in [-1, 1).
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        if (s["R"] < 1 || s["S"] < 1 || s["R"] > s["H"] || s["S"] > s["W"])
            throw std::runtime_error("conv2d shape " + s.text() + " needs 1 <= R <= H and 1 <= S <= W");
        autocomp::Buffers in;
        in.push_back(autocomp::uniform(s["N"] * s["C"] * s["H"] * s["W"], rng));
        in.push_back(autocomp::uniform(s["K"] * s["C"] * s["R"] * s["S"], rng));
        return in;
    };
    // y is N x K x P x Q with P = H - R + 1, Q = W - S + 1 (stride 1, no padding).
    p.outputs = [](const Shape& s) {
        return std::vector<autocomp::Dims>{{s["N"], s["K"], s["H"] - s["R"] + 1, s["W"] - s["S"] + 1}};
    };
    p.call = [](const Shape& s, const autocomp::Spans& in, const autocomp::Spans& out) {
        conv2d(s.i("N"), s.i("C"), s.i("H"), s.i("W"), s.i("K"), s.i("R"), s.i("S"), in[0].data(), in[1].data(),
               out[0].data());
    };
    p.flops = [](const Shape& s) {
        return 2.0 * s["N"] * s["K"] * (s["H"] - s["R"] + 1) * (s["W"] - s["S"] + 1) * s["C"] * s["R"] * s["S"];
    };
    p.bytes = [](const Shape& s) {
        return 4.0 * (s["N"] * s["C"] * s["H"] * s["W"] + s["K"] * s["C"] * s["R"] * s["S"] +
                      s["N"] * s["K"] * (s["H"] - s["R"] + 1) * (s["W"] - s["S"] + 1));
    };
    return autocomp::harness_main(argc, argv, p);
}

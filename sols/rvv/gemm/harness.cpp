// Harness of the rvv gemm problem: built as the judge (host, with the reference) and as the worker
// (riscv64, linked with the candidate); see backends/rvv/include/autocomp_rvv.h.
#include "autocomp_harness.h"
#include "autocomp_rvv.h"

AUTOCOMP_ENTRY(void, gemm, (int M, int N, int K, const float* A, const float* B, float* C))

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::Problem p;
    p.name = "gemm";
    p.dtype = "fp32";
    p.keys = {"M", "N", "K"};
    // A is M x K, B is K x N, both row-major, entries uniform in [-1, 1).
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        autocomp::Buffers in;
        in.push_back(autocomp::uniform(s["M"] * s["K"], rng));
        in.push_back(autocomp::uniform(s["K"] * s["N"], rng));
        return in;
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["M"], s["N"]}}; };
    p.call = [](const Shape& s, const autocomp::Spans& in, const autocomp::Spans& out) {
        const int M = s.i("M"), N = s.i("N"), K = s.i("K");
        AUTOCOMP_COUNTED(gemm(M, N, K, in[0].data(), in[1].data(), out[0].data()));
    };
    p.flops = [](const Shape& s) { return 2.0 * s["M"] * s["N"] * s["K"]; };
    p.bytes = [](const Shape& s) { return 4.0 * (s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]); };
    return autocomp::harness_main(argc, argv, p);
}

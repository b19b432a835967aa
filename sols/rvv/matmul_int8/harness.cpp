// Harness of the rvv matmul_int8 problem (see backends/rvv/include/autocomp_rvv.h). The channel
// carries floats: the inputs are integers in [-128, 127] stored as floats and converted to int8
// before the counted call; the int32 results are converted back to float after it (exact: |C| stays
// below 2^24 for K up to 1000).
#include "autocomp_harness.h"
#include "autocomp_rvv.h"

#include <cstdint>

AUTOCOMP_ENTRY(void, matmul_int8, (int M, int N, int K, const std::int8_t* A, const std::int8_t* B, std::int32_t* C))

namespace {
autocomp::Buffer int8_values(long long n, autocomp::Rng& rng) {
    autocomp::Buffer b(static_cast<std::size_t>(n));
    for (auto& x : b)
        x = static_cast<float>(rng.between(-128, 127));
    return b;
}
} // namespace

int main(int argc, char** argv) {
    using autocomp::Shape;
    autocomp::Problem p;
    p.name = "matmul_int8";
    p.dtype = "int8";
    p.keys = {"M", "N", "K"};
    p.make_inputs = [](const Shape& s, autocomp::Rng& rng) {
        if (s["K"] > 1000)
            throw std::runtime_error("matmul_int8 shape " + s.text() + ": K above 1000 could exceed exact float range");
        autocomp::Buffers in;
        in.push_back(int8_values(s["M"] * s["K"], rng));
        in.push_back(int8_values(s["K"] * s["N"], rng));
        return in;
    };
    p.outputs = [](const Shape& s) { return std::vector<autocomp::Dims>{{s["M"], s["N"]}}; };
    p.call = [](const Shape& s, const autocomp::Spans& in, const autocomp::Spans& out) {
        const int M = s.i("M"), N = s.i("N"), K = s.i("K");
        std::vector<std::int8_t> a(in[0].size()), b(in[1].size());
        for (std::size_t i = 0; i < a.size(); ++i)
            a[i] = static_cast<std::int8_t>(in[0].data()[i]);
        for (std::size_t i = 0; i < b.size(); ++i)
            b[i] = static_cast<std::int8_t>(in[1].data()[i]);
        std::vector<std::int32_t> c(out[0].size());
        AUTOCOMP_COUNTED(matmul_int8(M, N, K, a.data(), b.data(), c.data()));
        for (std::size_t i = 0; i < c.size(); ++i)
            out[0].data()[i] = static_cast<float>(c[i]);
    };
    p.flops = [](const Shape& s) { return 2.0 * s["M"] * s["N"] * s["K"]; };
    p.bytes = [](const Shape& s) { return 1.0 * (s["M"] * s["K"] + s["K"] * s["N"]) + 4.0 * s["M"] * s["N"]; };
    return autocomp::harness_main(argc, argv, p);
}

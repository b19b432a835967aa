// roofline — measures this machine's single-core fp32 peak and streaming bandwidth, for the report
// step's roofline bound (backend.yaml runs it once per machine and caches the JSON it writes).
//
//   roofline --out FILE.json
//
// Peak: independent FMA chains in the widest vector registers the compiler targets (-march=native),
// enough chains to cover the FMA latency on both FMA pipes; the best of many short runs (the build
// must use -O3 so the chains stay in registers). Bandwidth: a
// read-only reduction and a triad (a = b + s*c) over working sets that fit in L2, in the last-level
// cache and in DRAM; the faster of the two per size. The process is pinned to one core, like the
// benchmark step, so these are single-core figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "autocomp_probe.h"  // the C/C++ kit (backends/common/include)

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(__AVX512F__) || defined(__AVX2__) || defined(__FMA__)
#include <immintrin.h>
#endif

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

void pin() {
#if defined(__linux__)
    const int cpu = sched_getcpu();
    if (cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
    }
#endif
}

volatile float g_sink;

// FLOP/s of `iters` rounds over kChains independent FMA chains of one vector each.
template <int kChains>
double fma_gflops(long iters) {
#if defined(__AVX512F__)
    using V = __m512;
    constexpr int kLanes = 16;
    auto set = [](float x) { return _mm512_set1_ps(x); };
    auto fma = [](V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); };
    auto sum = [](V a) {
        alignas(64) float t[16];
        _mm512_store_ps(t, a);
        float s = 0;
        for (float x : t)
            s += x;
        return s;
    };
#elif defined(__AVX2__) && defined(__FMA__)
    using V = __m256;
    constexpr int kLanes = 8;
    auto set = [](float x) { return _mm256_set1_ps(x); };
    auto fma = [](V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); };
    auto sum = [](V a) {
        alignas(32) float t[8];
        _mm256_store_ps(t, a);
        float s = 0;
        for (float x : t)
            s += x;
        return s;
    };
#else
    using V = float;
    constexpr int kLanes = 1;
    auto set = [](float x) { return x; };
    auto fma = [](V a, V b, V c) { return a * b + c; };
    auto sum = [](V a) { return a; };
#endif
    V acc[kChains];
    for (int c = 0; c < kChains; ++c)
        acc[c] = set(1.0f + 1e-3f * static_cast<float>(c));
    const V mul = set(0.999999f), add = set(1e-7f);
    const auto t0 = clock_type::now();
    for (long i = 0; i < iters; ++i)
        for (int c = 0; c < kChains; ++c)
            acc[c] = fma(acc[c], mul, add);
    const double s = seconds_since(t0);
    float total = 0;
    for (int c = 0; c < kChains; ++c)
        total += sum(acc[c]);
    g_sink = total;
    return 2.0 * kLanes * kChains * static_cast<double>(iters) / s * 1e-9;
}

double peak_gflops() {
    // Many short runs, keeping the best: on a shared machine some run finds the core to itself.
    double best = 0;
    for (int rep = 0; rep < 20; ++rep) {
        best = std::max(best, fma_gflops<12>(2'000'000));
        best = std::max(best, fma_gflops<16>(1'500'000));
    }
    return best;
}

// Bytes moved per second (GB/s) over a working set of `bytes`, best of reduction and triad.
double bandwidth_gbps(std::size_t bytes) {
    const std::size_t n = std::max<std::size_t>(bytes / sizeof(float) / 3, 1024);
    std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 0.5f);
    const double target_bytes = 2e9;  // per measurement, so the smallest sizes are not timer noise
    const long reps = std::max<long>(1, static_cast<long>(target_bytes / (3.0 * n * sizeof(float))));
    double best_read = 0, best_triad = 0;
    for (int trial = 0; trial < 5; ++trial) {
        auto t0 = clock_type::now();
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (long r = 0; r < reps; ++r) {
            const float* x = r % 2 ? b.data() : a.data();
            for (std::size_t i = 0; i + 4 <= n; i += 4) {
                s0 += x[i];
                s1 += x[i + 1];
                s2 += x[i + 2];
                s3 += x[i + 3];
            }
        }
        g_sink = s0 + s1 + s2 + s3;
        best_read = std::max(best_read, static_cast<double>(reps) * n * sizeof(float) / seconds_since(t0) * 1e-9);
        t0 = clock_type::now();
        for (long r = 0; r < reps; ++r) {
            const float k = 1.0f + 1e-6f * static_cast<float>(r % 7);
            for (std::size_t i = 0; i < n; ++i)
                a[i] = b[i] + k * c[i];
            g_sink = a[r % n];
        }
        best_triad = std::max(best_triad, static_cast<double>(reps) * 3 * n * sizeof(float) / seconds_since(t0) * 1e-9);
    }
    return std::max(best_read, best_triad);
}

}  // namespace

int main(int argc, char** argv) {
    std::string out;
    for (int i = 1; i + 1 < argc; i += 2)
        if (std::strcmp(argv[i], "--out") == 0)
            out = argv[i + 1];
    if (out.empty()) {
        std::fprintf(stderr, "usage: roofline --out FILE.json\n");
        return 2;
    }
    pin();
    const double peak = peak_gflops();
    const std::size_t ws_small = 256u << 10, ws_medium = 8u << 20, ws_dram = 256u << 20;
    const double bw_small = bandwidth_gbps(ws_small);
    const double bw_medium = bandwidth_gbps(ws_medium);
    const double bw_dram = bandwidth_gbps(ws_dram);
    // The cache probe's quiet time: the best of 400 runs spread over about 2 s, so that a phase of
    // interference from outside (autocomp_probe.h) is unlikely to cover all of them.
    autocomp::CacheProbe probe;
    double probe_quiet = probe.ns_per_load();
    for (int i = 0; i < 400; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        probe_quiet = std::min(probe_quiet, probe.ns_per_load());
    }
#if defined(__AVX512F__)
    const char* isa = "avx512";
#elif defined(__AVX2__)
    const char* isa = "avx2";
#else
    const char* isa = "scalar";
#endif
    char json[1024];
    std::snprintf(json, sizeof json,
                  "{\n  \"peak_gflops\": %.4g,\n  \"isa\": \"%s\",\n  \"bw_small_gbps\": %.4g,\n  \"ws_small_bytes\": %zu,"
                  "\n  \"bw_medium_gbps\": %.4g,\n  \"ws_medium_bytes\": %zu,\n  \"bw_dram_gbps\": %.4g,\n"
                  "  \"ws_dram_bytes\": %zu,\n  \"probe_ns_quiet\": %.4g,\n  \"threads\": 1\n}\n",
                  peak, isa, bw_small, ws_small, bw_medium, ws_medium, bw_dram, ws_dram, probe_quiet);
    const std::string tmp = out + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f || std::fputs(json, f) < 0 || std::fclose(f) != 0 || std::rename(tmp.c_str(), out.c_str()) != 0) {
        std::fprintf(stderr, "roofline: cannot write %s\n", out.c_str());
        return 2;
    }
    std::fputs(json, stdout);
    return 0;
}

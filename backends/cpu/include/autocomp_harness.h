// autocomp_harness.h — evaluation harness of the CPU target (C++17, header-only, Linux x86-64).
//
// A problem's harness.cpp describes its kernel with an autocomp::Problem, declares the kernel's
// entry points with AUTOCOMP_ENTRY and hands the problem to autocomp::harness_main(). The same
// harness.cpp is built twice, both times into the per-machine cache by the target's setup steps,
// never into a directory a candidate step can write:
//
//   judge  = harness.cpp + the trusted reference (autocomp_judge.h). It owns the clock, the inputs,
//            the seed and the verdict. It runs the static checks (lint on the preprocessed source,
//            gate on the compiled object), then drives a worker through shared memory: it writes
//            fresh inputs for every call, times each call or batch itself, compares outputs of
//            calls it chose at random with its own reference results, and watches the worker's
//            threads and CPUs from outside (/proc).
//   worker = harness.cpp built with -DAUTOCOMP_WORKER (autocomp_worker.h). It installs a seccomp
//            allow-list, then loads the candidate's shared object (which the gate has checked to
//            have no constructors of its own) and calls the kernel when the judge asks. It never
//            sees the seed, the shapes to come or which calls are checked.
//
// Everything the worker process does is treated as untrusted: its memory, its exit status and its
// output. The judge parses what a candidate step wrote (preprocessed text, the object file,
// compiler remarks, a callgrind profile) as data, with size limits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace autocomp {

// ---------------------------------------------------------------------------------------------
// Buffers: 64-byte aligned float arrays (the base address only; rows follow the problem's layout).

template <typename T>
struct AlignedAllocator {
    using value_type = T;
    static constexpr std::size_t kAlign = 64;
    AlignedAllocator() = default;
    template <typename U>
    AlignedAllocator(const AlignedAllocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kAlign))); }
    void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t(kAlign)); }
    template <typename U>
    bool operator==(const AlignedAllocator<U>&) const noexcept { return true; }
    template <typename U>
    bool operator!=(const AlignedAllocator<U>&) const noexcept { return false; }
};

using Buffer = std::vector<float, AlignedAllocator<float>>;
using Buffers = std::vector<Buffer>;
using Dims = std::vector<long long>;

// What a kernel call sees: a pointer and a length per input or output (in the worker they point
// into the shared memory the judge filled; in the judge into its own buffers).
struct Span {
    float* ptr = nullptr;
    std::size_t n = 0;
    float* data() const { return ptr; }
    std::size_t size() const { return n; }
};
using Spans = std::vector<Span>;

inline Spans spans(Buffers& b) {
    Spans s;
    for (auto& x : b)
        s.push_back({x.data(), x.size()});
    return s;
}
inline Spans spans(const Buffers& b) { return spans(const_cast<Buffers&>(b)); }

// ---------------------------------------------------------------------------------------------
// Deterministic RNG: splitmix64 to seed xoshiro256**.

inline std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Seed of one input set: distinct streams for (shape, trial), benchmark repetitions, picks.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
    std::uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ull);
    std::uint64_t a = splitmix64(s);
    s = a ^ (index * 0x8CB92BA72F3D8DD7ull);
    return splitmix64(s);
}

class Rng {
public:
    explicit Rng(std::uint64_t seed) {
        for (auto& word : m_s)
            word = splitmix64(seed);
    }
    std::uint64_t next() {
        const std::uint64_t result = rotl(m_s[1] * 5, 7) * 9;
        const std::uint64_t t = m_s[1] << 17;
        m_s[2] ^= m_s[0];
        m_s[3] ^= m_s[1];
        m_s[1] ^= m_s[2];
        m_s[0] ^= m_s[3];
        m_s[2] ^= t;
        m_s[3] = rotl(m_s[3], 45);
        return result;
    }
    // Uniform in [0, 1) with 24 random bits: exactly representable as float.
    float unit() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }
    float uniform(float lo, float hi) { return lo + (hi - lo) * unit(); }
    // Uniform integer in [lo, hi].
    long long between(long long lo, long long hi) {
        return hi <= lo ? lo : lo + static_cast<long long>(next() % static_cast<std::uint64_t>(hi - lo + 1));
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t m_s[4];
};

inline Buffer uniform(long long n, Rng& rng, float lo = -1.0f, float hi = 1.0f) {
    Buffer b(static_cast<std::size_t>(n));
    for (auto& x : b)
        x = rng.uniform(lo, hi);
    return b;
}

// ---------------------------------------------------------------------------------------------
// Shapes: "M=512,N=512,K=512;M=383,N=257,K=311". A flat list: a lookup inside a timed call costs
// a few string compares, not a map walk.

inline std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos)
        return {};
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

inline std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep))
        if (!trim(cur).empty())
            parts.push_back(trim(cur));
    return parts;
}

class Shape {
public:
    long long operator[](const std::string& key) const {
        for (const auto& kv : m_values)
            if (kv.first == key)
                return kv.second;
        throw std::runtime_error("shape " + text() + " has no key " + key);
    }
    // For kernel arguments of type int.
    int i(const std::string& key) const {
        const long long v = (*this)[key];
        if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
            throw std::runtime_error("shape value " + key + " does not fit in int");
        return static_cast<int>(v);
    }
    bool has(const std::string& key) const {
        for (const auto& kv : m_values)
            if (kv.first == key)
                return true;
        return false;
    }
    void set(const std::string& key, long long v) {
        for (auto& kv : m_values)
            if (kv.first == key) {
                kv.second = v;
                return;
            }
        m_values.emplace_back(key, v);
    }
    std::string text() const {
        std::string out;
        for (const auto& kv : m_values)
            out += (out.empty() ? "" : ",") + kv.first + "=" + std::to_string(kv.second);
        return out;
    }
    const std::vector<std::pair<std::string, long long>>& values() const { return m_values; }

private:
    std::vector<std::pair<std::string, long long>> m_values;
};

inline Shape parse_shape(const std::string& item) {
    Shape shape;
    for (const auto& kv : split(item, ',')) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos)
            throw std::runtime_error("bad shape entry '" + kv + "' (expected KEY=VALUE)");
        char* end = nullptr;
        const std::string value = trim(kv.substr(eq + 1));
        const long long v = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || v < 0)
            throw std::runtime_error("bad shape value '" + kv + "'");
        shape.set(trim(kv.substr(0, eq)), v);
    }
    return shape;
}

inline std::vector<Shape> parse_shapes(const std::string& text) {
    std::vector<Shape> shapes;
    for (const auto& item : split(text, ';'))
        shapes.push_back(parse_shape(item));
    if (shapes.empty())
        throw std::runtime_error("no shapes given");
    return shapes;
}

// ---------------------------------------------------------------------------------------------
// What a problem supplies.

struct Problem {
    std::string name;                                                          // kernel name, for messages
    std::string dtype = "fp32";                                                // for feedback text
    std::vector<std::string> keys;                                             // shape keys that must be present
    std::function<Buffers(const Shape&, Rng&)> make_inputs;                    // fresh inputs (throws for an invalid shape)
    std::function<std::vector<Dims>(const Shape&)> outputs;                    // dims of each output buffer
    std::function<void(const Shape&, const Spans& in, const Spans& out)> call; // call the kernel once
    std::function<double(const Shape&)> flops;                                 // useful floating-point ops
    std::function<double(const Shape&)> bytes;                                 // compulsory memory traffic
};

// Entry points declared by harness.cpp with AUTOCOMP_ENTRY: their names (the gate allows exactly
// these as the candidate's defined globals, callgrind counts from them) and, in the worker, the
// function-pointer slot that the symbol looked up in the candidate's shared object goes into.
struct Entry {
    const char* name;
    void* slot;  // address of the function pointer (worker), nullptr in the judge
};

inline std::vector<Entry>& entries() {
    static std::vector<Entry> s_entries;
    return s_entries;
}

inline int register_entry(const char* name, void* slot) {
    entries().push_back({name, slot});
    return 0;
}

} // namespace autocomp

#ifdef AUTOCOMP_WORKER
// The worker calls the candidate through a pointer filled from its shared object after the
// seccomp filter is in place.
#define AUTOCOMP_ENTRY(ret, name, params)                                                                     \
    static ret(*name) params = nullptr;                                                                      \
    static const int autocomp_entry_##name = ::autocomp::register_entry(#name, reinterpret_cast<void*>(&name));
#include "autocomp_worker.h"
#else
// The judge links the trusted reference, which defines the entry points.
#define AUTOCOMP_ENTRY(ret, name, params)                                                                     \
    extern "C" ret name params;                                                                               \
    static const int autocomp_entry_##name = ::autocomp::register_entry(#name, nullptr);
#ifdef AUTOCOMP_JUDGE_IMPLEMENTATION
// The judge's problem-independent part (tools/judge_core.cpp), compiled once per machine.
#include "autocomp_judge.h"
#else
namespace autocomp {
int harness_main(int argc, char** argv, const Problem& p);
}
#endif
#endif

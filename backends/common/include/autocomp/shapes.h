// autocomp/shapes.h — buffers, the deterministic RNG and shapes, shared by every C/C++ judge (C++17).
//
// Part of the judge kit in backends/common/include (see backends/README.md, "Writing a target with
// the kit"). What is here is used by both sides of an evaluation: the judge draws inputs and shapes
// from its secret seed with Rng and derive_seed; a worker parses the shape the judge sent. Nothing
// here reads a file or a process: shapes come from the judge's command line, ranges from backend.yaml.
//
// Contract: the same seed, stream and index give the same inputs on every machine (splitmix64 seeding
// xoshiro256**); parse_shape rejects anything that is not KEY=non-negative integer; random_shapes
// returns only shapes the problem accepts (its make_inputs and outputs do not throw for them).
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

namespace kit {

// The shapes given on the command line ("M=512,N=512;M=64,N=32"), each checked to have every key the
// problem needs (P: any problem type with `keys`).
template <typename P>
std::vector<Shape> shapes_for(const P& p, const std::string& text) {
    auto shapes = parse_shapes(text);
    for (const auto& s : shapes)
        for (const auto& k : p.keys)
            if (!s.has(k))
                throw std::runtime_error("shape " + s.text() + " lacks key " + k);
    return shapes;
}

// Up to `count` shapes drawn from (seed, stream) within the declared ranges ("M=1:600,N=1:600"), each
// one a shape the problem accepts (make_inputs and outputs do not throw for it, e.g. a filter larger
// than the image is skipped). At most 200 draws: fewer shapes come back when most draws are refused.
template <typename P>
std::vector<Shape> random_shapes(const P& p, const std::string& ranges, int count, std::uint64_t seed, std::uint64_t stream) {
    std::vector<Shape> out;
    if (ranges.empty() || count <= 0)
        return out;
    std::vector<std::pair<std::string, std::pair<long long, long long>>> r;
    for (const auto& item : split(ranges, ',')) {
        const auto eq = item.find('='), colon = item.find(':');
        if (eq == std::string::npos || colon == std::string::npos || colon < eq)
            throw std::runtime_error("bad shape range '" + item + "' (expected KEY=LO:HI)");
        const long long lo = std::atoll(item.c_str() + eq + 1), hi = std::atoll(item.c_str() + colon + 1);
        if (lo < 0 || hi < lo)
            throw std::runtime_error("bad shape range '" + item + "'");
        r.push_back({trim(item.substr(0, eq)), {lo, hi}});
    }
    Rng rng(derive_seed(seed, stream, 0));
    for (int attempt = 0; attempt < 200 && static_cast<int>(out.size()) < count; ++attempt) {
        Shape s;
        for (const auto& kv : r)
            s.set(kv.first, rng.between(kv.second.first, kv.second.second));
        try {
            for (const auto& k : p.keys)
                if (!s.has(k))
                    throw std::runtime_error("no range for " + k);
            Rng probe(1);
            p.make_inputs(s, probe);
            p.outputs(s);
            out.push_back(s);
        } catch (const std::exception&) {
        }
    }
    return out;
}

} // namespace kit
} // namespace autocomp

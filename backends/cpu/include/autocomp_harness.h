// autocomp_harness.h — problem-independent evaluation harness of the CPU target (C++17, header-only).
//
// A problem's harness.cpp describes its kernel with an autocomp::Problem and hands it to
// autocomp::harness_main(). The same harness.cpp is linked once with the candidate and once with the
// trusted reference, giving two programs that play the four steps of backends/cpu/backend.yaml:
//
//   candidate run    --seed S --shapes SH --out outputs.bin       call the kernel, save its outputs
//   reference check  --seed S --shapes SH --tolerance T --outputs outputs.bin --report check.json
//   candidate bench  --seed S --shapes SH --out timings.json      time the kernel on one shape
//   reference report --check check.json --timings timings.json --shapes SH --result result.json
//
// Exit status: 0 passed, 1 the candidate failed (reason on stderr), 2 usage or harness error.
// Inputs are regenerated from the seed in each process, so the reference never sees memory the
// candidate touched. Defenses: NaN-poisoned outputs, inputs compared with a clone after every call,
// two input sets per shape called in a seed-shuffled order (replayed outputs are named as such),
// threads counted before and after every call, fresh inputs for every timed repetition, one timed
// repetition chosen at random re-checked against the reference by the report step, a seccomp filter
// against process creation (autocomp_guard.h), a static check of the source (`lint` mode,
// autocomp_lint.h) and a roofline bound on the reported throughput.
//
//   reference lint   --source candidate.cpp --reference R --allow-libraries 0|1 --result result.json
//   candidate profile --seed S --shapes SH                 one call at the smallest shape, for callgrind
//
// A failing check or lint step writes result.json itself (status "incorrect" or "rejected", with the
// reason in "flags") and exits 1.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "autocomp_guard.h"
#include "autocomp_lint.h"
#include "autocomp_probe.h"

#if defined(__linux__)
#include <sched.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <csignal>
#include <unistd.h>
#define AUTOCOMP_HAVE_SIGNALS 1
#endif

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

// ---------------------------------------------------------------------------------------------
// Deterministic RNG: splitmix64 to seed xoshiro256**.

inline std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Seed of one input set: distinct streams for (shape, trial) and for benchmark repetitions.
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
// Shapes: "M=512,N=512,K=512;M=383,N=257,K=311".

class Shape {
public:
    long long operator[](const std::string& key) const {
        const auto it = m_values.find(key);
        if (it == m_values.end())
            throw std::runtime_error("shape " + text() + " has no key " + key);
        return it->second;
    }
    // For kernel arguments of type int.
    int i(const std::string& key) const {
        const long long v = (*this)[key];
        if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
            throw std::runtime_error("shape value " + key + " does not fit in int");
        return static_cast<int>(v);
    }
    bool has(const std::string& key) const { return m_values.count(key) != 0; }
    void set(const std::string& key, long long v) {
        if (m_values.count(key) == 0)
            m_order.push_back(key);
        m_values[key] = v;
    }
    std::string text() const {
        std::string out;
        for (const auto& k : m_order)
            out += (out.empty() ? "" : ",") + k + "=" + std::to_string(m_values.at(k));
        return out;
    }

private:
    std::map<std::string, long long> m_values;
    std::vector<std::string> m_order;
};

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

inline std::vector<Shape> parse_shapes(const std::string& text) {
    std::vector<Shape> shapes;
    for (const auto& item : split(text, ';')) {
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
        shapes.push_back(shape);
    }
    if (shapes.empty())
        throw std::runtime_error("no shapes given");
    return shapes;
}

struct Tolerance {
    double rtol = 1e-4;
    double atol = 1e-5;
};

inline Tolerance parse_tolerance(const std::string& text) {
    Tolerance t;
    for (const auto& kv : split(text, ',')) {
        const auto eq = kv.find('=');
        const std::string key = eq == std::string::npos ? kv : trim(kv.substr(0, eq));
        const double v = eq == std::string::npos ? -1.0 : std::strtod(kv.c_str() + eq + 1, nullptr);
        if (key == "rtol" && v >= 0)
            t.rtol = v;
        else if (key == "atol" && v >= 0)
            t.atol = v;
        else
            throw std::runtime_error("bad tolerance entry '" + kv + "' (expected rtol=X,atol=Y)");
    }
    return t;
}

// ---------------------------------------------------------------------------------------------
// What a problem supplies.

struct Problem {
    std::string name;                                                         // kernel name, for messages
    std::string dtype = "fp32";                                               // for feedback text
    std::vector<std::string> keys;                                            // shape keys that must be present
    std::function<Buffers(const Shape&, Rng&)> make_inputs;                   // fresh inputs from the rng
    std::function<std::vector<Dims>(const Shape&)> outputs;                   // dims of each output buffer
    std::function<void(const Shape&, const Buffers& in, Buffers& out)> call;  // call the kernel once
    std::function<double(const Shape&)> flops;                                // useful floating-point ops
    std::function<double(const Shape&)> bytes;                                // compulsory memory traffic
};

constexpr int kTrials = 2;                 // input sets per shape in run/check
constexpr std::uint64_t kStreamCheck = 1;  // seed stream of run/check inputs
constexpr std::uint64_t kStreamBench = 2;  // seed stream of bench inputs
constexpr std::uint64_t kStreamPick = 3;   // seed stream choosing the re-checked repetition

// ---------------------------------------------------------------------------------------------
// Tiny JSON writer and a reader for the flat files this harness writes itself.

inline std::string json_escape(const std::string& s) {
    std::string out;
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += ch;
            }
        }
    }
    return out;
}

inline std::string jstr(const std::string& s) { return "\"" + json_escape(s) + "\""; }

inline std::string jnum(double v) {
    if (!std::isfinite(v))
        return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

inline std::string jlist(const std::vector<std::string>& items) {
    std::string out = "[";
    for (std::size_t i = 0; i < items.size(); ++i)
        out += (i ? ", " : "") + jstr(items[i]);
    return out + "]";
}

inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline void write_text(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out)
        throw std::runtime_error("cannot write " + path);
}

// Position just after `"key":` (first occurrence), or npos.
inline std::size_t json_find(const std::string& json, const std::string& key) {
    const std::string quoted = "\"" + key + "\"";
    for (std::size_t pos = json.find(quoted); pos != std::string::npos; pos = json.find(quoted, pos + 1)) {
        std::size_t p = json.find_first_not_of(" \t\r\n", pos + quoted.size());
        if (p != std::string::npos && json[p] == ':')
            return json.find_first_not_of(" \t\r\n", p + 1);
    }
    return std::string::npos;
}

inline double json_number(const std::string& json, const std::string& key) {
    const auto p = json_find(json, key);
    if (p == std::string::npos)
        throw std::runtime_error("missing key " + key);
    if (json.compare(p, 4, "null") == 0)
        return std::numeric_limits<double>::quiet_NaN();
    return std::strtod(json.c_str() + p, nullptr);
}

inline bool json_bool(const std::string& json, const std::string& key) {
    const auto p = json_find(json, key);
    if (p == std::string::npos)
        throw std::runtime_error("missing key " + key);
    return json.compare(p, 4, "true") == 0;
}

// Strings written by this harness never contain escaped quotes in the keys read back.
inline std::string json_string(const std::string& json, const std::string& key) {
    const auto p = json_find(json, key);
    if (p == std::string::npos || json[p] != '"')
        throw std::runtime_error("missing string key " + key);
    const auto e = json.find('"', p + 1);
    return json.substr(p + 1, e - p - 1);
}

// ---------------------------------------------------------------------------------------------
// Binary outputs file: magic, record count, then per record its shape index, trial, the
// inputs-modified flag with the first changed input element, and each output buffer.

constexpr char kMagic[8] = {'A', 'C', 'O', 'U', 'T', '0', '0', '2'};

struct Record {
    std::uint64_t shape = 0;
    std::uint64_t trial = 0;
    std::int64_t modified_input = -1;  // index of the first modified input buffer, -1 if none
    std::int64_t modified_elem = -1;
    std::int64_t extra_tasks = 0;      // threads alive after the call that were not before it
    std::uint64_t call_index = 0;      // position in the shuffled call order
    Buffers outputs;
};

inline void write_records(const std::string& path, const std::vector<Record>& records) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    auto u64 = [&](std::uint64_t v) { out.write(reinterpret_cast<const char*>(&v), sizeof v); };
    out.write(kMagic, sizeof kMagic);
    u64(records.size());
    for (const auto& r : records) {
        u64(r.shape);
        u64(r.trial);
        u64(static_cast<std::uint64_t>(r.modified_input));
        u64(static_cast<std::uint64_t>(r.modified_elem));
        u64(static_cast<std::uint64_t>(r.extra_tasks));
        u64(r.call_index);
        u64(r.outputs.size());
        for (const auto& b : r.outputs) {
            u64(b.size());
            out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size() * sizeof(float)));
        }
    }
    if (!out)
        throw std::runtime_error("cannot write " + path);
}

inline std::vector<Record> read_records(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read outputs file " + path);
    auto u64 = [&]() {
        std::uint64_t v = 0;
        in.read(reinterpret_cast<char*>(&v), sizeof v);
        if (!in)
            throw std::runtime_error("outputs file " + path + " is truncated");
        return v;
    };
    char magic[sizeof kMagic];
    in.read(magic, sizeof magic);
    if (!in || std::memcmp(magic, kMagic, sizeof kMagic) != 0)
        throw std::runtime_error("outputs file " + path + " has a wrong header");
    const std::uint64_t count = u64();
    if (count > 1000000)
        throw std::runtime_error("outputs file " + path + " is corrupt");
    std::vector<Record> records(count);
    for (auto& r : records) {
        r.shape = u64();
        r.trial = u64();
        r.modified_input = static_cast<std::int64_t>(u64());
        r.modified_elem = static_cast<std::int64_t>(u64());
        r.extra_tasks = static_cast<std::int64_t>(u64());
        r.call_index = u64();
        const std::uint64_t nout = u64();
        if (nout > 64)
            throw std::runtime_error("outputs file " + path + " is corrupt");
        r.outputs.resize(nout);
        for (auto& b : r.outputs) {
            const std::uint64_t n = u64();
            if (n > (1ull << 34))
                throw std::runtime_error("outputs file " + path + " is corrupt");
            b.resize(n);
            in.read(reinterpret_cast<char*>(b.data()), static_cast<std::streamsize>(n * sizeof(float)));
            if (!in)
                throw std::runtime_error("outputs file " + path + " is truncated");
        }
    }
    return records;
}

// ---------------------------------------------------------------------------------------------
// Crash context: a fatal signal during the kernel names the shape being run.

namespace detail {
inline char g_context[512] = "";

#ifdef AUTOCOMP_HAVE_SIGNALS
inline void on_fatal_signal(int sig) {
    const char* name = sig == SIGSEGV ? "SIGSEGV (invalid memory access)"
                     : sig == SIGBUS  ? "SIGBUS (misaligned or invalid access)"
                     : sig == SIGFPE  ? "SIGFPE (arithmetic fault)"
                     : sig == SIGILL  ? "SIGILL (illegal instruction)"
                                      : "SIGABRT (abort)";
    const char prefix[] = "autocomp harness: crashed with ";
    ssize_t ignored = write(2, prefix, sizeof prefix - 1);
    ignored = write(2, name, std::strlen(name));
    ignored = write(2, " ", 1);
    ignored = write(2, g_context, std::strlen(g_context));
    ignored = write(2, "\n", 1);
    (void)ignored;
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}
#endif

inline void install_crash_handlers() {
#ifdef AUTOCOMP_HAVE_SIGNALS
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
        std::signal(sig, on_fatal_signal);
#endif
}

inline void set_context(const std::string& text) {
    std::snprintf(g_context, sizeof g_context, "%s", text.c_str());
}
} // namespace detail

// ---------------------------------------------------------------------------------------------
// Calling the kernel with poisoned outputs and cloned inputs.

inline Buffers make_outputs(const Problem& p, const Shape& shape) {
    Buffers out;
    for (const auto& dims : p.outputs(shape)) {
        long long n = 1;
        for (const long long d : dims)
            n *= d;
        out.emplace_back(static_cast<std::size_t>(n));
    }
    return out;
}

inline void poison(Buffers& out) {
    for (auto& b : out)
        std::fill(b.begin(), b.end(), std::numeric_limits<float>::quiet_NaN());
}

struct CallResult {
    std::int64_t modified_input = -1;
    std::int64_t modified_elem = -1;
    std::int64_t extra_tasks = 0;
};

inline CallResult checked_call(const Problem& p, const Shape& shape, const Buffers& in, Buffers& out) {
    const Buffers clone = in;
    poison(out);
    const int tasks_before = guard::task_count();
    p.call(shape, in, out);
    const int tasks_after = guard::task_count();
    CallResult r;
    if (tasks_before > 0 && tasks_after > tasks_before)
        r.extra_tasks = tasks_after - tasks_before;
    for (std::size_t b = 0; b < in.size() && r.modified_input < 0; ++b) {
        if (std::memcmp(in[b].data(), clone[b].data(), in[b].size() * sizeof(float)) == 0)
            continue;
        for (std::size_t i = 0; i < in[b].size(); ++i) {
            if (std::memcmp(&in[b][i], &clone[b][i], sizeof(float)) != 0) {
                r.modified_input = static_cast<std::int64_t>(b);
                r.modified_elem = static_cast<std::int64_t>(i);
                break;
            }
        }
    }
    return r;
}

inline std::string index_text(const Dims& dims, std::size_t flat) {
    if (dims.size() < 2)
        return "[" + std::to_string(flat) + "]";
    std::vector<long long> idx(dims.size());
    auto rest = static_cast<long long>(flat);
    for (std::size_t d = dims.size(); d-- > 0;) {
        idx[d] = dims[d] > 0 ? rest % dims[d] : 0;
        rest = dims[d] > 0 ? rest / dims[d] : 0;
    }
    std::string out = "[";
    for (std::size_t d = 0; d < idx.size(); ++d)
        out += (d ? "," : "") + std::to_string(idx[d]);
    return out + "]";
}

// ---------------------------------------------------------------------------------------------
// Tolerance comparison: |x - ref| <= atol + rtol * |ref|; NaN or Inf in the candidate fails.

struct Comparison {
    std::size_t checked = 0;
    std::size_t bad = 0;
    std::size_t nonfinite = 0;
    double max_abs = 0.0;  // over finite elements
    double max_rel = 0.0;
    double worst_ratio = 0.0;  // error / allowed, infinite for NaN/Inf
    std::size_t worst_index = 0;
    float worst_value = 0.0f;
    float worst_ref = 0.0f;
    std::string examples;  // first few mismatches
};

inline Comparison compare(const Buffer& got, const Buffer& ref, const Tolerance& tol, const Dims& dims) {
    Comparison c;
    c.checked = ref.size();
    int shown = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double r = ref[i];
        const double x = got[i];
        double ratio;
        if (!std::isfinite(x)) {
            ++c.nonfinite;
            ratio = std::numeric_limits<double>::infinity();
        } else {
            const double err = std::fabs(x - r);
            c.max_abs = std::max(c.max_abs, err);
            if (r != 0.0)
                c.max_rel = std::max(c.max_rel, err / std::fabs(r));
            ratio = err / (tol.atol + tol.rtol * std::fabs(r));
        }
        if (ratio > 1.0) {
            ++c.bad;
            if (shown < 5) {
                char buf[160];
                std::snprintf(buf, sizeof buf, "\n    at %s: got %.9g, expected %.9g", index_text(dims, i).c_str(), x,
                              r);
                c.examples += buf;
                ++shown;
            }
        }
        if (ratio > c.worst_ratio) {
            c.worst_ratio = ratio;
            c.worst_index = i;
            c.worst_value = got[i];
            c.worst_ref = ref[i];
        }
    }
    return c;
}

inline std::string describe_failure(const Problem& p, const Shape& shape, int trial, std::size_t output,
                                    const Comparison& c, const Tolerance& tol, const Dims& dims) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "MISMATCH in %s at shape %s (input set %d, output %zu): %zu of %zu elements outside "
                  "|x-ref| <= atol + rtol*|ref| (rtol=%g, atol=%g)",
                  p.name.c_str(), shape.text().c_str(), trial, output, c.bad, c.checked, tol.rtol, tol.atol);
    std::string msg = buf;
    if (c.nonfinite > 0) {
        msg += "\n  " + std::to_string(c.nonfinite) +
               " elements are NaN or Inf; outputs are filled with NaN before each call, so these elements were "
               "probably never written";
    }
    std::snprintf(buf, sizeof buf, "\n  worst element %s: got %.9g, expected %.9g (abs error %.3g)",
                  index_text(dims, c.worst_index).c_str(), static_cast<double>(c.worst_value),
                  static_cast<double>(c.worst_ref),
                  std::fabs(static_cast<double>(c.worst_value) - static_cast<double>(c.worst_ref)));
    msg += buf;
    msg += "\n  first mismatches:" + c.examples;
    return msg;
}

// ---------------------------------------------------------------------------------------------
// Benchmark helpers.

struct Stats {
    double median = 0, mean = 0, p99 = 0, min = 0, stddev = 0;
    std::size_t n = 0;
};

inline Stats stats(std::vector<double> v) {
    Stats s;
    s.n = v.size();
    if (v.empty())
        return s;
    std::sort(v.begin(), v.end());
    s.min = v.front();
    s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    const std::size_t rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size())));
    s.p99 = v[std::min(v.size() - 1, rank > 0 ? rank - 1 : 0)];
    double sum = 0;
    for (double x : v)
        sum += x;
    s.mean = sum / static_cast<double>(v.size());
    double sq = 0;
    for (double x : v)
        sq += (x - s.mean) * (x - s.mean);
    s.stddev = v.size() > 1 ? std::sqrt(sq / static_cast<double>(v.size() - 1)) : 0.0;
    return s;
}

// Pins the process to the CPU it runs on; returns that CPU or -1. AUTOCOMP_NO_PIN=1 disables.
inline int pin_to_one_cpu() {
#if defined(__linux__)
    const char* off = std::getenv("AUTOCOMP_NO_PIN");
    if (off && std::string(off) == "1")
        return -1;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return -1;
    int cpu = sched_getcpu();
    if (cpu < 0 || !CPU_ISSET(cpu, &allowed)) {
        cpu = -1;
        for (int c = 0; c < CPU_SETSIZE && cpu < 0; ++c)
            if (CPU_ISSET(c, &allowed))
                cpu = c;
    }
    if (cpu < 0)
        return -1;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one) == 0 ? cpu : -1;
#else
    return -1;
#endif
}

inline bool all_finite(const Buffers& out) {
    for (const auto& b : out)
        for (const float x : b)
            if (!std::isfinite(x))
                return false;
    return true;
}

// ---------------------------------------------------------------------------------------------
// Modes.

struct Args {
    std::string mode;
    std::map<std::string, std::string> opts;
    std::string need(const std::string& key) const {
        const auto it = opts.find(key);
        if (it == opts.end())
            throw std::runtime_error("missing option --" + key);
        return it->second;
    }
};

inline std::uint64_t parse_seed(const std::string& text) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0')
        throw std::runtime_error("bad --seed '" + text + "'");
    return v;
}

inline std::vector<Shape> shapes_for(const Problem& p, const std::string& text) {
    auto shapes = parse_shapes(text);
    for (const auto& s : shapes)
        for (const auto& k : p.keys)
            if (!s.has(k))
                throw std::runtime_error("shape " + s.text() + " lacks key " + k);
    return shapes;
}

inline std::string trial_context(const Problem& p, const Shape& s, int trial) {
    return "while running " + p.name + " at shape " + s.text() + " (input set " + std::to_string(trial) + ")";
}

// Seccomp guard for the modes that run candidate code, unless `--guard 0` (valgrind emulates
// system calls and cannot run under a filter).
inline void install_guard(const Args& a) {
    const auto it = a.opts.find("guard");
    if (it == a.opts.end() || it->second != "0")
        guard::forbid_processes();
}

inline int mode_run(const Problem& p, const Args& a) {
    const std::uint64_t seed = parse_seed(a.need("seed"));
    const auto shapes = shapes_for(p, a.need("shapes"));
    install_guard(a);
    // Every (shape, input set) pair once, in an order drawn from the seed: a kernel that caches or
    // replays results cannot know which call comes first, and the check names replayed outputs.
    std::vector<std::pair<std::size_t, int>> order;
    for (std::size_t s = 0; s < shapes.size(); ++s)
        for (int t = 0; t < kTrials; ++t)
            order.emplace_back(s, t);
    Rng shuffle(derive_seed(seed, kStreamPick, 1));
    for (std::size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[shuffle.next() % i]);
    std::vector<Record> records;
    for (std::size_t call = 0; call < order.size(); ++call) {
        const std::size_t s = order[call].first;
        const int t = order[call].second;
        Rng rng(derive_seed(seed, kStreamCheck, s * kTrials + static_cast<std::size_t>(t)));
        const Buffers in = p.make_inputs(shapes[s], rng);
        Record r;
        r.shape = s;
        r.trial = static_cast<std::uint64_t>(t);
        r.call_index = call;
        r.outputs = make_outputs(p, shapes[s]);
        detail::set_context(trial_context(p, shapes[s], t));
        const CallResult c = checked_call(p, shapes[s], in, r.outputs);
        r.modified_input = c.modified_input;
        r.modified_elem = c.modified_elem;
        r.extra_tasks = c.extra_tasks;
        records.push_back(std::move(r));
        if (c.extra_tasks > 0) {
            // Work still running may touch buffers freed after this call: save what the check needs
            // now, while the inputs are alive, and leave without running destructors.
            write_records(a.need("out"), records);
            std::fflush(nullptr);
            std::_Exit(0);
        }
    }
    write_records(a.need("out"), records);
    return 0;
}

// result.json for a failure found before the report step; the engine takes its status.
inline void write_failure_result(const std::string& path, const std::string& status,
                                 const std::vector<std::string>& flags, const std::vector<std::string>& feedback,
                                 const std::string& log) {
    std::string json = "{\n  \"status\": " + jstr(status) + ",\n  \"correct\": false,\n  \"metrics\": {}";
    json += ",\n  \"feedback\": " + jlist(feedback) + ",\n  \"flags\": " + jlist(flags);
    json += ",\n  \"log\": " + jstr(log) + "\n}\n";
    write_text(path, json);
}

inline int mode_lint(const Args& a) {
    lint::Options opt;
    opt.reference_path = a.opts.count("reference") ? a.opts.at("reference") : std::string();
    opt.allow_libraries = a.opts.count("allow-libraries") && a.opts.at("allow-libraries") == "1";
    const std::string source = a.need("source");
    const auto findings = lint::check(read_text(source), opt);
    if (findings.empty())
        return 0;
    std::vector<std::string> flags, feedback;
    std::string log = "static check rejected the candidate:";
    for (const auto& f : findings) {
        const std::string flag = std::string("static check: ") + f.flag;
        if (std::find(flags.begin(), flags.end(), flag) == flags.end())
            flags.push_back(flag);
        const std::string line = "line " + std::to_string(f.line) + ": " + f.message;
        if (feedback.size() < 8)
            feedback.push_back(line);
        log += "\n  " + line;
    }
    std::fprintf(stderr, "%s\n", log.c_str());
    if (a.opts.count("result"))
        write_failure_result(a.opts.at("result"), "rejected", flags, feedback, log);
    return 1;
}

// One call at the smallest shape, for an instruction count under callgrind --toggle-collect.
namespace detail {
__attribute__((noinline)) inline void autocomp_profiled_call(const Problem& p, const Shape& s, const Buffers& in,
                                                             Buffers& out) {
    p.call(s, in, out);
    __asm__ volatile("" ::: "memory");
}
}  // namespace detail

inline int mode_profile(const Problem& p, const Args& a) {
    const std::uint64_t seed = parse_seed(a.need("seed"));
    auto shapes = shapes_for(p, a.need("shapes"));
    const auto smallest = std::min_element(shapes.begin(), shapes.end(), [&](const Shape& x, const Shape& y) {
        return (p.flops ? p.flops(x) : 0.0) + (p.bytes ? p.bytes(x) : 0.0) <
               (p.flops ? p.flops(y) : 0.0) + (p.bytes ? p.bytes(y) : 0.0);
    });
    Rng rng(derive_seed(seed, kStreamCheck, 0));
    const Buffers in = p.make_inputs(*smallest, rng);
    Buffers out = make_outputs(p, *smallest);
    poison(out);
    detail::set_context("while profiling " + p.name + " at shape " + smallest->text());
    detail::autocomp_profiled_call(p, *smallest, in, out);
    std::printf("profiled shape %s\n", smallest->text().c_str());
    return all_finite(out) ? 0 : 1;
}

inline int mode_check(const Problem& p, const Args& a) {
    const std::uint64_t seed = parse_seed(a.need("seed"));
    const auto shapes = shapes_for(p, a.need("shapes"));
    const Tolerance tol = parse_tolerance(a.need("tolerance"));
    const std::string report = a.need("report");
    std::vector<Record> got;
    std::string failure;
    std::string status = "incorrect";
    std::vector<std::string> flags;
    try {
        got = read_records(a.need("outputs"));
    } catch (const std::exception& e) {
        failure = e.what();
        flags.push_back("outputs file missing or malformed");
    }
    // The reference's results for every input set first, so a wrong output can be compared with
    // the right answers of the other calls (a replayed result matches one of them).
    std::vector<std::vector<Buffers>> refs(shapes.size());
    for (std::size_t s = 0; s < shapes.size() && failure.empty(); ++s) {
        for (int t = 0; t < kTrials; ++t) {
            Rng rng(derive_seed(seed, kStreamCheck, s * kTrials + static_cast<std::size_t>(t)));
            const Buffers in = p.make_inputs(shapes[s], rng);
            Buffers ref = make_outputs(p, shapes[s]);
            detail::set_context("in the reference " + trial_context(p, shapes[s], t));
            const CallResult rc = checked_call(p, shapes[s], in, ref);
            if (rc.modified_input >= 0 || !all_finite(ref)) {
                std::fprintf(stderr, "harness error: the reference misbehaved at shape %s\n", shapes[s].text().c_str());
                return 2;
            }
            refs[s].push_back(std::move(ref));
        }
    }
    double max_abs = 0, max_rel = 0, worst_ratio = 0;
    std::size_t checked = 0;
    std::vector<std::string> bad_shapes, good_shapes, unwritten_shapes;
    for (const Record& r : got) {
        if (r.extra_tasks > 0 && failure.empty() && r.shape < shapes.size()) {
            failure = "WORK LEFT RUNNING: " + std::to_string(r.extra_tasks) + " more thread(s) were alive after " +
                      p.name + " returned at shape " + shapes[r.shape].text() + " than before the call; a kernel "
                      "must finish all its work (join its threads) before it returns";
            status = "rejected";
            flags.push_back("work left running after return (threads alive after the call)");
        }
    }
    for (std::size_t s = 0; s < shapes.size() && failure.empty(); ++s) {
        const auto dims = p.outputs(shapes[s]);
        bool shape_ok = true, shape_unwritten = false;
        for (int t = 0; t < kTrials && failure.empty(); ++t) {
            const auto it = std::find_if(got.begin(), got.end(), [&](const Record& r) {
                return r.shape == s && r.trial == static_cast<std::uint64_t>(t);
            });
            if (it == got.end()) {
                failure = "outputs file has no result for shape " + shapes[s].text();
                flags.push_back("outputs file missing or malformed");
                break;
            }
            if (it->extra_tasks > 0) {
                failure = "WORK LEFT RUNNING: " + std::to_string(it->extra_tasks) + " more thread(s) were alive after " +
                          p.name + " returned at shape " + shapes[s].text() + " than before the call; a kernel must "
                          "finish all its work (join its threads) before it returns";
                status = "rejected";
                flags.push_back("work left running after return (threads alive after the call)");
                break;
            }
            if (it->modified_input >= 0) {
                failure = "INPUTS MODIFIED: " + p.name + " wrote to input " + std::to_string(it->modified_input) +
                          " (first changed element " + std::to_string(it->modified_elem) + ") at shape " +
                          shapes[s].text() + "; inputs are read-only";
                status = "rejected";
                flags.push_back("inputs modified by the kernel");
                break;
            }
            const Buffers& ref = refs[s][static_cast<std::size_t>(t)];
            if (it->outputs.size() != ref.size()) {
                failure = "outputs file has the wrong number of outputs for shape " + shapes[s].text();
                flags.push_back("outputs file missing or malformed");
                break;
            }
            for (std::size_t o = 0; o < ref.size() && failure.empty(); ++o) {
                if (it->outputs[o].size() != ref[o].size()) {
                    failure = "output " + std::to_string(o) + " has the wrong size at shape " + shapes[s].text();
                    flags.push_back("outputs file missing or malformed");
                    break;
                }
                const Comparison c = compare(it->outputs[o], ref[o], tol, dims[o]);
                checked += c.checked;
                max_abs = std::max(max_abs, c.max_abs);
                max_rel = std::max(max_rel, c.max_rel);
                worst_ratio = std::max(worst_ratio, c.worst_ratio);
                if (c.bad == 0)
                    continue;
                shape_ok = false;
                shape_unwritten = shape_unwritten || c.nonfinite == c.checked;
                // Does the wrong output equal the right answer of another call at this shape?
                for (int u = 0; u < kTrials; ++u) {
                    if (u == t || compare(it->outputs[o], refs[s][static_cast<std::size_t>(u)][o], tol, dims[o]).bad != 0)
                        continue;
                    failure = "REPLAYED OUTPUT: at shape " + shapes[s].text() + " the output for input set " +
                              std::to_string(t) + " equals the correct result for input set " + std::to_string(u) +
                              ", i.e. the result of another call; results may not be cached or replayed across "
                              "calls (every call gets new inputs)";
                    status = "rejected";
                    flags.push_back("outputs cached or replayed across calls");
                    break;
                }
                if (failure.empty())
                    failure = describe_failure(p, shapes[s], t, o, c, tol, dims[o]);
            }
        }
        (shape_ok ? good_shapes : bad_shapes).push_back(shapes[s].text());
        if (shape_unwritten)
            unwritten_shapes.push_back(shapes[s].text());
    }
    // Later shapes were not looked at after the first failure: count them as unknown, not good.
    if (!failure.empty() && status == "incorrect" && flags.empty()) {
        if (!unwritten_shapes.empty())
            flags.push_back("output never written at shape " + unwritten_shapes.front() +
                            (good_shapes.empty() ? std::string() : " (other shapes correct: special-cased shape?)"));
        else if (!good_shapes.empty())
            flags.push_back("wrong result at shape " + bad_shapes.front() + " only (other shapes correct)");
        else
            flags.push_back("wrong result (outside tolerance)");
    }
    const bool ok = failure.empty();
    std::string json = "{\n  \"ok\": " + std::string(ok ? "true" : "false");
    json += ",\n  \"rtol\": " + jnum(tol.rtol) + ",\n  \"atol\": " + jnum(tol.atol);
    json += ",\n  \"shapes\": " + std::to_string(shapes.size()) + ",\n  \"input_sets\": " + std::to_string(kTrials);
    json += ",\n  \"elements_checked\": " + std::to_string(checked);
    json += ",\n  \"max_abs_err\": " + jnum(max_abs) + ",\n  \"max_rel_err\": " + jnum(max_rel);
    json += ",\n  \"worst_err_over_allowed\": " + jnum(worst_ratio);
    json += ",\n  \"message\": " + jstr(failure) + "\n}\n";
    write_text(report, json);
    if (!ok) {
        std::fprintf(stderr, "%s\n", failure.c_str());
        if (a.opts.count("result"))
            write_failure_result(a.opts.at("result"), status, flags, {}, failure);
        return 1;
    }
    return 0;
}

inline int mode_bench(const Problem& p, const Args& a) {
    const std::uint64_t seed = parse_seed(a.need("seed"));
    const Shape shape = shapes_for(p, a.need("shapes")).front();
    const std::string out_path = a.need("out");
    const std::string sample_path = out_path + ".outputs.bin";
    const int cpu = pin_to_one_cpu();
    install_guard(a);
    using clock = std::chrono::steady_clock;
    auto ms_since = [](clock::time_point t0) {
        return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    };

    Buffers out = make_outputs(p, shape);
    detail::set_context("during warm-up of " + p.name + " at shape " + shape.text());
    {
        Rng rng(derive_seed(seed, kStreamBench, 0));
        const Buffers in = p.make_inputs(shape, rng);
        const auto w0 = clock::now();
        int calls = 0;
        do {
            poison(out);
            p.call(shape, in, out);
            ++calls;
        } while (calls < 100 && ms_since(w0) < 100.0);
    }

    // Repeat until the standard error of the mean is below 0.5 % of the mean, or the budget is spent.
    constexpr double kBudgetMs = 2000.0;
    constexpr double kTargetSem = 0.005;
    constexpr std::size_t kMinReps = 5, kMaxReps = 1000;
    Rng pick(derive_seed(seed, kStreamPick, 0));
    Record sample;
    int extra_tasks = 0;
    std::vector<double> times;
    double sem = 1.0;
    // Cache-interference probe (autocomp_probe.h) between repetitions, at most every 5 ms of the
    // benchmark so that it costs about 0.2 % of the budget whatever the kernel's duration.
    CacheProbe probe;
    std::vector<double> probe_ns{probe.ns_per_load()};
    auto last_probe = clock::now();
    const auto start = clock::now();
    for (std::size_t rep = 1; rep <= kMaxReps; ++rep) {
        Rng rng(derive_seed(seed, kStreamBench, rep));
        const Buffers in = p.make_inputs(shape, rng);
        poison(out);
        detail::set_context("during timed repetition " + std::to_string(rep) + " of " + p.name + " at shape " +
                            shape.text());
        const int tasks_before = guard::task_count();
        const auto t0 = clock::now();
        p.call(shape, in, out);
        const auto t1 = clock::now();
        if (tasks_before > 0 && guard::task_count() > tasks_before)
            extra_tasks = std::max(extra_tasks, guard::task_count() - tasks_before);
        times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        if (!all_finite(out)) {
            std::fprintf(stderr, "%s left NaN/Inf in its output during timed repetition %zu at shape %s "
                         "(outputs are filled with NaN before each call)\n", p.name.c_str(), rep, shape.text().c_str());
            return 1;
        }
        // Reservoir sampling keeps one uniformly chosen repetition for the report step to re-check.
        if (pick.next() % rep == 0) {
            sample.trial = rep;
            sample.outputs = out;
        }
        if (ms_since(last_probe) >= 5.0) {
            probe_ns.push_back(probe.ns_per_load());
            last_probe = clock::now();
        }
        if (times.size() >= kMinReps) {
            const Stats st = stats(times);
            sem = st.mean > 0 ? st.stddev / std::sqrt(static_cast<double>(st.n)) / st.mean : 0.0;
            if (sem < kTargetSem || ms_since(start) > kBudgetMs)
                break;
        }
    }
    write_records(sample_path, {sample});

    const Stats st = stats(times);
    std::string json = "{\n  \"shape\": " + jstr(shape.text()) + ",\n  \"seed\": " + jstr(std::to_string(seed));
    json += ",\n  \"median_ms\": " + jnum(st.median) + ",\n  \"mean_ms\": " + jnum(st.mean);
    json += ",\n  \"p99_ms\": " + jnum(st.p99) + ",\n  \"min_ms\": " + jnum(st.min);
    json += ",\n  \"stddev_ms\": " + jnum(st.stddev) + ",\n  \"n\": " + std::to_string(st.n);
    json += ",\n  \"sem_fraction\": " + jnum(sem) + ",\n  \"converged\": " + (sem < kTargetSem ? "true" : "false");
    json += ",\n  \"pinned_cpu\": " + std::to_string(cpu) + ",\n  \"extra_tasks\": " + std::to_string(extra_tasks);
    const Stats probe_st = stats(probe_ns);
    json += ",\n  \"probe_ns\": " + jnum(probe_st.median) + ",\n  \"probe_ns_min\": " + jnum(probe_st.min) +
            ",\n  \"probes\": " + std::to_string(probe_st.n);
    json += ",\n  \"sample_rep\": " + std::to_string(sample.trial) + ",\n  \"sample_outputs\": " + jstr(sample_path);
    json += ",\n  \"samples_ms\": [";
    for (std::size_t i = 0; i < times.size(); ++i)
        json += (i ? ", " : "") + jnum(times[i]);
    json += "]\n}\n";
    write_text(out_path, json);
    return 0;
}

inline std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// Contents of the file named by option `key`, or "" when the option is absent or the file unreadable
// (the per-machine measurements are optional: a machine without them reports less).
inline std::string optional_file(const Args& a, const std::string& key) {
    const auto it = a.opts.find(key);
    if (it == a.opts.end())
        return {};
    try {
        return read_text(it->second);
    } catch (const std::exception&) {
        return {};
    }
}

inline bool json_has(const std::string& json, const std::string& key) { return json_find(json, key) != std::string::npos; }

// GCC -fopt-info-vec-all remarks for the candidate's file, a few lines: what was vectorized and,
// per source line, the most specific reason a loop was not.
inline std::vector<std::string> vectorization_feedback(const std::string& remarks) {
    std::vector<std::string> out;
    auto parse = [](const std::string& text, const char* kind, auto&& each) {
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) {
            if (line.find("candidate.") == std::string::npos)
                continue;
            // candidate.cpp:LINE:COL: kind: message
            const auto c1 = line.find(':');
            const auto c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
            const auto c3 = c2 == std::string::npos ? c2 : line.find(':', c2 + 1);
            const auto c4 = c3 == std::string::npos ? c3 : line.find(':', c3 + 1);
            if (c4 == std::string::npos || trim(line.substr(c3 + 1, c4 - c3 - 1)) != kind)
                continue;
            each(std::atoi(line.c_str() + c1 + 1), trim(line.substr(c4 + 1)));
        }
    };
    std::map<int, std::string> vectorized;
    parse(remarks, "optimized", [&](int l, const std::string& m) {
        if (m.find("vectorized") != std::string::npos && !vectorized.count(l))
            vectorized[l] = m;
    });
    std::map<int, std::string> not_vectorized;
    parse(remarks, "missed", [&](int l, const std::string& m) {
        if (vectorized.count(l))
            return;
        const bool specific = m.find("not vectorized:") != std::string::npos ||
                              m.find("unsupported") != std::string::npos || m.find("dependence") != std::string::npos;
        auto& slot = not_vectorized[l];
        if (slot.empty() || (specific && slot.find("not vectorized:") == std::string::npos))
            slot = m;
    });
    int shown = 0;
    for (const auto& [l, m] : vectorized)
        if (shown++ < 3)
            out.push_back("vectorized: line " + std::to_string(l) + " (" + m + ")");
    shown = 0;
    for (const auto& [l, m] : not_vectorized)
        if (shown++ < 3)
            out.push_back("not vectorized: line " + std::to_string(l) + ": " + m.substr(0, 160));
    if (out.empty() && !remarks.empty())
        out.push_back("compiler vectorization report: no loop in the candidate was vectorized or reported");
    return out;
}

struct Profile {
    bool valid = false;
    double instructions = 0, d1_miss_rate = 0, ll_miss_rate = 0, data_refs = 0;
};

// callgrind's output: "events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw" and "summary:"/"totals:".
inline Profile parse_callgrind(const std::string& text) {
    Profile prof;
    std::istringstream in(text);
    std::string line;
    std::vector<std::string> events;
    std::vector<double> totals;
    while (std::getline(in, line)) {
        if (line.compare(0, 7, "events:") == 0) {
            std::istringstream w(line.substr(7));
            for (std::string e; w >> e;)
                events.push_back(e);
        } else if (line.compare(0, 8, "summary:") == 0 || line.compare(0, 7, "totals:") == 0) {
            std::istringstream w(line.substr(line.find(':') + 1));
            totals.clear();
            for (double v; w >> v;)
                totals.push_back(v);
        }
    }
    auto value = [&](const char* name) {
        for (std::size_t i = 0; i < events.size() && i < totals.size(); ++i)
            if (events[i] == name)
                return totals[i];
        return 0.0;
    };
    prof.instructions = value("Ir");
    prof.data_refs = value("Dr") + value("Dw");
    if (prof.data_refs > 0) {
        prof.d1_miss_rate = (value("D1mr") + value("D1mw")) / prof.data_refs;
        prof.ll_miss_rate = (value("DLmr") + value("DLmw")) / prof.data_refs;
    }
    prof.valid = prof.instructions > 0;
    return prof;
}

inline int mode_report(const Problem& p, const Args& a) {
    const std::string check = read_text(a.need("check"));
    const std::string timings = read_text(a.need("timings"));
    const Shape shape = shapes_for(p, a.need("shapes")).front();
    const std::string result_path = a.need("result");
    const Tolerance tol{json_number(check, "rtol"), json_number(check, "atol")};

    std::vector<std::string> flags;
    std::vector<std::string> rejections;  // flags that make the result "rejected"
    std::string failure;
    if (!json_bool(check, "ok"))
        failure = "correctness check did not pass: " + json_string(check, "message");

    // Re-check the randomly chosen timed repetition, so a kernel cannot behave differently when timed.
    if (failure.empty()) {
        const std::uint64_t seed = parse_seed(json_string(timings, "seed"));
        const auto rep = static_cast<std::uint64_t>(json_number(timings, "sample_rep"));
        const auto sample = read_records(json_string(timings, "sample_outputs"));
        Rng rng(derive_seed(seed, kStreamBench, rep));
        const Buffers in = p.make_inputs(shape, rng);
        Buffers ref = make_outputs(p, shape);
        detail::set_context("in the reference at shape " + shape.text());
        checked_call(p, shape, in, ref);
        const auto dims = p.outputs(shape);
        if (sample.size() != 1 || sample[0].outputs.size() != ref.size()) {
            failure = "benchmark output sample is missing or malformed";
        } else {
            for (std::size_t o = 0; o < ref.size() && failure.empty(); ++o) {
                if (sample[0].outputs[o].size() != ref[o].size()) {
                    failure = "benchmark output sample has the wrong size";
                    break;
                }
                const Comparison c = compare(sample[0].outputs[o], ref[o], tol, dims[o]);
                if (c.bad > 0)
                    failure = "output of timed repetition " + std::to_string(rep) + " is wrong, although the "
                              "correctness run passed: " + describe_failure(p, shape, static_cast<int>(rep), o, c, tol,
                                                                         dims[o]);
            }
        }
    }

    const Stats st{json_number(timings, "median_ms"), json_number(timings, "mean_ms"), json_number(timings, "p99_ms"),
                   json_number(timings, "min_ms"),    json_number(timings, "stddev_ms"),
                   static_cast<std::size_t>(json_number(timings, "n"))};
    const double flops = p.flops ? p.flops(shape) : 0.0;
    const double bytes = p.bytes ? p.bytes(shape) : 0.0;
    const double seconds = st.median * 1e-3;
    const double gflops = seconds > 0 ? flops / seconds * 1e-9 : 0.0;
    const double gbps = seconds > 0 ? bytes / seconds * 1e-9 : 0.0;
    const double sem = json_number(timings, "sem_fraction");
    const int cpu = static_cast<int>(json_number(timings, "pinned_cpu"));

    std::vector<std::string> feedback;
    feedback.push_back("median latency " + fmt("%.4g", st.median) + " ms at " + shape.text() + " (n=" +
                       std::to_string(st.n) + ", min " + fmt("%.4g", st.min) + " ms, stddev " +
                       fmt("%.3g", st.stddev) + " ms)");
    if (flops > 0)
        feedback.push_back("achieved " + fmt("%.4g", gflops) + " GFLOP/s (" + p.dtype + ")");
    if (bytes > 0)
        feedback.push_back("effective bandwidth " + fmt("%.4g", gbps) + " GB/s counting compulsory traffic only (" +
                           fmt("%.3g", bytes / 1e6) + " MB)");
    if (flops > 0 && bytes > 0)
        feedback.push_back("arithmetic intensity " + fmt("%.3g", flops / bytes) + " flop/byte: " +
                           (flops / bytes > 10 ? "compute-bound when well blocked for cache"
                                               : "likely memory-bound"));
    feedback.push_back(cpu >= 0 ? "benchmark pinned to one CPU core (cpu " + std::to_string(cpu) +
                                      "): extra threads add no throughput"
                                : "benchmark not pinned; threads may use several cores");
    feedback.push_back("max error vs reference: abs " + fmt("%.3g", json_number(check, "max_abs_err")) + ", " +
                       fmt("%.3g", json_number(check, "worst_err_over_allowed") * 100) +
                       "% of the allowed tolerance at worst");
    if (sem >= 0.005)
        feedback.push_back("timing noisy: standard error " + fmt("%.2g", sem * 100) + "% of the mean");

    std::string extra_metrics;
    const std::string roofline = optional_file(a, "roofline");
    // Cache interference while timing (autocomp_probe.h): the probe's median during the benchmark over
    // its quiet time, the lower of the machine's (measured by the roofline setup step) and the best
    // this benchmark saw.
    if (json_has(timings, "probe_ns") && json_number(timings, "probe_ns") > 0) {
        double quiet = json_number(timings, "probe_ns_min");
        if (json_has(roofline, "probe_ns_quiet") && json_number(roofline, "probe_ns_quiet") > 0)
            quiet = std::min(quiet, json_number(roofline, "probe_ns_quiet"));
        const double interference = quiet > 0 ? json_number(timings, "probe_ns") / quiet : 1.0;
        extra_metrics += ", \"cache_interference\": " + jnum(interference);
        // With the probe at 1.05-1.3x, a cache-blocked gemm measured 1.1-1.3x its quiet time.
        if (interference >= 1.05) {
            feedback.push_back("timed while another workload shared this core's caches: an L1-resident probe ran " +
                               fmt("%.2f", interference) + "x slower than when the core is quiet (median of " +
                               std::to_string(static_cast<long long>(json_number(timings, "probes"))) +
                               " probes between repetitions); differences of 10-30 % between evaluations can be noise");
            if (interference >= 1.15)
                flags.push_back("timed under cache interference (" + fmt("%.2f", interference) +
                                "x): an SMT sibling or another workload shared the core; the latency may be inflated");
        } else {
            feedback.push_back("no cache interference while timing (L1 probe at " + fmt("%.2f", interference) +
                               "x its quiet time)");
        }
    }

    // Roofline of this machine (measured once by the setup step): the bound is the lower of the peak
    // FLOP rate and the arithmetic intensity times the bandwidth for this working set. A result above
    // it (5 % measurement margin, and the fastest cache level's bandwidth) is not physically possible:
    // the timing was cut short or the work skipped.
    if (!roofline.empty() && json_has(roofline, "peak_gflops") && flops > 0 && bytes > 0 && gflops > 0) {
        double peak = json_number(roofline, "peak_gflops");
        // The vendor library ran on this core: whatever it reached is possible, whatever we measured.
        const std::string vendor_times = optional_file(a, "vendor");
        if (json_has(vendor_times, "median_ms") && json_number(vendor_times, "median_ms") > 0)
            peak = std::max(peak, flops / (json_number(vendor_times, "median_ms") * 1e-3) * 1e-9);
        const double bw_small = json_number(roofline, "bw_small_gbps"), bw_medium = json_number(roofline, "bw_medium_gbps");
        const double bw_dram = json_number(roofline, "bw_dram_gbps");
        const double bw = bytes <= json_number(roofline, "ws_small_bytes")    ? bw_small
                          : bytes <= json_number(roofline, "ws_medium_bytes") ? bw_medium
                                                                              : bw_dram;
        const double ai = flops / bytes;
        const double bound = std::min(peak, ai * bw);
        const double fraction = gflops / bound;
        const bool compute_bound = peak <= ai * bw;
        extra_metrics += ", \"roofline_fraction\": " + jnum(fraction) + ", \"roofline_bound_gflops\": " + jnum(bound);
        feedback.push_back("achieved " + fmt("%.1f", fraction * 100) + "% of the roofline bound (" +
                           (compute_bound ? "compute bound: peak " + fmt("%.4g", peak) + " GFLOP/s on one core"
                                          : "memory bound: " + fmt("%.3g", ai) + " flop/byte x " + fmt("%.4g", bw) +
                                                " GB/s") + ")");
        const double hard_bound = std::min(peak, ai * std::max({bw_small, bw_medium, bw_dram}));
        if (gflops > 1.05 * hard_bound)
            rejections.push_back("beyond the roofline bound: " + fmt("%.4g", gflops) + " GFLOP/s is " +
                                 fmt("%.2f", gflops / hard_bound) + "x what this machine can do (" +
                                 fmt("%.4g", hard_bound) + " GFLOP/s); the timing or the work is not real");
    } else if (cpu >= 0) {
        // No measurement: a single core does at most 2 FMA units x 16 fp32 lanes x 2 flops per cycle at 6 GHz.
        const double peak_per_core = 2 * 16 * 2 * 6.0;
        if (gflops > peak_per_core)
            rejections.push_back("beyond the roofline bound: throughput " + fmt("%.4g", gflops) +
                                 " GFLOP/s exceeds the single-core peak (" + fmt("%.0f", peak_per_core) + " GFLOP/s)");
    }
    if (st.n >= 5 && st.min < 0.5 * st.median)
        flags.push_back("fastest repetition took less than half the median: results may be cached between calls");
    if (json_has(timings, "extra_tasks") && json_number(timings, "extra_tasks") > 0)
        rejections.push_back("work left running after return (threads alive after a timed call)");

    // The vendor library's time for the same shape, measured once per machine by the setup steps.
    const std::string vendor = optional_file(a, "vendor");
    if (!vendor.empty() && json_has(vendor, "median_ms") && json_number(vendor, "median_ms") > 0) {
        const double v = json_number(vendor, "median_ms");
        const std::string name = a.opts.count("vendor-name") ? a.opts.at("vendor-name") : std::string("vendor library");
        extra_metrics += ", \"vendor_latency_ms\": " + jnum(v) + ", \"speedup_vs_vendor\": " + jnum(v / st.median);
        feedback.push_back(name + ": " + fmt("%.4g", v) + " ms at " + shape.text() + " on one core; this candidate runs at " +
                           fmt("%.2f", v / st.median) + "x its speed");
    }

    for (const auto& line : vectorization_feedback(optional_file(a, "vec-remarks")))
        feedback.push_back(line);

    const std::string metric = a.opts.count("metric") ? a.opts.at("metric") : std::string("latency_ms");
    const Profile prof = parse_callgrind(optional_file(a, "profile"));
    if (prof.valid) {
        extra_metrics += ", \"instructions\": " + jnum(prof.instructions) + ", \"d1_miss_rate\": " +
                         jnum(prof.d1_miss_rate) + ", \"ll_miss_rate\": " + jnum(prof.ll_miss_rate);
        feedback.push_back("callgrind (one call at the smallest shape): " + fmt("%.6g", prof.instructions) +
                           " instructions, D1 miss rate " + fmt("%.2f", prof.d1_miss_rate * 100) + "%, LL miss rate " +
                           fmt("%.2f", prof.ll_miss_rate * 100) + "% of " + fmt("%.4g", prof.data_refs) +
                           " data references");
    } else if (metric == "instructions" && failure.empty()) {
        failure = "no instruction count: the callgrind profile is missing or empty";
    }
    for (const auto& r : rejections)
        flags.push_back(r);

    const bool ok = failure.empty() && rejections.empty();
    if (failure.empty() && !rejections.empty())
        failure = "rejected: " + rejections.front();
    std::string log = ok ? "correct on " + std::to_string(static_cast<long long>(json_number(check, "shapes"))) + " shapes x " +
                               std::to_string(static_cast<long long>(json_number(check, "input_sets"))) +
                               " input sets (rtol=" + fmt("%g", tol.rtol) + ", atol=" + fmt("%g", tol.atol) +
                               "); timed " + std::to_string(st.n) + " repetitions at " + shape.text()
                         : failure;
    std::string json = "{\n  \"status\": " + jstr(ok ? "ok" : rejections.empty() ? "incorrect" : "rejected");
    json += ",\n  \"correct\": " + std::string(ok ? "true" : "false");
    json += ",\n  \"metrics\": {\"latency_ms\": {\"median\": " + jnum(st.median) + ", \"mean\": " + jnum(st.mean) +
            ", \"p99\": " + jnum(st.p99) + ", \"min\": " + jnum(st.min) + ", \"stddev\": " + jnum(st.stddev) +
            ", \"n\": " + std::to_string(st.n) + "}, \"gflops\": " + jnum(gflops) + ", \"gbps\": " + jnum(gbps) + extra_metrics + "}";
    json += ",\n  \"bench_shape\": " + jstr(shape.text());
    json += ",\n  \"feedback\": " + jlist(feedback);
    json += ",\n  \"flags\": " + jlist(flags);
    json += ",\n  \"log\": " + jstr(log) + "\n}\n";
    write_text(result_path, json);
    if (!ok) {
        std::fprintf(stderr, "%s\n", failure.c_str());
        return 1;
    }
    return 0;
}

inline int harness_main(int argc, char** argv, const Problem& p) {
    detail::install_crash_handlers();
    Args a;
    if (argc >= 2)
        a.mode = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        if (key.size() < 3 || key.compare(0, 2, "--") != 0) {
            std::fprintf(stderr, "unexpected argument '%s'\n", argv[i]);
            return 2;
        }
        a.opts[key.substr(2)] = argv[i + 1];
    }
    try {
        if (argc % 2 != 0)
            throw std::runtime_error("options must come in --key value pairs");
        if (a.mode == "run")
            return mode_run(p, a);
        if (a.mode == "check")
            return mode_check(p, a);
        if (a.mode == "bench")
            return mode_bench(p, a);
        if (a.mode == "report")
            return mode_report(p, a);
        if (a.mode == "lint")
            return mode_lint(a);
        if (a.mode == "profile")
            return mode_profile(p, a);
        throw std::runtime_error("unknown mode '" + a.mode + "'");
    } catch (const std::exception& e) {
        std::fprintf(stderr,
                     "autocomp harness (%s): %s\nusage: %s run|check|bench|report|lint|profile --seed S --shapes K=V,...;... "
                     "[--out F] [--tolerance rtol=R,atol=A --outputs F --report F] [--check F --timings F --result F]\n",
                     p.name.c_str(), e.what(), argc > 0 ? argv[0] : "harness");
        return 2;
    }
}

} // namespace autocomp

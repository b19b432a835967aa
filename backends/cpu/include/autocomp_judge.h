// autocomp_judge.h — the trusted side of the CPU target's evaluation (C++17, Linux x86-64).
//
// The judge is harness.cpp linked with the problem's reference, built into the per-machine cache.
// Its modes, one per step of backends/cpu/backend.yaml:
//
//   judge lint   --source candidate.ii --raw candidate.cpp --reference R --allow-libraries 0|1 --result F
//   judge gate   --object candidate.o --libraries a,b --threads 0|1 --result F
//   judge check  --channels 3 --worker-pids P --seed S --shapes SH --shape-ranges K=lo:hi,... --random-shapes N
//                --tolerance rtol=R,atol=A --report check.json --result F
//   judge bench  --channels 3[,4] --worker-pids P[,Q] --seed S --shapes SH --tolerance T --out timings.json
//   judge count  --channels 3 --worker-pids P --seed S --shapes SH --tolerance T --callgrind F --out profile.json
//   judge report --check check.json --timings timings.json --shapes SH --result result.json
//                [--roofline F] [--vendor F --vendor-name N] [--vec-remarks F] [--profile profile.json]
//   judge selftime --shapes SH --out F      (times the linked implementation in-process: vendor baselines)
//
// Exit status: 0 passed, 1 the candidate failed (result.json says why), 2 a harness error.
// The seed, the random shapes and the choice of checked calls exist only in this process.
#pragma once

#include "autocomp_channel.h"
#include "autocomp_gate.h"
#include "autocomp_lint.h"
#include "autocomp_probe.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sched.h>

namespace autocomp {
namespace judge {

using json = nlohmann::json;
using clock = std::chrono::steady_clock;

constexpr int kTrials = 2;                  // input sets per shape in the correctness check
constexpr std::uint64_t kStreamCheck = 1;   // seed streams: check inputs, bench inputs, picks, shapes
constexpr std::uint64_t kStreamBench = 2;
constexpr std::uint64_t kStreamPick = 3;
constexpr std::uint64_t kStreamShapes = 4;
constexpr std::uint64_t kStreamBaseline = 5;
constexpr std::uint64_t kStreamCount = 6;
constexpr std::uint32_t kPoisonBits = 0x7FC5A5A5u;  // a quiet NaN no arithmetic produces
constexpr std::size_t kTextCap = 1 << 20;            // what is read of a file a candidate step wrote

struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Args {
    std::string mode;
    std::map<std::string, std::string> opts;
    std::string need(const std::string& key) const {
        const auto it = opts.find(key);
        if (it == opts.end())
            throw std::runtime_error("missing option --" + key);
        return it->second;
    }
    std::string get(const std::string& key, const std::string& fallback = {}) const {
        const auto it = opts.find(key);
        return it == opts.end() ? fallback : it->second;
    }
};

inline std::string fmt(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

// A file a candidate step may have written: a regular file (no link followed), at most `cap` bytes.
inline std::string read_untrusted(const std::string& path, std::size_t cap = kTextCap, bool* truncated = nullptr,
                                  bool follow_links = false) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow_links ? 0 : O_NOFOLLOW));
    if (fd < 0)
        throw std::runtime_error("cannot read " + path);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw std::runtime_error(path + " is not a regular file");
    }
    // /proc files say size 0: read to the end, never past the cap.
    std::string out;
    char buf[65536];
    bool more = true;
    while (out.size() < cap) {
        const ssize_t n = ::read(fd, buf, std::min(sizeof buf, cap - out.size()));
        if (n <= 0) {
            more = false;
            break;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
    if (more) {
        char extra;
        more = ::read(fd, &extra, 1) == 1;
    }
    ::close(fd);
    if (truncated)
        *truncated = more;
    return out;
}

inline std::string read_optional(const Args& a, const std::string& key, std::size_t cap = kTextCap) {
    const auto it = a.opts.find(key);
    if (it == a.opts.end())
        return {};
    try {
        return read_untrusted(it->second, cap);
    } catch (const std::exception&) {
        return {};
    }
}

inline json read_json(const std::string& path) {
    return json::parse(read_untrusted(path, 16 << 20));
}

inline json read_json_optional(const Args& a, const std::string& key) {
    try {
        const std::string text = read_optional(a, key, 16 << 20);
        return text.empty() ? json() : json::parse(text);
    } catch (const std::exception&) {
        return json();
    }
}

inline void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out)
        throw std::runtime_error("cannot write " + path);
}

// Text the candidate influenced, for a log or a prompt: printable, capped.
inline std::string quote_untrusted(const std::string& text, std::size_t cap = 2000) {
    std::string out;
    for (const char ch : text.substr(0, cap)) {
        const auto c = static_cast<unsigned char>(ch);
        out += (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ? ch : '?';
    }
    if (text.size() > cap)
        out += " [...]";
    return out;
}

inline void write_result(const std::string& path, const std::string& status, const std::vector<std::string>& flags,
                         const std::vector<std::string>& feedback, const std::string& log, const json& metrics = json::object()) {
    json r;
    r["status"] = status;
    r["correct"] = status == "ok";
    r["metrics"] = metrics.is_object() ? metrics : json::object();
    r["feedback"] = feedback;
    r["flags"] = flags;
    r["log"] = log;
    write_file(path, r.dump(2) + "\n");
}

inline std::uint64_t parse_seed(const std::string& text) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0')
        throw std::runtime_error("bad --seed");
    return v;
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

inline std::vector<Shape> shapes_for(const Problem& p, const std::string& text) {
    auto shapes = parse_shapes(text);
    for (const auto& s : shapes)
        for (const auto& k : p.keys)
            if (!s.has(k))
                throw std::runtime_error("shape " + s.text() + " lacks key " + k);
    return shapes;
}

// Shapes drawn for this evaluation within the declared ranges ("M=1:600,N=1:600"), each one a shape
// the problem accepts (make_inputs throws for one it does not, e.g. a filter larger than the image).
inline std::vector<Shape> random_shapes(const Problem& p, const std::string& ranges, int count, std::uint64_t seed) {
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
    Rng rng(derive_seed(seed, kStreamShapes, 0));
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

// ---------------------------------------------------------------------------------------------
// Comparing outputs with the reference.

inline float poison_value() {
    float f;
    std::memcpy(&f, &kPoisonBits, sizeof f);
    return f;
}

inline bool is_poison(float x) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    return bits == kPoisonBits;
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

struct Comparison {
    std::size_t checked = 0, bad = 0;
    std::size_t unwritten = 0;     // still the judge's poison: never written by the kernel
    std::size_t computed_nan = 0;  // NaN the kernel computed
    std::size_t infinite = 0;
    double max_abs = 0.0, max_rel = 0.0, worst_ratio = 0.0;
    std::size_t worst_index = 0;
    float worst_value = 0.0f, worst_ref = 0.0f;
    std::string examples;
};

inline Comparison compare(const float* got, const Buffer& ref, const Tolerance& tol, const Dims& dims) {
    Comparison c;
    c.checked = ref.size();
    int shown = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double r = ref[i];
        const float xf = got[i];
        const double x = xf;
        double ratio;
        if (std::isnan(xf)) {
            ++(is_poison(xf) ? c.unwritten : c.computed_nan);
            ratio = std::numeric_limits<double>::infinity();
        } else if (std::isinf(xf)) {
            ++c.infinite;
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
                char buf[200];
                std::snprintf(buf, sizeof buf, "\n    at %s: got %s, expected %.9g", index_text(dims, i).c_str(),
                              is_poison(xf) ? "(never written)" : fmt("%.9g", x).c_str(), r);
                c.examples += buf;
                ++shown;
            }
        }
        if (ratio > c.worst_ratio || (i == 0 && ratio > 1.0)) {
            c.worst_ratio = ratio;
            c.worst_index = i;
            c.worst_value = xf;
            c.worst_ref = ref[i];
        }
    }
    return c;
}

inline std::string describe_failure(const Problem& p, const Shape& shape, const std::string& which, std::size_t output,
                                    const Comparison& c, const Tolerance& tol, const Dims& dims) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "MISMATCH in %s at shape %s (%s, output %zu): %zu of %zu elements outside "
                  "|x-ref| <= atol + rtol*|ref| (rtol=%g, atol=%g)",
                  p.name.c_str(), shape.text().c_str(), which.c_str(), output, c.bad, c.checked, tol.rtol, tol.atol);
    std::string msg = buf;
    if (c.unwritten > 0)
        msg += "\n  " + std::to_string(c.unwritten) +
               " elements were never written: they still hold the NaN the judge filled the output with before the call";
    if (c.computed_nan > 0)
        msg += "\n  " + std::to_string(c.computed_nan) + " elements are NaN computed by the kernel (e.g. 0/0 or inf-inf)";
    if (c.infinite > 0)
        msg += "\n  " + std::to_string(c.infinite) + " elements are infinite";
    if (!is_poison(c.worst_value)) {
        std::snprintf(buf, sizeof buf, "\n  worst element %s: got %.9g, expected %.9g", index_text(dims, c.worst_index).c_str(),
                      static_cast<double>(c.worst_value), static_cast<double>(c.worst_ref));
        msg += buf;
    }
    msg += "\n  first mismatches:" + c.examples;
    return msg;
}

inline Buffers make_outputs(const Problem& p, const Shape& shape) {
    Buffers out;
    for (const auto& dims : p.outputs(shape)) {
        long long n = 1;
        for (const long long d : dims)
            n *= d;
        out.emplace_back(static_cast<std::size_t>(n), poison_value());
    }
    return out;
}

// The reference's outputs for one input set, computed in this process.
inline Buffers reference(const Problem& p, const Shape& shape, const Buffers& in) {
    Buffers out = make_outputs(p, shape);
    const Buffers clone = in;
    p.call(shape, spans(clone), spans(out));
    for (const auto& b : out)
        for (const float x : b)
            if (!std::isfinite(x))
                throw std::runtime_error("harness error: the reference produced a non-finite value at shape " + shape.text());
    return out;
}

// ---------------------------------------------------------------------------------------------
// Statistics.

struct Stats {
    double median = 0, mean = 0, p99 = 0, min = 0, stddev = 0;
    std::size_t n = 0;
};

inline double median_of_sorted(const std::vector<double>& v) {
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

inline Stats stats(std::vector<double> v) {
    Stats s;
    s.n = v.size();
    if (v.empty())
        return s;
    std::sort(v.begin(), v.end());
    s.min = v.front();
    s.median = median_of_sorted(v);
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

inline json stats_json(const Stats& s) {
    return {{"median", s.median}, {"mean", s.mean}, {"p99", s.p99}, {"min", s.min}, {"stddev", s.stddev}, {"n", s.n}};
}

// The median of the ratios with a distribution-free 95 % interval (order statistics of the
// binomial(n, 1/2) ranks, normal approximation).
struct RatioEstimate {
    double value = 0, low = 0, high = 0;
    std::size_t n = 0;
};

inline RatioEstimate median_interval(std::vector<double> r) {
    RatioEstimate e;
    e.n = r.size();
    if (r.empty())
        return e;
    std::sort(r.begin(), r.end());
    const double n = static_cast<double>(r.size());
    e.value = median_of_sorted(r);
    const double half = 0.98 * std::sqrt(n);
    const long lo = std::max(0L, static_cast<long>(std::floor(n / 2 - half)) - 1);
    const long hi = std::min(static_cast<long>(r.size()) - 1, static_cast<long>(std::ceil(n / 2 + half)));
    e.low = r[static_cast<std::size_t>(lo)];
    e.high = r[static_cast<std::size_t>(hi)];
    return e;
}

// ---------------------------------------------------------------------------------------------
// A worker process, seen from the judge: its channel and what /proc says about it.

inline std::vector<int> parse_cpu_list(const std::string& text) {
    std::vector<int> out;
    for (const auto& part : split(text, ',')) {
        const auto dash = part.find('-');
        const int lo = std::atoi(part.c_str());
        const int hi = dash == std::string::npos ? lo : std::atoi(part.c_str() + dash + 1);
        for (int c = lo; c <= hi && c - lo < 4096; ++c)
            out.push_back(c);
    }
    return out;
}

inline std::string proc_file(pid_t pid, const std::string& name) {
    try {
        return read_untrusted("/proc/" + std::to_string(pid) + "/" + name, 1 << 16);
    } catch (const std::exception&) {
        return {};
    }
}

inline std::string status_field(const std::string& status, const std::string& key) {
    const auto at = status.find("\n" + key + ":");
    if (at == std::string::npos)
        return {};
    const auto end = status.find('\n', at + 1);
    return trim(status.substr(at + key.size() + 2, end - at - key.size() - 2));
}

// Fields of /proc/PID/stat after the command name: [0] state, [1] ppid, ... [36] processor.
inline std::vector<std::string> stat_fields(const std::string& stat) {
    const auto close = stat.rfind(')');
    if (close == std::string::npos)
        return {};
    std::vector<std::string> out;
    std::istringstream in(stat.substr(close + 1));
    for (std::string f; in >> f;)
        out.push_back(f);
    return out;
}

inline std::vector<pid_t> descendants(pid_t root) {
    std::map<pid_t, pid_t> parent;
    if (DIR* d = opendir("/proc")) {
        while (const dirent* e = readdir(d)) {
            const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
            if (pid <= 0)
                continue;
            const auto f = stat_fields(proc_file(pid, "stat"));
            if (f.size() > 1)
                parent[pid] = static_cast<pid_t>(std::atoi(f[1].c_str()));
        }
        closedir(d);
    }
    std::vector<pid_t> out{root};
    for (std::size_t i = 0; i < out.size(); ++i)
        for (const auto& kv : parent)
            if (kv.second == out[i] && std::find(out.begin(), out.end(), kv.first) == out.end())
                out.push_back(kv.first);
    return out;
}

class Worker {
public:
    std::string label;

    Worker(int fd, pid_t root, std::string name) : label(std::move(name)), m_root(root) {
        struct stat st;
        if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(channel::kControlBytes + (1 << 20)))
            throw std::runtime_error("no channel on fd " + std::to_string(fd));
        m_size = static_cast<std::size_t>(st.st_size);
        void* mem = mmap(nullptr, m_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (mem == MAP_FAILED)
            throw std::runtime_error("cannot map the channel");
        m_base = static_cast<unsigned char*>(mem);
        m_c = static_cast<channel::Control*>(mem);
        m_c->version = channel::kVersion;
        std::atomic_thread_fence(std::memory_order_release);
        m_c->magic = channel::kMagic;
    }

    // Waits until the worker has loaded the candidate under its filter; then finds its process.
    void wait_ready(double timeout_s) {
        const auto t0 = clock::now();
        for (;;) {
            const std::uint32_t h = m_c->hello.load(std::memory_order_acquire);
            if (h == 1)
                break;
            if (h == 2) {
                m_c->message[sizeof m_c->message - 1] = '\0';
                throw Failure("the " + label + " could not be loaded: " + quote_untrusted(m_c->message, 600));
            }
            if (!root_alive())
                throw Failure("the " + label + "'s process ended before it was ready");
            if (std::chrono::duration<double>(clock::now() - t0).count() > timeout_s)
                throw Failure("the " + label + "'s process did not get ready within " + fmt("%.0f", timeout_s) + " s");
            channel::wait_while(&m_c->hello, h, 10000000L);
        }
        // The worker is the descendant that is not the sandbox (bwrap keeps a process above it).
        for (pid_t pid : descendants(m_root)) {
            std::string comm = trim(proc_file(pid, "comm"));
            if (comm != "bwrap")
                m_pid = pid;
        }
        if (m_pid <= 0)
            m_pid = m_root;
        m_cpus = parse_cpu_list(status_field(proc_file(m_pid, "status"), "Cpus_allowed_list"));
        const std::string cgroup = proc_file(m_pid, "cgroup");
        m_cpuset = cgroup.find(":cpuset:/") != std::string::npos && cgroup.find("autocomp-") != std::string::npos;
        if (!m_cpuset)  // cgroup v2: one line, the cpuset controller of the unified hierarchy
            m_cpuset = cgroup.rfind("0::/", 0) == 0 && cgroup.find("autocomp-") != std::string::npos;
        cpu_set_t mine;
        CPU_ZERO(&mine);
        m_spin = true;
        if (sched_getaffinity(0, sizeof mine, &mine) == 0)
            for (int c : m_cpus)
                if (c >= 0 && c < CPU_SETSIZE && CPU_ISSET(c, &mine))
                    m_spin = false;  // we share a CPU with the worker: sleep, do not spin
        m_threads = threads();
        m_clock_ok = clock_getcpuclockid(m_pid, &m_clock) == 0;
    }

    pid_t pid() const { return m_pid; }
    const std::vector<int>& cpus() const { return m_cpus; }
    bool spins() const { return m_spin; }
    bool in_cpuset() const { return m_cpuset; }
    int baseline_threads() const { return m_threads; }

    int threads() const {
        const std::string t = status_field(proc_file(m_pid, "status"), "Threads");
        return t.empty() ? -1 : std::atoi(t.c_str());
    }

    bool alive() const { return running(m_pid > 0 ? m_pid : m_root); }
    bool root_alive() const { return running(m_root); }
    static bool running(pid_t pid) {
        const auto f = stat_fields(proc_file(pid, "stat"));
        return !f.empty() && f[0] != "Z" && f[0] != "X";
    }

    // CPUs the worker's threads last ran on.
    std::set<int> ran_on() const {
        std::set<int> out;
        const std::string dir = "/proc/" + std::to_string(m_pid) + "/task";
        if (DIR* d = opendir(dir.c_str())) {
            while (const dirent* e = readdir(d)) {
                if (e->d_name[0] == '.')
                    continue;
                const auto f = stat_fields(proc_file(m_pid, std::string("task/") + e->d_name + "/stat"));
                if (f.size() > 36)
                    out.insert(std::atoi(f[36].c_str()));
            }
            closedir(d);
        }
        return out;
    }

    // Lays out `count` slots for calls at `shape`; returns the slot size.
    std::size_t layout(const std::vector<std::size_t>& in_counts, const std::vector<std::size_t>& out_counts, std::size_t count) {
        if (in_counts.size() > channel::kMaxBuffers || out_counts.size() > channel::kMaxBuffers)
            throw std::runtime_error("too many buffers for the channel");
        std::size_t off = 0;
        m_in_off.clear();
        m_out_off.clear();
        for (std::size_t n : in_counts) {
            m_in_off.push_back(off);
            off = channel::align_up(off + n * sizeof(float));
        }
        for (std::size_t n : out_counts) {
            m_out_off.push_back(off);
            off = channel::align_up(off + n * sizeof(float));
        }
        m_slot = std::max<std::size_t>(off, channel::kSlotAlign);
        if (count > capacity(m_slot))
            throw std::runtime_error("the channel is too small for " + std::to_string(count) + " calls");
        m_in_counts = in_counts;
        m_out_counts = out_counts;
        return m_slot;
    }
    std::size_t capacity(std::size_t slot) const { return (m_size - channel::kControlBytes) / slot; }

    float* in(std::size_t slot, std::size_t b) { return reinterpret_cast<float*>(slot_base(slot) + m_in_off[b]); }
    float* out(std::size_t slot, std::size_t b) { return reinterpret_cast<float*>(slot_base(slot) + m_out_off[b]); }

    // Writes one call's inputs and poisons its outputs.
    void fill(std::size_t slot, const Buffers& inputs) {
        for (std::size_t b = 0; b < inputs.size(); ++b)
            std::memcpy(in(slot, b), inputs[b].data(), inputs[b].size() * sizeof(float));
        for (std::size_t b = 0; b < m_out_counts.size(); ++b)
            std::fill_n(out(slot, b), m_out_counts[b], poison_value());
    }

    // First modified input (buffer, element) of a slot, compared with what the judge wrote.
    std::pair<long long, long long> modified(std::size_t slot, const Buffers& inputs) {
        for (std::size_t b = 0; b < inputs.size(); ++b) {
            const float* got = in(slot, b);
            if (std::memcmp(got, inputs[b].data(), inputs[b].size() * sizeof(float)) == 0)
                continue;
            for (std::size_t i = 0; i < inputs[b].size(); ++i)
                if (std::memcmp(&got[i], &inputs[b][i], sizeof(float)) != 0)
                    return {static_cast<long long>(b), static_cast<long long>(i)};
        }
        return {-1, -1};
    }

    // One request; returns the nanoseconds it took, as the judge measures them: the CPU time the
    // kernel's process consumed from go to done (its CPU clock, kept by the kernel, read from here),
    // or, where the problem allows threads, the wall time from go to done. The CPU clock does not
    // count time this judge waited for its own turn on a busy CPU; the wall time does. Throws Failure
    // when the worker dies, reports an error or overruns `timeout_s`.
    double run(channel::Command command, std::uint32_t count, const std::string& shape, double timeout_s,
               double expected_ns = 0) {
        channel::Control* c = m_c;
        c->command = command;
        c->count = count;
        c->n_in = static_cast<std::uint32_t>(m_in_counts.size());
        c->n_out = static_cast<std::uint32_t>(m_out_counts.size());
        c->slot_bytes = m_slot;
        for (std::size_t b = 0; b < m_in_counts.size(); ++b) {
            c->in_offset[b] = m_in_off[b];
            c->in_count[b] = m_in_counts[b];
        }
        for (std::size_t b = 0; b < m_out_counts.size(); ++b) {
            c->out_offset[b] = m_out_off[b];
            c->out_count[b] = m_out_counts[b];
        }
        std::snprintf(c->shape, sizeof c->shape, "%s", shape.c_str());
        const std::uint32_t seq = ++m_seq;
        c->request.store(seq, std::memory_order_release);
        channel::wake(&c->request);
        wait(&c->ready, seq, timeout_s, shape);
        wait_asleep();
        const double cpu0 = cpu_ns();
        const auto t0 = clock::now();
        c->go.store(seq, std::memory_order_release);
        channel::wake(&c->go);
        wait(&c->done, seq, timeout_s, shape, expected_ns);
        const auto t1 = clock::now();
        wait_asleep();
        const double cpu1 = cpu_ns();
        m_last_wall_ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
        const std::int32_t status = c->status;
        if (status != channel::kOk) {
            c->message[sizeof c->message - 1] = '\0';
            throw Failure("the " + label + " failed at shape " + shape + ": " + quote_untrusted(c->message, 600));
        }
        if (m_wall_clock || cpu0 < 0 || cpu1 < cpu0)
            return m_last_wall_ns;
        return cpu1 - cpu0;
    }

    double last_wall_ns() const { return m_last_wall_ns; }
    // Time by the wall clock (threads may run in parallel) instead of the process's CPU clock.
    void use_wall_clock(bool on) { m_wall_clock = on; }

    void exit_worker() {
        m_c->command = channel::kExit;
        m_c->request.store(++m_seq, std::memory_order_release);
        channel::wake(&m_c->request);
    }

private:
    unsigned char* slot_base(std::size_t slot) { return m_base + channel::kControlBytes + slot * m_slot; }

    // Until the worker sleeps (on its futex), so that its CPU clock is exact. A worker that still
    // runs two seconds after it said its batch was done (the kernel wrote `done` into the channel
    // itself and went on computing) is rejected.
    void wait_asleep() {
        if (!m_clock_ok)
            return;
        const auto start = clock::now();
        for (;;) {
            const auto f = stat_fields(proc_file(m_pid, "stat"));
            if (f.empty() || f[0] != "R")
                return;
            if (std::chrono::duration<double>(clock::now() - start).count() > 2.0)
                throw Failure("WORK LEFT RUNNING: the " + label + "'s process kept running for 2 s after its batch was "
                              "reported done");
            channel::cpu_relax();
        }
    }

    // The worker's process CPU clock in ns (all its threads), or -1.
    double cpu_ns() {
        if (!m_clock_ok)
            return -1;
        timespec ts;
        if (clock_gettime(m_clock, &ts) != 0)
            return -1;
        return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
    }

    // Spinning (on a CPU of our own) sees the worker's answer within a cache-line transfer; for a
    // long batch the judge first sleeps on the futex through most of the time the last one took,
    // so that it does not take a core from the compiles for nothing.
    void wait(std::atomic<std::uint32_t>* word, std::uint32_t seq, double timeout_s, const std::string& shape,
              double expected_ns = 0) {
        const auto start = clock::now();
        if (m_spin && expected_ns > 500000) {
            for (;;) {
                const std::uint32_t v = word->load(std::memory_order_acquire);
                const double left = 0.8 * expected_ns - std::chrono::duration<double, std::nano>(clock::now() - start).count();
                if (v == seq || left < 200000)
                    break;
                channel::wait_while(word, v, static_cast<long>(std::min(left - 100000, 2e6)));
            }
        }
        auto check = [&] {
            if (!alive())
                throw Failure("the " + label + "'s process ended while running at shape " + shape +
                              " (see its output: a crash, a forbidden system call or an exit)");
            if (std::chrono::duration<double>(clock::now() - start).count() > timeout_s)
                throw Failure("TIMEOUT: the " + label + " timed out: more than " + fmt("%.0f", timeout_s) +
                              " s for one request at shape " + shape);
        };
        if (m_spin) {
            for (std::uint64_t i = 1;; ++i) {
                if (word->load(std::memory_order_acquire) == seq)
                    return;
                channel::cpu_relax();
                if ((i & 0xFFFF) == 0)
                    check();
            }
        }
        for (;;) {
            const std::uint32_t v = word->load(std::memory_order_acquire);
            if (v == seq)
                return;
            channel::wait_while(word, v, 2000000L);
            check();
        }
    }

    unsigned char* m_base = nullptr;
    channel::Control* m_c = nullptr;
    std::size_t m_size = 0, m_slot = 0;
    std::vector<std::size_t> m_in_off, m_out_off, m_in_counts, m_out_counts;
    pid_t m_root = 0, m_pid = 0;
    std::vector<int> m_cpus;
    bool m_spin = false;
    bool m_cpuset = false;
    bool m_wall_clock = false;
    bool m_clock_ok = false;
    clockid_t m_clock{};
    double m_last_wall_ns = 0;
    int m_threads = 0;
    std::uint32_t m_seq = 0;
};

inline std::vector<std::unique_ptr<Worker>> open_workers(const Args& a) {
    const auto fds = split(a.need("channels"), ',');
    const auto pids = split(a.need("worker-pids"), ',');
    if (fds.empty() || fds.size() != pids.size())
        throw std::runtime_error("--channels and --worker-pids must name the same number of workers");
    std::vector<std::unique_ptr<Worker>> out;
    for (std::size_t i = 0; i < fds.size(); ++i)
        out.push_back(std::make_unique<Worker>(std::atoi(fds[i].c_str()), static_cast<pid_t>(std::atoi(pids[i].c_str())),
                                               i == 0 ? "candidate" : "baseline"));
    for (auto& w : out)
        w->wait_ready(60.0);
    return out;
}

inline std::vector<std::size_t> counts(const Buffers& b) {
    std::vector<std::size_t> out;
    for (const auto& x : b)
        out.push_back(x.size());
    return out;
}

inline std::vector<std::size_t> output_counts(const Problem& p, const Shape& s) {
    std::vector<std::size_t> out;
    for (const auto& dims : p.outputs(s)) {
        long long n = 1;
        for (long long d : dims)
            n *= d;
        out.push_back(static_cast<std::size_t>(n));
    }
    return out;
}

// One call with fresh inputs: the outputs are copied out of the channel at once.
struct CallOutcome {
    Buffers outputs;
    std::pair<long long, long long> modified{-1, -1};
    int extra_threads = 0;
    double ns = 0;
};

inline CallOutcome call_once(const Problem& p, Worker& w, const Shape& shape, const Buffers& inputs, double timeout_s) {
    const auto outs = output_counts(p, shape);
    w.layout(counts(inputs), outs, 1);
    w.fill(0, inputs);
    CallOutcome r;
    r.ns = w.run(channel::kCalls, 1, shape.text(), timeout_s);
    const int after = w.threads();
    if (after > w.baseline_threads())
        r.extra_threads = after - w.baseline_threads();
    r.modified = w.modified(0, inputs);
    for (std::size_t b = 0; b < outs.size(); ++b)
        r.outputs.emplace_back(w.out(0, b), w.out(0, b) + outs[b]);
    return r;
}

[[noreturn]] inline void reject_work_left_running(const Problem& p, const Shape& shape, int extra) {
    throw Failure("WORK LEFT RUNNING: " + std::to_string(extra) + " more thread(s) were alive after " + p.name +
                  " returned at shape " + shape.text() + " than before the call; a kernel must finish all its work "
                  "(join its threads) before it returns");
}

[[noreturn]] inline void reject_modified(const Problem& p, const Shape& shape, std::pair<long long, long long> m) {
    throw Failure("INPUTS MODIFIED: " + p.name + " wrote to input " + std::to_string(m.first) + " (first changed element " +
                  std::to_string(m.second) + ") at shape " + shape.text() + "; inputs are read-only");
}

// ---------------------------------------------------------------------------------------------
// Modes.

struct Verdict {
    std::string status;  // incorrect | rejected | crash | timeout
    std::vector<std::string> flags;
    std::string log;
};

// A Failure's message says what kind of failure it is.
inline Verdict classify(const std::string& msg) {
    Verdict v{"incorrect", {}, msg};
    if (msg.rfind("WORK LEFT RUNNING", 0) == 0) {
        v.status = "rejected";
        v.flags.push_back("work left running after return (threads alive after the call)");
    } else if (msg.rfind("INPUTS MODIFIED", 0) == 0) {
        v.status = "rejected";
        v.flags.push_back("inputs modified by the kernel");
    } else if (msg.rfind("TIMEOUT", 0) == 0) {
        v.status = "timeout";
    } else if (msg.find("process ended") != std::string::npos) {
        v.status = "crash";
    } else if (msg.find("could not be loaded") != std::string::npos || msg.find("did not get ready") != std::string::npos) {
        v.status = "crash";
    } else if (msg.find("threw an exception") != std::string::npos) {
        v.status = "crash";
    } else if (msg.rfind("CPU ESCAPE", 0) == 0) {
        v.status = "rejected";
        v.flags.push_back("work ran outside the benchmark CPU");
    }
    return v;
}

inline int mode_lint(const Args& a) {
    lint::Options opt;
    opt.reference_path = a.get("reference");
    opt.allow_libraries = a.get("allow-libraries") == "1";
    // The preprocessed text (includes resolved, macros expanded, token pasting done, line splices
    // joined), keeping only the lines that come from the candidate's own file, at their own line
    // numbers; digraphs spelled as the tokens they are. Then the raw text for what preprocessing
    // removes (the #include lines). Both only give early, readable reasons: the gate decides.
    const std::string pre = read_untrusted(a.need("source"), 16 << 20);
    const std::string raw_name = a.get("raw-name", "candidate.cpp");
    std::map<int, std::string> lines;
    {
        std::istringstream in(pre);
        std::string line;
        bool own = false;
        int number = 1;
        while (std::getline(in, line)) {
            if (line.size() > 2 && line[0] == '#' && line[1] == ' ' && std::isdigit(static_cast<unsigned char>(line[2]))) {
                number = std::atoi(line.c_str() + 2);
                const auto q = line.find('"');
                const auto e = q == std::string::npos ? q : line.find('"', q + 1);
                const std::string file = q == std::string::npos ? std::string() : line.substr(q + 1, e - q - 1);
                own = file.size() >= raw_name.size() && file.compare(file.size() - raw_name.size(), raw_name.size(), raw_name) == 0;
                continue;
            }
            if (own)
                lines[number] += line + " ";
            ++number;
        }
    }
    std::string text;
    int at = 1;
    for (const auto& kv : lines) {
        while (at < kv.first) {
            text += "\n";
            ++at;
        }
        text += kv.second;
    }
    for (const auto& d : std::vector<std::pair<std::string, std::string>>{{"<:", "["}, {":>", "]"}, {"<%", "{"}, {"%>", "}"}, {"%:", "#"}})
        for (std::size_t pos = text.find(d.first); pos != std::string::npos; pos = text.find(d.first, pos + d.second.size()))
            text.replace(pos, d.first.size(), d.second);
    auto findings = lint::check(text, opt);
    const std::string raw = read_optional(a, "raw", 16 << 20);
    for (const auto& f : lint::check(raw, opt))
        if (std::none_of(findings.begin(), findings.end(), [&](const lint::Finding& g) { return g.message == f.message; }))
            findings.push_back(f);
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
    write_result(a.need("result"), "rejected", flags, feedback, log);
    return 1;
}

// Raw system-call instructions in the object's code, from the disassembler (a byte scan would find
// 0f 05 inside other instructions' immediates).
inline std::vector<std::string> raw_syscalls(const std::string& object) {
    std::vector<std::string> out;
    if (object.find('\'') != std::string::npos)
        return out;
    FILE* pipe = popen(("objdump -d --no-show-raw-insn '" + object + "' 2>/dev/null").c_str(), "r");
    if (!pipe)
        return out;
    char line[1024];
    std::string function;
    while (std::fgets(line, sizeof line, pipe)) {
        const std::string l = line;
        const auto lt = l.find('<');
        if (lt != std::string::npos && l.find(">:") != std::string::npos)
            function = l.substr(lt + 1, l.find(">:") - lt - 1);
        const auto tab = l.find('\t');
        if (tab == std::string::npos)
            continue;
        const std::string insn = trim(l.substr(tab + 1));
        if (insn == "syscall" || insn == "sysenter" || insn.rfind("int    $0x80", 0) == 0 || insn.rfind("int $0x80", 0) == 0)
            out.push_back(function.empty() ? std::string("?") : function);
    }
    pclose(pipe);
    return out;
}

inline std::set<std::string> library_symbols(const std::vector<std::string>& libraries) {
    std::set<std::string> out;
    for (const auto& lib : libraries) {
        for (const char* dir : {"/usr/lib/x86_64-linux-gnu/", "/usr/lib64/", "/usr/lib/", "/usr/local/lib/"}) {
            try {
                // A system library (Debian links libopenblas.so through /etc/alternatives).
                const std::string data = read_untrusted(std::string(dir) + "lib" + lib + ".so", 256u << 20, nullptr, true);
                const auto syms = gate::exported_symbols(data);
                out.insert(syms.begin(), syms.end());
                break;
            } catch (const std::exception&) {
            }
        }
    }
    return out;
}

inline int mode_gate(const Args& a) {
    gate::Options opt;
    for (const Entry& e : entries())
        opt.entries.push_back(e.name);
    opt.threads = a.get("threads") == "1";
    opt.library_symbols = library_symbols(split(a.get("libraries"), ','));
    const std::string object = a.need("object");
    bool truncated = false;
    const std::string data = read_untrusted(object, 256u << 20, &truncated);
    auto findings = truncated ? std::vector<gate::Finding>{{"object too large", "the compiled candidate is over 256 MiB"}}
                              : gate::check(data, opt);
    for (const auto& fn : raw_syscalls(object))
        if (std::none_of(findings.begin(), findings.end(), [&](const gate::Finding& f) { return f.flag == "raw system call"; }))
            findings.push_back({"raw system call", "'" + fn + "' contains a raw system call instruction"});
    if (findings.empty())
        return 0;
    std::vector<std::string> flags, feedback;
    std::string log = "the object-file gate rejected the candidate:";
    for (const auto& f : findings) {
        const std::string flag = "gate: " + f.flag;
        if (std::find(flags.begin(), flags.end(), flag) == flags.end())
            flags.push_back(flag);
        if (feedback.size() < 8)
            feedback.push_back(f.message);
        log += "\n  " + f.message;
    }
    std::fprintf(stderr, "%s\n", log.c_str());
    write_result(a.need("result"), "rejected", flags, feedback, log);
    return 1;
}

inline int mode_check(const Problem& p, const Args& a) {
    const std::uint64_t seed = parse_seed(a.need("seed"));
    const Tolerance tol = parse_tolerance(a.need("tolerance"));
    const auto declared = shapes_for(p, a.need("shapes"));
    const auto drawn = random_shapes(p, a.get("shape-ranges"), std::atoi(a.get("random-shapes", "2").c_str()), seed);
    std::vector<Shape> shapes = declared;
    shapes.insert(shapes.end(), drawn.begin(), drawn.end());
    const double timeout = std::atof(a.get("call-timeout", "30").c_str());
    auto workers = open_workers(a);
    Worker& w = *workers.front();

    // Every (shape, input set) once, in an order drawn from the seed.
    std::vector<std::pair<std::size_t, int>> order;
    for (std::size_t s = 0; s < shapes.size(); ++s)
        for (int t = 0; t < kTrials; ++t)
            order.emplace_back(s, t);
    Rng shuffle(derive_seed(seed, kStreamPick, 1));
    for (std::size_t i = order.size(); i > 1; --i)
        std::swap(order[i - 1], order[shuffle.next() % i]);
    std::vector<std::vector<Buffers>> got(shapes.size(), std::vector<Buffers>(kTrials));
    for (const auto& st : order) {
        const Shape& shape = shapes[st.first];
        Rng rng(derive_seed(seed, kStreamCheck, st.first * kTrials + static_cast<std::size_t>(st.second)));
        const Buffers in = p.make_inputs(shape, rng);
        CallOutcome r = call_once(p, w, shape, in, timeout);
        if (r.extra_threads > 0)
            reject_work_left_running(p, shape, r.extra_threads);
        if (r.modified.first >= 0)
            reject_modified(p, shape, r.modified);
        got[st.first][static_cast<std::size_t>(st.second)] = std::move(r.outputs);
    }
    w.exit_worker();

    double max_abs = 0, max_rel = 0, worst_ratio = 0;
    std::size_t checked = 0;
    std::vector<std::string> failures, bad_shapes, good_shapes, unwritten_shapes, nan_shapes;
    bool replayed = false;
    for (std::size_t s = 0; s < shapes.size(); ++s) {
        const auto dims = p.outputs(shapes[s]);
        std::vector<Buffers> refs;
        for (int t = 0; t < kTrials; ++t) {
            Rng rng(derive_seed(seed, kStreamCheck, s * kTrials + static_cast<std::size_t>(t)));
            refs.push_back(reference(p, shapes[s], p.make_inputs(shapes[s], rng)));
        }
        bool ok = true, unwritten = false, nan = false;
        std::string first;
        for (int t = 0; t < kTrials; ++t) {
            for (std::size_t o = 0; o < refs[t].size(); ++o) {
                const Comparison c = compare(got[s][t][o].data(), refs[t][o], tol, dims[o]);
                checked += c.checked;
                max_abs = std::max(max_abs, c.max_abs);
                max_rel = std::max(max_rel, c.max_rel);
                worst_ratio = std::max(worst_ratio, c.worst_ratio);
                if (c.bad == 0)
                    continue;
                ok = false;
                unwritten = unwritten || c.unwritten == c.checked;
                nan = nan || c.computed_nan > 0;
                for (int u = 0; u < kTrials && first.empty(); ++u)
                    if (u != t && compare(got[s][t][o].data(), refs[u][o], tol, dims[o]).bad == 0) {
                        first = "REPLAYED OUTPUT: at shape " + shapes[s].text() + " the output for input set " +
                                std::to_string(t) + " equals the correct result for input set " + std::to_string(u) +
                                ", i.e. the result of another call; results may not be cached or replayed across calls "
                                "(every call gets new inputs)";
                        replayed = true;
                    }
                if (first.empty())
                    first = describe_failure(p, shapes[s], "input set " + std::to_string(t), o, c, tol, dims[o]);
            }
        }
        const std::string label = shapes[s].text() + (s >= declared.size() ? " (drawn for this evaluation)" : "");
        (ok ? good_shapes : bad_shapes).push_back(label);
        if (unwritten)
            unwritten_shapes.push_back(shapes[s].text());
        if (nan)
            nan_shapes.push_back(shapes[s].text());
        if (!first.empty())
            failures.push_back(first);
    }
    json report{{"ok", failures.empty()},      {"rtol", tol.rtol},       {"atol", tol.atol},
                {"shapes", shapes.size()},     {"input_sets", kTrials},  {"elements_checked", checked},
                {"max_abs_err", max_abs},      {"max_rel_err", max_rel}, {"worst_err_over_allowed", worst_ratio},
                {"drawn_shapes", [&] {
                     std::vector<std::string> d;
                     for (const auto& s : drawn)
                         d.push_back(s.text());
                     return d;
                 }()},
                {"message", failures.empty() ? std::string() : failures.front()}};
    write_file(a.need("report"), report.dump(2) + "\n");
    if (failures.empty())
        return 0;
    std::vector<std::string> flags;
    std::string status = "incorrect";
    if (replayed) {
        status = "rejected";
        flags.push_back("outputs cached or replayed across calls");
    }
    auto joined = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& x : v)
            out += (out.empty() ? "" : "; ") + x;
        return out;
    };
    for (const auto& s : unwritten_shapes)
        flags.push_back("output never written at shape " + s);
    for (const auto& s : nan_shapes)
        flags.push_back("NaN computed at shape " + s);
    flags.push_back("wrong result at " + std::to_string(bad_shapes.size()) + " of " + std::to_string(shapes.size()) +
                    " shapes: " + joined(bad_shapes) +
                    (good_shapes.empty() ? std::string() : " (correct at " + joined(good_shapes) + ": special-cased shapes?)"));
    std::string log;
    for (const auto& f : failures)
        log += (log.empty() ? "" : "\n") + f;
    std::fprintf(stderr, "%s\n", log.c_str());
    write_result(a.need("result"), status, flags, {}, log);
    return 1;
}

// A batch of `count` calls with fresh inputs drawn from (stream, first index...): returns the
// judge's time per call in ms, checks inputs and threads, and keeps the outputs of calls chosen
// for checking.
struct BatchPlan {
    std::uint64_t stream;
    std::uint64_t next_index = 0;
};

struct Sample {
    std::uint64_t stream, index;
    Buffers outputs;
};

inline double timed_batch(const Problem& p, Worker& w, const Shape& shape, std::uint64_t seed, BatchPlan& plan,
                          std::size_t count, double timeout, std::vector<Sample>* keep, std::set<std::size_t> keep_slots,
                          double expected_ms = 0, double overhead_ns = 0) {
    std::vector<Buffers> inputs;
    for (std::size_t k = 0; k < count; ++k) {
        Rng rng(derive_seed(seed, plan.stream, plan.next_index + k));
        inputs.push_back(p.make_inputs(shape, rng));
    }
    const auto outs = output_counts(p, shape);
    w.layout(counts(inputs.front()), outs, count);
    for (std::size_t k = 0; k < count; ++k)
        w.fill(k, inputs[k]);
    // The protocol's own cost (an empty request, measured the same way) is taken off each batch.
    const double ns = std::max(0.0, w.run(channel::kCalls, static_cast<std::uint32_t>(count), shape.text(), timeout,
                                          expected_ms * 1e6 * static_cast<double>(count)) - overhead_ns);
    const int after = w.threads();
    if (after > w.baseline_threads())
        reject_work_left_running(p, shape, after - w.baseline_threads());
    for (std::size_t k = 0; k < count; ++k) {
        const auto m = w.modified(k, inputs[k]);
        if (m.first >= 0)
            reject_modified(p, shape, m);
        // Every timed call's output is looked at (the reference re-checks only some): an element
        // still holding the poison was never written, i.e. work was skipped on that call.
        for (std::size_t b = 0; b < outs.size(); ++b) {
            const float* o = w.out(k, b);
            for (std::size_t i = 0; i < outs[b]; ++i)
                if (is_poison(o[i]))
                    throw Failure("MISMATCH in " + p.name + " at shape " + shape.text() + ": timed call " +
                                  std::to_string(plan.next_index + k) + " left output " + std::to_string(b) + " element " +
                                  std::to_string(i) + " never written, although the correctness check passed");
        }
        if (keep && keep_slots.count(k)) {
            Sample s{plan.stream, plan.next_index + k, {}};
            for (std::size_t b = 0; b < outs.size(); ++b)
                s.outputs.emplace_back(w.out(k, b), w.out(k, b) + outs[b]);
            keep->push_back(std::move(s));
        }
    }
    plan.next_index += count;
    return ns * 1e-6 / static_cast<double>(count);
}

inline int mode_bench(const Problem& p, const Args& a) {
    const std::uint64_t seed = parse_seed(a.need("seed"));
    const Shape shape = shapes_for(p, a.need("shapes")).front();
    const Tolerance tol = parse_tolerance(a.need("tolerance"));
    const double timeout = std::atof(a.get("call-timeout", "60").c_str());
    auto workers = open_workers(a);
    const bool paired = workers.size() > 1;
    // Timed time: 2 s, or 4 s for a pair, whose rounds take as long as the slower of the two (on this
    // kind of VM a few more pairs narrow the ratio's spread more than longer single runs do).
    const double budget_ms = std::atof(a.get("budget-ms", paired ? "4000" : "2000").c_str());
    // With threads allowed the work may run in parallel, and only the wall clock is right.
    const bool wall = a.get("threads") == "1";
    for (auto& w : workers)
        w->use_wall_clock(wall);
    const std::size_t slot_bytes = [&] {
        Rng rng(1);
        std::size_t b = 0;
        for (const auto& x : p.make_inputs(shape, rng))
            b += channel::align_up(x.size() * sizeof(float));
        for (std::size_t n : output_counts(p, shape))
            b += channel::align_up(n * sizeof(float));
        return std::max<std::size_t>(b, channel::kSlotAlign);
    }();

    // The protocol's own cost: an empty request, timed the same way.
    std::vector<double> empty_ns;
    for (int i = 0; i < 50; ++i)
        empty_ns.push_back(workers[0]->run(channel::kEmpty, 0, shape.text(), timeout));
    const double overhead_ms = stats(empty_ns).median * 1e-6;

    // Warm-up and batch sizes: a batch lasts about two milliseconds or more, so the protocol's cost
    // (a few microseconds, measured above and taken off every batch) stays under half a percent of
    // what is timed; inputs are fresh for every call.
    std::vector<BatchPlan> plans;
    std::vector<std::size_t> batch;
    for (std::size_t i = 0; i < workers.size(); ++i) {
        plans.push_back({i == 0 ? kStreamBench : kStreamBaseline, 1000000});
        double per_call = 0;
        const auto w0 = clock::now();
        for (int calls = 0; calls < 20 && std::chrono::duration<double, std::milli>(clock::now() - w0).count() < 100.0; ++calls)
            per_call = timed_batch(p, *workers[i], shape, seed, plans[i], 1, timeout, nullptr, {}, 0, overhead_ms * 1e6);
        std::size_t r = per_call > 0 ? static_cast<std::size_t>(std::ceil(2.0 / per_call)) : 1;
        r = std::max<std::size_t>(1, std::min<std::size_t>({r, 1000, workers[i]->capacity(slot_bytes), (256u << 20) / slot_bytes + 1}));
        batch.push_back(r);
        plans[i].next_index = 0;
    }

    // Timed rounds. Paired: the candidate and its baseline alternate (ABBA), and each round's ratio
    // compares two batches timed a few milliseconds apart, so slow phases of the machine (another
    // tenant on the core's caches) move both. Calls to re-check are chosen here, at random.
    constexpr std::size_t kMinRounds = 6, kMaxRounds = 400;
    constexpr double kTargetHalfWidth = 0.005;
    Rng pick(derive_seed(seed, kStreamPick, 7));
    std::vector<std::vector<double>> times(workers.size());
    std::vector<double> ratios, probe_ns;
    std::vector<std::vector<Sample>> samples(workers.size());
    std::set<int> ran_on;
    const auto start = clock::now();
    auto last_probe = clock::now() - std::chrono::seconds(1);
    for (std::size_t round = 0; round < kMaxRounds; ++round) {
        std::vector<double> per_call(workers.size());
        for (std::size_t k = 0; k < workers.size(); ++k) {
            const std::size_t i = paired && (round % 2 == 1) ? workers.size() - 1 - k : k;
            // Keep about four calls of the candidate and two of the baseline for checking.
            // The candidate: one call from each of its first rounds, then from every other round on
            // average, at most 8 in all; the baseline: two.
            std::set<std::size_t> keep;
            const std::size_t kept = samples[i].size();
            const bool take = i == 0 ? kept < 8 && (round < 3 || pick.next() % 2 == 0) : kept < 2 && (round < 1 || pick.next() % 4 == 0);
            if (take)
                keep.insert(static_cast<std::size_t>(pick.next() % batch[i]));
            const double expected = times[i].empty() ? 0.0 : stats(std::vector<double>(times[i].end() - std::min<std::size_t>(times[i].size(), 5), times[i].end())).min;
            per_call[i] = timed_batch(p, *workers[i], shape, seed, plans[i], batch[i], timeout, &samples[i], keep, expected,
                                      overhead_ms * 1e6);
            times[i].push_back(per_call[i]);
            for (int c : workers[i]->ran_on())
                ran_on.insert(c);
        }
        if (paired)
            ratios.push_back(per_call[0] / per_call[1]);
        if (std::chrono::duration<double, std::milli>(clock::now() - last_probe).count() >= 5.0) {
            Worker& w = *workers[0];
            const double ns = w.run(channel::kProbe, 16384, shape.text(), timeout);
            probe_ns.push_back(std::max(0.0, ns - overhead_ms * 1e6) / 16384.0);
            last_probe = clock::now();
        }
        const double elapsed = std::chrono::duration<double, std::milli>(clock::now() - start).count();
        if (round + 1 >= kMinRounds) {
            bool converged;
            if (paired) {
                const RatioEstimate e = median_interval(ratios);
                converged = e.value > 0 && 0.5 * (e.high - e.low) / e.value < kTargetHalfWidth;
            } else {
                const Stats st = stats(times[0]);
                converged = st.mean > 0 && st.stddev / std::sqrt(static_cast<double>(st.n)) / st.mean < kTargetHalfWidth;
            }
            if (converged || elapsed > budget_ms)
                break;
        }
    }
    for (auto& w : workers)
        w->exit_worker();

    // Where the work ran, as the kernel saw it from /proc: every thread on the benchmark CPUs.
    const auto& allowed = workers[0]->cpus();
    std::vector<int> outside;
    for (int c : ran_on)
        if (std::find(allowed.begin(), allowed.end(), c) == allowed.end())
            outside.push_back(c);
    if (!outside.empty())
        throw Failure("CPU ESCAPE: the kernel's threads ran on CPU " + std::to_string(outside.front()) +
                      ", outside the benchmark's CPU set");

    // Re-check the chosen timed calls against the reference, with inputs regenerated here.
    std::size_t rechecked = 0;
    for (std::size_t i = 0; i < workers.size(); ++i) {
        for (const Sample& s : samples[i]) {
            Rng rng(derive_seed(seed, s.stream, s.index));
            const Buffers in = p.make_inputs(shape, rng);
            const Buffers ref = reference(p, shape, in);
            const auto dims = p.outputs(shape);
            for (std::size_t o = 0; o < ref.size(); ++o) {
                const Comparison c = compare(s.outputs[o].data(), ref[o], tol, dims[o]);
                if (c.bad > 0)
                    throw Failure("the output of a timed call of the " + workers[i]->label + " is wrong, although the "
                                  "correctness check passed: " +
                                  describe_failure(p, shape, "timed call " + std::to_string(s.index), o, c, tol, dims[o]));
            }
            ++rechecked;
        }
    }

    const Stats cand = stats(times[0]);
    json t{{"shape", shape.text()},
           {"latency_ms", stats_json(cand)},
           {"batch", batch[0]},
           {"sem_fraction", cand.mean > 0 ? cand.stddev / std::sqrt(static_cast<double>(cand.n)) / cand.mean : 0.0},
           {"overhead_ms", overhead_ms},
           {"clock", wall ? "wall" : "process cpu"},
           {"bench_cpus", allowed},
           {"ran_on", std::vector<int>(ran_on.begin(), ran_on.end())},
           {"rechecked_calls", rechecked},
           {"samples_ms", times[0]}};
    t["cpuset"] = workers[0]->in_cpuset();
    if (!probe_ns.empty()) {
        const Stats ps = stats(probe_ns);
        t["probe_ns"] = ps.median;
        t["probe_ns_min"] = ps.min;
        t["probes"] = ps.n;
    }
    if (paired) {
        const RatioEstimate e = median_interval(ratios);
        t["baseline_latency_ms"] = stats_json(stats(times[1]));
        t["baseline_batch"] = batch[1];
        const Stats b = stats(times[1]);
        t["paired_ratio"] = {{"value", e.value},
                             {"ci_low", e.low},
                             {"ci_high", e.high},
                             {"pairs", e.n},
                             {"ratio_of_minima", b.min > 0 ? cand.min / b.min : 0.0},
                             {"ratio_of_medians", b.median > 0 ? cand.median / b.median : 0.0}};
    }
    write_file(a.need("out"), t.dump(2) + "\n");
    return 0;
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

// One call at the smallest shape, with secret inputs, in a worker running under callgrind that
// counts from the entry point's exact symbol (callees included); the output is checked, then the
// worker exits and callgrind's file is read.
inline int mode_count(const Problem& p, const Args& a) {
    const std::uint64_t seed = parse_seed(a.need("seed"));
    const Tolerance tol = parse_tolerance(a.need("tolerance"));
    auto shapes = shapes_for(p, a.need("shapes"));
    const Shape shape = *std::min_element(shapes.begin(), shapes.end(), [&](const Shape& x, const Shape& y) {
        return (p.flops ? p.flops(x) : 0.0) + (p.bytes ? p.bytes(x) : 0.0) <
               (p.flops ? p.flops(y) : 0.0) + (p.bytes ? p.bytes(y) : 0.0);
    });
    auto workers = open_workers(a);
    Worker& w = *workers.front();
    Rng rng(derive_seed(seed, kStreamCount, 0));
    const Buffers in = p.make_inputs(shape, rng);
    CallOutcome r = call_once(p, w, shape, in, 600.0);
    if (r.modified.first >= 0)
        reject_modified(p, shape, r.modified);
    const Buffers ref = reference(p, shape, in);
    const auto dims = p.outputs(shape);
    for (std::size_t o = 0; o < ref.size(); ++o) {
        const Comparison c = compare(r.outputs[o].data(), ref[o], tol, dims[o]);
        if (c.bad > 0)
            throw Failure(describe_failure(p, shape, "the profiled call", o, c, tol, dims[o]));
    }
    w.exit_worker();
    const auto t0 = clock::now();
    while (w.root_alive() && std::chrono::duration<double>(clock::now() - t0).count() < 60)
        usleep(5000);
    const Profile prof = parse_callgrind(read_optional(a, "callgrind", 64 << 20));
    if (!prof.valid)
        throw std::runtime_error("callgrind wrote no count for the entry point");
    // A lower bound from the work: at most 32 flops per instruction (16-lane FMA).
    const double flops = p.flops ? p.flops(shape) : 0.0;
    if (flops > 0 && prof.instructions < flops / 32.0)
        throw Failure("IMPOSSIBLE COUNT: " + fmt("%.0f", prof.instructions) + " instructions for " + fmt("%.0f", flops) +
                      " flops at shape " + shape.text() + " (at most 32 flops per instruction): the count was tampered with");
    json out{{"shape", shape.text()}, {"instructions", prof.instructions}, {"d1_miss_rate", prof.d1_miss_rate},
             {"ll_miss_rate", prof.ll_miss_rate}, {"data_refs", prof.data_refs}};
    write_file(a.need("out"), out.dump(2) + "\n");
    return 0;
}

// GCC -fopt-info-vec-all remarks for the candidate's file, a few lines.
inline std::vector<std::string> vectorization_feedback(const std::string& remarks) {
    std::vector<std::string> out;
    auto parse = [](const std::string& text, const char* kind, auto&& each) {
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) {
            if (line.find("candidate.") == std::string::npos)
                continue;
            const auto c1 = line.find(':');
            const auto c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
            const auto c3 = c2 == std::string::npos ? c2 : line.find(':', c2 + 1);
            const auto c4 = c3 == std::string::npos ? c3 : line.find(':', c3 + 1);
            if (c4 == std::string::npos || trim(line.substr(c3 + 1, c4 - c3 - 1)) != kind)
                continue;
            each(std::atoi(line.c_str() + c1 + 1), trim(line.substr(c4 + 1)));
        }
    };
    std::map<int, std::string> vectorized, not_vectorized;
    parse(remarks, "optimized", [&](int l, const std::string& m) {
        if (m.find("vectorized") != std::string::npos && !vectorized.count(l))
            vectorized[l] = m;
    });
    parse(remarks, "missed", [&](int l, const std::string& m) {
        if (vectorized.count(l))
            return;
        const bool specific = m.find("not vectorized:") != std::string::npos || m.find("unsupported") != std::string::npos ||
                              m.find("dependence") != std::string::npos;
        auto& slot = not_vectorized[l];
        if (slot.empty() || (specific && slot.find("not vectorized:") == std::string::npos))
            slot = m;
    });
    int shown = 0;
    for (const auto& [l, m] : vectorized)
        if (shown++ < 3)
            out.push_back("vectorized: line " + std::to_string(l) + " (" + quote_untrusted(m, 160) + ")");
    shown = 0;
    for (const auto& [l, m] : not_vectorized)
        if (shown++ < 3)
            out.push_back("not vectorized: line " + std::to_string(l) + ": " + quote_untrusted(m, 160));
    if (out.empty() && !remarks.empty())
        out.push_back("compiler vectorization report: no loop in the candidate was vectorized or reported");
    return out;
}

inline double num(const json& j, const char* key, double fallback = 0.0) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

inline int mode_report(const Problem& p, const Args& a) {
    const json check = read_json(a.need("check"));
    const json timings = read_json(a.need("timings"));
    const Shape shape = shapes_for(p, a.need("shapes")).front();
    std::vector<std::string> flags, rejections, feedback;
    if (!check.value("ok", false))
        throw std::runtime_error("report: the correctness check did not pass");
    const json lat = timings.at("latency_ms");
    const Stats st{num(lat, "median"), num(lat, "mean"), num(lat, "p99"), num(lat, "min"), num(lat, "stddev"),
                   static_cast<std::size_t>(num(lat, "n"))};
    const double flops = p.flops ? p.flops(shape) : 0.0;
    const double bytes = p.bytes ? p.bytes(shape) : 0.0;
    const double seconds = st.median * 1e-3;
    const double gflops = seconds > 0 ? flops / seconds * 1e-9 : 0.0;
    const double gbps = seconds > 0 ? bytes / seconds * 1e-9 : 0.0;
    json metrics{{"latency_ms", stats_json(st)}, {"gflops", gflops}, {"gbps", gbps},
                 {"judge_overhead_us", num(timings, "overhead_ms") * 1e3}, {"calls_per_batch", num(timings, "batch", 1)}};

    feedback.push_back("median latency " + fmt("%.4g", st.median) + " ms at " + shape.text() + " (n=" + std::to_string(st.n) +
                       " batches timed by the judge (" + timings.value("clock", std::string("wall")) + " clock), " +
                       std::to_string(static_cast<long long>(num(timings, "batch", 1))) +
                       " call(s) per batch, fresh inputs for every call; min " + fmt("%.4g", st.min) + " ms, stddev " +
                       fmt("%.3g", st.stddev) + " ms)");
    if (timings.contains("paired_ratio")) {
        const json& r = timings["paired_ratio"];
        const json bl = timings.value("baseline_latency_ms", json::object());
        metrics["paired_ratio"] = r;
        metrics["baseline_latency_ms"] = num(bl, "median");
        feedback.push_back("against the baseline timed alternately in the same window: " + fmt("%.4g", num(r, "value")) +
                           "x its time (95% interval " + fmt("%.4g", num(r, "ci_low")) + "-" + fmt("%.4g", num(r, "ci_high")) +
                           ", " + std::to_string(static_cast<long long>(num(r, "pairs"))) + " pairs; baseline median " +
                           fmt("%.4g", num(bl, "median")) + " ms), i.e. a speedup of " +
                           fmt("%.3g", num(r, "value") > 0 ? 1.0 / num(r, "value") : 0.0) + "x");
    }
    if (flops > 0)
        feedback.push_back("achieved " + fmt("%.4g", gflops) + " GFLOP/s (" + p.dtype + ")");
    if (bytes > 0)
        feedback.push_back("effective bandwidth " + fmt("%.4g", gbps) + " GB/s counting compulsory traffic only (" +
                           fmt("%.3g", bytes / 1e6) + " MB)");
    if (flops > 0 && bytes > 0)
        feedback.push_back("arithmetic intensity " + fmt("%.3g", flops / bytes) + " flop/byte: " +
                           (flops / bytes > 10 ? "compute-bound when well blocked for cache" : "likely memory-bound"));
    const auto cpus = timings.value("bench_cpus", std::vector<int>{});
    if (cpus.size() == 1)
        feedback.push_back("benchmark on one CPU core (cpu " + std::to_string(cpus.front()) + ", " +
                           (timings.value("cpuset", false) ? "a cpuset" : "CPU affinity") + "): extra threads add no throughput");
    feedback.push_back("max error vs reference: abs " + fmt("%.3g", num(check, "max_abs_err")) + ", " +
                       fmt("%.3g", num(check, "worst_err_over_allowed") * 100) + "% of the allowed tolerance at worst");
    if (num(timings, "sem_fraction") >= 0.005)
        feedback.push_back("timing noisy: standard error " + fmt("%.2g", num(timings, "sem_fraction") * 100) + "% of the mean");

    const json roofline = read_json_optional(a, "roofline");
    if (timings.contains("probe_ns") && num(timings, "probe_ns") > 0) {
        double quiet = num(timings, "probe_ns_min");
        if (num(roofline, "probe_ns_quiet") > 0)
            quiet = std::min(quiet, num(roofline, "probe_ns_quiet"));
        const double interference = quiet > 0 ? num(timings, "probe_ns") / quiet : 1.0;
        metrics["cache_interference"] = interference;
        if (interference >= 1.05) {
            feedback.push_back("timed while another workload shared this core's caches: an L1-resident probe ran " +
                               fmt("%.2f", interference) + "x slower than when the core is quiet; absolute times can be off "
                               "by 10-30 %, the paired ratio much less");
            if (interference >= 1.15)
                flags.push_back("timed under cache interference (" + fmt("%.2f", interference) +
                                "x): an SMT sibling or another workload shared the core; the latency may be inflated");
        } else {
            feedback.push_back("no cache interference while timing (L1 probe at " + fmt("%.2f", interference) +
                               "x its quiet time)");
        }
    }
    if (num(roofline, "peak_gflops") > 0 && flops > 0 && bytes > 0 && gflops > 0) {
        double peak = num(roofline, "peak_gflops");
        const json vendor = read_json_optional(a, "vendor");
        if (num(vendor, "median_ms") > 0)
            peak = std::max(peak, flops / (num(vendor, "median_ms") * 1e-3) * 1e-9);
        const double bw_small = num(roofline, "bw_small_gbps"), bw_medium = num(roofline, "bw_medium_gbps");
        const double bw_dram = num(roofline, "bw_dram_gbps");
        const double bw = bytes <= num(roofline, "ws_small_bytes") ? bw_small
                          : bytes <= num(roofline, "ws_medium_bytes") ? bw_medium : bw_dram;
        const double ai = flops / bytes, bound = std::min(peak, ai * bw);
        metrics["roofline_fraction"] = gflops / bound;
        metrics["roofline_bound_gflops"] = bound;
        feedback.push_back("achieved " + fmt("%.1f", gflops / bound * 100) + "% of the roofline bound (" +
                           (peak <= ai * bw ? "compute bound: peak " + fmt("%.4g", peak) + " GFLOP/s on one core"
                                            : "memory bound: " + fmt("%.3g", ai) + " flop/byte x " + fmt("%.4g", bw) + " GB/s") +
                           ")");
        const double hard = std::min(peak, ai * std::max({bw_small, bw_medium, bw_dram}));
        if (gflops > 1.05 * hard)
            rejections.push_back("beyond the roofline bound: " + fmt("%.4g", gflops) + " GFLOP/s is " + fmt("%.2f", gflops / hard) +
                                 "x what this machine can do (" + fmt("%.4g", hard) + " GFLOP/s); the work is not real");
    } else if (flops > 0 && gflops > 2 * 16 * 2 * 6.0) {
        rejections.push_back("beyond the roofline bound: " + fmt("%.4g", gflops) + " GFLOP/s exceeds any single core's peak");
    }
    const json vendor = read_json_optional(a, "vendor");
    if (num(vendor, "median_ms") > 0) {
        const double v = num(vendor, "median_ms");
        metrics["vendor_latency_ms"] = v;
        metrics["speedup_vs_vendor"] = v / st.median;
        feedback.push_back(a.get("vendor-name", "vendor library") + ": " + fmt("%.4g", v) + " ms at " + shape.text() +
                           " on one core; this candidate runs at " + fmt("%.2f", v / st.median) + "x its speed");
    }
    for (const auto& line : vectorization_feedback(read_optional(a, "vec-remarks")))
        feedback.push_back(line);
    const json prof = read_json_optional(a, "profile");
    const std::string metric = a.get("metric", "latency_ms");
    if (num(prof, "instructions") > 0) {
        metrics["instructions"] = num(prof, "instructions");
        metrics["d1_miss_rate"] = num(prof, "d1_miss_rate");
        metrics["ll_miss_rate"] = num(prof, "ll_miss_rate");
        feedback.push_back("callgrind (one call at " + prof.value("shape", std::string()) + ", counted from the entry point, "
                           "callees included): " + fmt("%.6g", num(prof, "instructions")) + " instructions, D1 miss rate " +
                           fmt("%.2f", num(prof, "d1_miss_rate") * 100) + "%, LL miss rate " +
                           fmt("%.2f", num(prof, "ll_miss_rate") * 100) + "%");
    } else if (metric == "instructions") {
        throw std::runtime_error("no instruction count: the profile is missing");
    }
    for (const auto& r : rejections)
        flags.push_back(r);
    const bool ok = rejections.empty();
    const std::string log = ok ? "correct on " + std::to_string(static_cast<long long>(num(check, "shapes"))) + " shapes x " +
                                     std::to_string(static_cast<long long>(num(check, "input_sets"))) + " input sets (rtol=" +
                                     fmt("%g", num(check, "rtol")) + ", atol=" + fmt("%g", num(check, "atol")) + "); timed " +
                                     std::to_string(st.n) + " batches at " + shape.text() + ", " +
                                     std::to_string(static_cast<long long>(num(timings, "rechecked_calls"))) +
                                     " timed calls re-checked"
                               : "rejected: " + rejections.front();
    json r{{"status", ok ? "ok" : "rejected"}, {"correct", ok},     {"metrics", metrics}, {"bench_shape", shape.text()},
           {"feedback", feedback},            {"flags", flags},    {"log", log}};
    write_file(a.need("result"), r.dump(2) + "\n");
    if (!ok) {
        std::fprintf(stderr, "%s\n", log.c_str());
        return 1;
    }
    return 0;
}

// The linked implementation timed in this process (vendor baselines: trusted code only).
inline int mode_selftime(const Problem& p, const Args& a) {
    const Shape shape = shapes_for(p, a.need("shapes")).front();
    Rng rng(1);
    const Buffers in = p.make_inputs(shape, rng);
    Buffers out = make_outputs(p, shape);
    std::vector<double> times;
    const auto start = clock::now();
    for (int rep = 0; rep < 200 && (rep < 5 || std::chrono::duration<double>(clock::now() - start).count() < 2.0); ++rep) {
        const auto t0 = clock::now();
        p.call(shape, spans(in), spans(out));
        times.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    }
    const Stats st = stats(times);
    write_file(a.need("out"), json{{"shape", shape.text()}, {"median_ms", st.median}, {"min_ms", st.min}, {"n", st.n}}.dump(2) + "\n");
    return 0;
}

} // namespace judge

int harness_main(int argc, char** argv, const Problem& p) {
    using namespace judge;
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
    // A worker that dies must not take the judge with it through a broken pipe.
    std::signal(SIGPIPE, SIG_IGN);
    try {
        if (argc % 2 != 0)
            throw std::runtime_error("options must come in --key value pairs");
        try {
            if (a.mode == "lint")
                return mode_lint(a);
            if (a.mode == "gate")
                return mode_gate(a);
            if (a.mode == "check")
                return mode_check(p, a);
            if (a.mode == "bench")
                return mode_bench(p, a);
            if (a.mode == "count")
                return mode_count(p, a);
            if (a.mode == "report")
                return mode_report(p, a);
            if (a.mode == "selftime")
                return mode_selftime(p, a);
            if (a.mode == "entries") {
                for (const Entry& e : entries())
                    std::printf("%s\n", e.name);
                return 0;
            }
        } catch (const Failure& f) {
            const Verdict v = classify(f.what());
            std::fprintf(stderr, "%s\n", f.what());
            if (a.opts.count("result"))
                write_result(a.opts.at("result"), v.status, v.flags, {}, v.log);
            return 1;
        }
        throw std::runtime_error("unknown mode '" + a.mode + "'");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "autocomp judge (%s, mode %s): %s\n", p.name.c_str(), a.mode.c_str(), e.what());
        return 2;
    }
}

} // namespace autocomp

// autocomp_judge.h — the trusted side of the CPU target's evaluation (C++17, Linux x86-64), part of
// the C/C++ judge kit (backends/common/include), used by cpu, cpu-instructions, rvv and new C/C++
// targets (backends/README.md, "Writing a target with the kit").
//
// The judge is harness.cpp linked with the problem's reference and backends/common/src/judge_core.cpp,
// built into the per-machine cache. It is made of the kit's modules (autocomp/: untrusted I/O, shapes,
// comparison, statistics, timing rounds, result writer, mode table). Its modes (judge::cpu_modes, a
// table another target can start from), one per step of backends/cpu/backend.yaml:
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
#include "autocomp/compare.h"
#include "autocomp/modes.h"
#include "autocomp/result.h"
#include "autocomp/shapes.h"
#include "autocomp/stats.h"
#include "autocomp/timing.h"
#include "autocomp/untrusted_io.h"

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

using kit::Args;
using kit::fmt;
using kit::kTextCap;
using kit::parse_seed;
using kit::quote_untrusted;
using kit::read_optional;
using kit::read_untrusted;
using kit::write_file;
using kit::Tolerance;
using kit::parse_tolerance;
using kit::shapes_for;
using kit::index_text;
using kit::Comparison;
using kit::compare;
using kit::Stats;
using kit::stats;
using kit::median_of_sorted;
using kit::RatioEstimate;
using kit::median_interval;
using kit::Verdict;

inline Verdict classify(const std::string& msg);

// A failure of the candidate; its message says what kind (classify, below).
struct Failure : kit::CandidateFailure {
    using kit::CandidateFailure::CandidateFailure;
    Verdict verdict() const override { return classify(what()); }
};

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

// result.json through the kit's writer (autocomp/result.h), the metrics given as one JSON object.
inline void write_result(const std::string& path, const std::string& status, const std::vector<std::string>& flags,
                         const std::vector<std::string>& feedback, const std::string& log, const json& metrics = json::object()) {
    kit::Metrics m;
    if (metrics.is_object())
        for (auto it = metrics.begin(); it != metrics.end(); ++it)
            m.emplace_back(it.key(), it.value().dump());
    kit::write_result(path, status, status == "ok", m, feedback, flags, log);
}

inline std::vector<Shape> random_shapes(const Problem& p, const std::string& ranges, int count, std::uint64_t seed) {
    return kit::random_shapes(p, ranges, count, seed, kStreamShapes);
}

// ---------------------------------------------------------------------------------------------
// Comparing outputs with the reference.

using kit::is_poison;
inline float poison_value() { return kit::poison_value(kit::kPoisonBits); }

inline std::string describe_failure(const Problem& p, const Shape& shape, const std::string& which, std::size_t output,
                                    const Comparison& c, const Tolerance& tol, const Dims& dims) {
    return kit::describe_failure(p.name, shape, which, output, c, tol, dims);
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

inline json stats_json(const Stats& s) {
    return {{"median", s.median}, {"mean", s.mean}, {"p99", s.p99}, {"min", s.min}, {"stddev", s.stddev}, {"n", s.n}};
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

// A static check's verdict (lint, gate): `rejected`, one flag per kind of finding (`prefix` + kind),
// the first eight messages as feedback, all of them in the log and on stderr. 0 when there are no
// findings, else 1 with result.json written.
inline int reject(const Args& a, const std::string& prefix, const std::string& headline,
                  const std::vector<std::pair<std::string, std::string>>& findings) {
    if (findings.empty())
        return 0;
    std::vector<std::string> flags, feedback;
    std::string log = headline;
    for (const auto& [kind, message] : findings) {
        const std::string flag = prefix + kind;
        if (std::find(flags.begin(), flags.end(), flag) == flags.end())
            flags.push_back(flag);
        if (feedback.size() < 8)
            feedback.push_back(message);
        log += "\n  " + message;
    }
    std::fprintf(stderr, "%s\n", log.c_str());
    write_result(a.need("result"), "rejected", flags, feedback, log);
    return 1;
}

inline int reject_lint(const Args& a, const std::vector<lint::Finding>& findings) {
    std::vector<std::pair<std::string, std::string>> f;
    for (const auto& x : findings)
        f.emplace_back(x.flag, "line " + std::to_string(x.line) + ": " + x.message);
    return reject(a, "static check: ", "static check rejected the candidate:", f);
}

inline int reject_gate(const Args& a, const std::vector<gate::Finding>& findings) {
    std::vector<std::pair<std::string, std::string>> f;
    for (const auto& x : findings)
        f.emplace_back(x.flag, x.message);
    return reject(a, "gate: ", "the object-file gate rejected the candidate:", f);
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
    return reject_lint(a, findings);
}

// Walks `objdump -d` output read from `pipe`: on_line(line) for every line, then on_instruction(function,
// instruction) for each instruction line, `function` being the symbol whose code it is ("" before the first).
template <class OnLine, class OnInstruction>
inline void walk_disassembly(FILE* pipe, OnLine on_line, OnInstruction on_instruction) {
    char line[1024];
    std::string function;
    while (std::fgets(line, sizeof line, pipe)) {
        const std::string l = line;
        on_line(l);
        const auto lt = l.find('<');
        if (lt != std::string::npos && l.find(">:") != std::string::npos)
            function = l.substr(lt + 1, l.find(">:") - lt - 1);
        const auto tab = l.find('\t');
        if (tab != std::string::npos)
            on_instruction(function, trim(l.substr(tab + 1)));
    }
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
    walk_disassembly(pipe, [](const std::string&) {}, [&](const std::string& function, const std::string& insn) {
        if (insn == "syscall" || insn == "sysenter" || insn.rfind("int    $0x80", 0) == 0 || insn.rfind("int $0x80", 0) == 0)
            out.push_back(function.empty() ? std::string("?") : function);
    });
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
    return reject_gate(a, findings);
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
    // The protocol's own cost (an empty request, measured the same way) is taken off each batch, at most 1 %
    // of it (kit::net_batch_ns).
    const double ns = kit::net_batch_ns(w.run(channel::kCalls, static_cast<std::uint32_t>(count), shape.text(), timeout,
                                              expected_ms * 1e6 * static_cast<double>(count)),
                                        overhead_ns);
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
    // what is timed; inputs are fresh for every call. The size comes in two passes: single calls timed
    // whole (their median, the protocol's cost included, so never zero), then batches of the size they
    // suggest, whose per-call time no longer carries that cost; of those, the second counts (the first
    // also pays for the worker's first touch of the channel's pages).
    std::vector<BatchPlan> plans;
    std::vector<std::size_t> batch;
    for (std::size_t i = 0; i < workers.size(); ++i) {
        plans.push_back({i == 0 ? kStreamBench : kStreamBaseline, 1000000});
        const std::size_t most = std::min<std::size_t>({1000, workers[i]->capacity(slot_bytes), (256u << 20) / slot_bytes + 1});
        std::vector<double> single;
        const auto w0 = clock::now();
        for (int calls = 0; calls < 20 && std::chrono::duration<double, std::milli>(clock::now() - w0).count() < 100.0; ++calls)
            single.push_back(timed_batch(p, *workers[i], shape, seed, plans[i], 1, timeout, nullptr, {}, 0, 0));
        std::size_t n = kit::calls_per_batch(stats(single).median, 2.0, most);
        if (n > 1) {
            timed_batch(p, *workers[i], shape, seed, plans[i], n, timeout, nullptr, {}, 0, overhead_ms * 1e6);
            n = kit::calls_per_batch(timed_batch(p, *workers[i], shape, seed, plans[i], n, timeout, nullptr, {}, 0, overhead_ms * 1e6), 2.0,
                                     most);
        }
        batch.push_back(n);
        plans[i].next_index = 0;
    }

    // Timed rounds. Paired: the candidate and its baseline alternate (ABBA), and each round's ratio
    // compares two batches timed a few milliseconds apart, so slow phases of the machine (another
    // tenant on the core's caches) move both. Calls to re-check are chosen here, at random.
    kit::Rounds rounds(workers.size(), 6, 400, 0.005);
    Rng pick(derive_seed(seed, kStreamPick, 7));
    std::vector<double> probe_ns;
    std::vector<std::vector<Sample>> samples(workers.size());
    std::set<int> ran_on;
    const auto start = clock::now();
    auto last_probe = clock::now() - std::chrono::seconds(1);
    for (std::size_t round = 0; round < rounds.max_rounds(); ++round) {
        for (std::size_t k = 0; k < workers.size(); ++k) {
            const std::size_t i = rounds.arm(round, k);
            // Keep about four calls of the candidate and two of the baseline for checking.
            // The candidate: one call from each of its first rounds, then from every other round on
            // average, at most 8 in all; the baseline: two.
            std::set<std::size_t> keep;
            const std::size_t kept = samples[i].size();
            const bool take = i == 0 ? kept < 8 && (round < 3 || pick.next() % 2 == 0) : kept < 2 && (round < 1 || pick.next() % 4 == 0);
            if (take)
                keep.insert(static_cast<std::size_t>(pick.next() % batch[i]));
            rounds.add(i, timed_batch(p, *workers[i], shape, seed, plans[i], batch[i], timeout, &samples[i], keep, rounds.recent_min(i),
                                      overhead_ms * 1e6));
            for (int c : workers[i]->ran_on())
                ran_on.insert(c);
        }
        rounds.end_round();
        if (std::chrono::duration<double, std::milli>(clock::now() - last_probe).count() >= 5.0) {
            Worker& w = *workers[0];
            const double ns = w.run(channel::kProbe, 16384, shape.text(), timeout);
            probe_ns.push_back(kit::net_batch_ns(ns, overhead_ms * 1e6) / 16384.0);
            last_probe = clock::now();
        }
        if (rounds.done(round, std::chrono::duration<double, std::milli>(clock::now() - start).count(), budget_ms))
            break;
    }
    const std::vector<double>& times0 = rounds.times(0);
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

    const Stats cand = stats(times0);
    json t{{"shape", shape.text()},
           {"latency_ms", stats_json(cand)},
           {"batch", batch[0]},
           {"sem_fraction", cand.mean > 0 ? cand.stddev / std::sqrt(static_cast<double>(cand.n)) / cand.mean : 0.0},
           {"overhead_ms", overhead_ms},
           {"clock", wall ? "wall" : "process cpu"},
           {"bench_cpus", allowed},
           {"ran_on", std::vector<int>(ran_on.begin(), ran_on.end())},
           {"rechecked_calls", rechecked},
           {"samples_ms", times0}};
    t["cpuset"] = workers[0]->in_cpuset();
    if (!probe_ns.empty()) {
        const Stats ps = stats(probe_ns);
        t["probe_ns"] = ps.median;
        t["probe_ns_min"] = ps.min;
        t["probes"] = ps.n;
    }
    if (paired) {
        const RatioEstimate e = rounds.ratio();
        t["baseline_latency_ms"] = stats_json(stats(rounds.times(1)));
        t["baseline_batch"] = batch[1];
        const Stats b = stats(rounds.times(1));
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

// The one call of a counting mode (callgrind here, qemu's plugin for rvv): inputs from (seed,
// kStreamCount), the call checked against the reference like any other, then the worker is told to
// exit and given up to 60 s to do so, since the counter writes its file when the process ends.
inline void counted_call(const Problem& p, Worker& w, const Shape& shape, std::uint64_t seed, const Tolerance& tol,
                         const std::string& which) {
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
            throw Failure(describe_failure(p, shape, which, o, c, tol, dims[o]));
    }
    w.exit_worker();
    const auto t0 = clock::now();
    while (w.root_alive() && std::chrono::duration<double>(clock::now() - t0).count() < 60)
        usleep(5000);
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
    counted_call(p, w, shape, seed, tol, "the profiled call");
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

// The CPU judge's modes. A target that reuses this judge (rvv) starts from this table and replaces
// or removes entries; `p` must outlive the table.
inline kit::ModeTable cpu_modes(const Problem& p) {
    return {
        {"lint", [](const Args& a) { return mode_lint(a); }},
        {"gate", [](const Args& a) { return mode_gate(a); }},
        {"check", [&p](const Args& a) { return mode_check(p, a); }},
        {"bench", [&p](const Args& a) { return mode_bench(p, a); }},
        {"count", [&p](const Args& a) { return mode_count(p, a); }},
        {"report", [&p](const Args& a) { return mode_report(p, a); }},
        {"selftime", [&p](const Args& a) { return mode_selftime(p, a); }},
        {"entries", [](const Args&) {
             for (const Entry& e : entries())
                 std::printf("%s\n", e.name);
             return 0;
         }},
    };
}

} // namespace judge

#ifndef AUTOCOMP_JUDGE_MODES
// The CPU target's judge. A target with a table of its own defines AUTOCOMP_JUDGE_MODES and its own
// harness_main (see backends/rvv/tools/judge_core.cpp).
int harness_main(int argc, char** argv, const Problem& p) {
    return kit::run_modes(argc, argv, judge::cpu_modes(p), "judge", p.name);
}
#endif

} // namespace autocomp

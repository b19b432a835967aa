// autocomp_cuda_judge.h — the trusted side of the CUDA target (C++17, Linux, no CUDA needed).
//
// Built by the host compiler (tools/judge_core.cpp + the problem's harness.cpp + its reference) into
// the per-machine cache, from the C/C++ judge kit's modules (backends/common/include/autocomp/:
// untrusted I/O, shapes, comparison, statistics, result writer, mode table); what is here is the CUDA
// protocol, ptxas's report and the event-time checks. Its modes (judge::cuda_modes), one per step of
// backends/cuda/backend.yaml:
//
//   judge resources --ptxas ptxas.txt --object candidate.so --arch sm_90 --out resources.txt --result F
//   judge check  --channels 3 --worker-pids P --seed S --shapes SH --shape-ranges R --random-shapes N
//                --tolerance T --out check.txt --result F
//   judge bench  --channels 3 --worker-pids P --seed S --shapes SH --tolerance T --trials N --out timings.txt --result F
//   judge profile --channels 3 --worker-pids P --seed S --shapes SH --ncu-log ncu.csv --out ncu.txt  (worker under ncu)
//   judge report --resources resources.txt --check check.txt --timings timings.txt --shapes SH --arch A --result F
//                [--ncu ncu.txt]
//
// Exit status: 0 passed, 1 the candidate failed (result.json says why), 2 a fault of the harness or
// of the machine (no device, wrong architecture).
//
// What the judge trusts. Its own seed, inputs and reference; its own clock (CLOCK_MONOTONIC around
// each call: go -> returned); the files it wrote itself. What it does not: anything in the worker's
// process, which runs the candidate's code. The worker's cudaEvent time of a call is accepted only
// when it is not above the judge's wall time of the same call, and the median event time must not
// fall far below the judge's own estimate (wall time minus the measured cost of an empty call). A
// candidate that forges event times within that band is not caught: the band is the honest limit of
// timing a GPU from outside the process that owns it.
#pragma once

#include "autocomp_cuda_channel.h"
#include "autocomp_cuda_harness.h"
#include "autocomp/compare.h"
#include "autocomp/modes.h"
#include "autocomp/result.h"
#include "autocomp/shapes.h"
#include "autocomp/stats.h"
#include "autocomp/untrusted_io.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cxxabi.h>
#include <fcntl.h>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <csignal>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace autocomp {
namespace cuda {
namespace judge {

using clock = std::chrono::steady_clock;

constexpr int kTrials = 2;                   // input sets per shape in the correctness check
constexpr std::uint64_t kStreamCheck = 11;   // seed streams
constexpr std::uint64_t kStreamBench = 12;
constexpr std::uint64_t kStreamPick = 13;
constexpr std::uint64_t kStreamShapes = 14;

using kit::Args;
using kit::fmt;
using kit::json_number;
using kit::json_string;
using kit::read_untrusted;
using kit::write_file;
using kit::write_result;
inline std::string printable(const std::string& text, std::size_t cap = 2000) { return kit::quote_untrusted(text, cap); }

// A failure of the candidate: `status` for result.json, `what()` for its log.
struct Failure : kit::CandidateFailure {
    Failure(std::string s, const std::string& msg) : kit::CandidateFailure(msg), status(std::move(s)) {}
    kit::Verdict verdict() const override { return {status, {}, what()}; }
    std::string status;
};
// A fault of the harness or the machine (exit 2).
struct HarnessError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The judge's own intermediate files: "key value" lines; `feedback` and `flag` may repeat.
struct Record {
    std::multimap<std::string, std::string> values;
    void set(const std::string& k, const std::string& v) { values.emplace(k, v); }
    void set(const std::string& k, double v) { values.emplace(k, fmt("%.9g", v)); }
    std::string get(const std::string& k, const std::string& fallback = {}) const {
        const auto it = values.find(k);
        return it == values.end() ? fallback : it->second;
    }
    double num(const std::string& k, double fallback = std::numeric_limits<double>::quiet_NaN()) const {
        const auto it = values.find(k);
        return it == values.end() ? fallback : std::strtod(it->second.c_str(), nullptr);
    }
    std::vector<std::string> all(const std::string& k) const {
        std::vector<std::string> out;
        for (auto [it, end] = values.equal_range(k); it != end; ++it)
            out.push_back(it->second);
        return out;
    }
    std::string text() const {
        std::string out;
        for (const auto& kv : values) {
            std::string v = kv.second;
            std::replace(v.begin(), v.end(), '\n', ' ');
            out += kv.first + " " + v + "\n";
        }
        return out;
    }
    static Record load(const std::string& path) {
        Record r;
        std::ifstream in(path);
        for (std::string line; std::getline(in, line);) {
            const auto sp = line.find(' ');
            r.values.emplace(line.substr(0, sp), sp == std::string::npos ? std::string() : line.substr(sp + 1));
        }
        return r;
    }
};

using kit::parse_seed;
using kit::parse_tolerance;
using kit::shapes_for;
using kit::Tolerance;

inline std::vector<Shape> random_shapes(const Problem& p, const std::string& ranges, int count, std::uint64_t seed) {
    return kit::random_shapes(p, ranges, count, seed, kStreamShapes);
}

// ---------------------------------------------------------------------------------------------
// Outputs against the reference: the worker fills every output with all-ones bytes (a NaN no
// arithmetic produces) before the call.

constexpr std::uint32_t kPoisonBits = 0xFFFFFFFFu;

// Empty when every element passes; otherwise what a programmer needs to find the bug.
inline std::string compare(const Problem& p, const Shape& shape, const std::string& which, std::size_t output, const float* got,
                           const Buffer& ref, const Tolerance& tol, const Dims& dims) {
    const kit::Comparison c = kit::compare(got, ref, tol, dims, kPoisonBits);
    return c.ok() ? std::string() : kit::describe_failure(p.name, shape, which, output, c, tol, dims, "the worker");
}

inline Buffers reference(const Problem& p, const Shape& shape, const Buffers& in) {
    Buffers out;
    for (const auto& dims : p.outputs(shape)) {
        long long n = 1;
        for (const long long d : dims)
            n *= d;
        out.emplace_back(static_cast<std::size_t>(n), 0.0f);
    }
    p.reference(shape, in, out);
    for (const auto& b : out)
        for (const float x : b)
            if (!std::isfinite(x))
                throw HarnessError("the reference produced a non-finite value at shape " + shape.text());
    return out;
}

using kit::Stats;
using kit::stats;

// ---------------------------------------------------------------------------------------------
// The worker, seen from the judge.

class Worker {
public:
    Worker(int fd, pid_t pid) : m_pid(pid) {
        struct stat st;
        if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(kControlBytes + (1 << 20)))
            throw HarnessError("no channel on fd " + std::to_string(fd));
        m_size = static_cast<std::size_t>(st.st_size);
        void* mem = mmap(nullptr, m_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (mem == MAP_FAILED)
            throw HarnessError("cannot map the channel");
        m_base = static_cast<unsigned char*>(mem);
        m_c = static_cast<Control*>(mem);
        m_c->version = kVersion;
        std::atomic_thread_fence(std::memory_order_release);
        m_c->magic = kMagic;
    }

    bool alive() const {
        if (m_pid <= 0)
            return true;
        if (::kill(m_pid, 0) != 0)
            return false;
        std::ifstream stat("/proc/" + std::to_string(m_pid) + "/stat");
        std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
        const auto close = text.rfind(')');
        return close == std::string::npos || close + 2 >= text.size() || text[close + 2] != 'Z';
    }

    // Waits for the worker's hello; its failure message (untrusted text) is returned, empty on success.
    std::string hello(double timeout_s) {
        const auto start = clock::now();
        for (;;) {
            const std::uint32_t h = m_c->hello.load(std::memory_order_acquire);
            if (h == 1) {
                m_device = m_c->device;
                m_device.name[sizeof m_device.name - 1] = '\0';
                return {};
            }
            if (h == 2)
                return message();
            if (!alive())
                return "the worker exited before it was ready";
            if (std::chrono::duration<double>(clock::now() - start).count() > timeout_s)
                return "the worker was not ready after " + fmt("%.0f", timeout_s) + " s";
            channel::wait_while(&m_c->hello, h, 20000000L);
        }
    }

    const DeviceInfo& device() const { return m_device; }

    struct Outcome {
        int status = kOk;
        std::string message;
        double wall_ms = 0, event_ms = -1;
        std::uint32_t late_writes = 0;
        Buffers outputs, inputs_after;
    };

    // One call: inputs as the judge made them, outputs of `out_counts` elements.
    Outcome call(const Shape& shape, const Buffers& in, const std::vector<std::size_t>& out_counts, bool flush, double timeout_s,
                 std::uint32_t command = kCall) {
        Outcome o;
        std::size_t off = 0;
        m_c->command = command;
        m_c->flush = flush ? 1 : 0;
        m_c->n_in = static_cast<std::uint32_t>(in.size());
        m_c->n_out = static_cast<std::uint32_t>(out_counts.size());
        std::vector<std::size_t> in_off, out_off;
        for (std::size_t b = 0; b < in.size(); ++b) {
            in_off.push_back(off);
            off = align_up(off + in[b].size() * 4);
        }
        for (const std::size_t n : out_counts) {
            out_off.push_back(off);
            off = align_up(off + n * 4);
        }
        if (off > m_size - kControlBytes)
            throw HarnessError("shape " + shape.text() + " needs " + std::to_string(off >> 20) + " MiB, more than the channel holds");
        for (std::size_t b = 0; b < in.size(); ++b) {
            m_c->in_offset[b] = in_off[b];
            m_c->in_count[b] = in[b].size();
            std::memcpy(m_base + kControlBytes + in_off[b], in[b].data(), in[b].size() * 4);
        }
        for (std::size_t b = 0; b < out_counts.size(); ++b) {
            m_c->out_offset[b] = out_off[b];
            m_c->out_count[b] = out_counts[b];
        }
        const std::string text = shape.text();
        std::snprintf(m_c->shape, sizeof m_c->shape, "%s", text.c_str());
        const std::uint32_t seq = ++m_seq;
        m_c->request.store(seq, std::memory_order_release);
        channel::wake(&m_c->request);
        wait_for(&m_c->ready, seq, timeout_s, "preparing the call");
        const auto t0 = clock::now();
        m_c->go.store(seq, std::memory_order_release);
        for (std::uint64_t spins = 0; m_c->returned.load(std::memory_order_acquire) != seq; ++spins) {
            channel::cpu_relax();
            if ((spins & 0xFFFF) == 0) {
                if (!alive())
                    throw Failure("crash", "the worker process died " + std::string(shape.text().empty() ? "" : "at shape " + shape.text()) +
                                               " (see the worker's output below)");
                if (std::chrono::duration<double>(clock::now() - t0).count() > timeout_s)
                    throw Failure("timeout", "the call at shape " + shape.text() + " did not return within " + fmt("%.0f", timeout_s) + " s");
            }
        }
        o.wall_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
        wait_for(&m_c->done, seq, timeout_s, "finishing the call");
        o.status = m_c->status;
        o.message = message();
        o.event_ms = m_c->event_ms;
        o.late_writes = m_c->late_writes;
        for (std::size_t b = 0; b < out_counts.size(); ++b) {
            const float* src = reinterpret_cast<const float*>(m_base + kControlBytes + out_off[b]);
            o.outputs.emplace_back(src, src + out_counts[b]);
        }
        for (std::size_t b = 0; b < in.size(); ++b) {
            const float* src = reinterpret_cast<const float*>(m_base + kControlBytes + in_off[b]);
            o.inputs_after.emplace_back(src, src + in[b].size());
        }
        return o;
    }

    void exit() {
        m_c->command = kExit;
        m_c->request.store(++m_seq, std::memory_order_release);
        channel::wake(&m_c->request);
    }

private:
    std::string message() const {
        char buf[sizeof m_c->message + 1];
        std::memcpy(buf, m_c->message, sizeof m_c->message);
        buf[sizeof m_c->message] = '\0';
        return printable(buf, 1500);
    }

    void wait_for(std::atomic<std::uint32_t>* word, std::uint32_t seq, double timeout_s, const char* what) {
        const auto start = clock::now();
        for (;;) {
            const std::uint32_t v = word->load(std::memory_order_acquire);
            if (v == seq)
                return;
            if (!alive())
                throw Failure("crash", std::string("the worker process died while ") + what + " (see the worker's output below)");
            if (std::chrono::duration<double>(clock::now() - start).count() > timeout_s)
                throw Failure("timeout", std::string("the worker did not finish ") + what + " within " + fmt("%.0f", timeout_s) + " s");
            channel::wait_while(word, v, 2000000L);
        }
    }

    unsigned char* m_base = nullptr;
    std::size_t m_size = 0;
    Control* m_c = nullptr;
    pid_t m_pid = 0;
    std::uint32_t m_seq = 0;
    DeviceInfo m_device{};
};

inline std::unique_ptr<Worker> open_worker(const Args& a) {
    const auto fds = split(a.need("channels"), ',');
    const auto pids = split(a.get("worker-pids"), ',');
    if (fds.empty())
        throw HarnessError("no channel given");
    return std::make_unique<Worker>(std::atoi(fds[0].c_str()), pids.empty() ? 0 : static_cast<pid_t>(std::atoll(pids[0].c_str())));
}

inline std::vector<std::size_t> output_counts(const Problem& p, const Shape& s) {
    std::vector<std::size_t> out;
    for (const auto& dims : p.outputs(s)) {
        long long n = 1;
        for (const long long d : dims)
            n *= d;
        out.push_back(static_cast<std::size_t>(n));
    }
    return out;
}

// The worker's hello: a machine problem (no device, another architecture) is the harness's (exit
// 2); a candidate that does not load is a compile error.
inline void expect_hello(Worker& w) {
    const std::string why = w.hello(180.0);
    if (why.empty())
        return;
    if (why.find("cannot load the candidate") != std::string::npos || why.find("does not define") != std::string::npos ||
        why.find("loading the candidate's kernels") != std::string::npos)
        throw Failure("compile_error", "the worker could not load the candidate: " + why);
    throw HarnessError("the CUDA worker could not start: " + why);
}

// Checks what one call did besides its outputs: errors, inputs, work after return.
inline void check_call(const Problem& p, const Shape& shape, const std::string& which, const Worker::Outcome& o, const Buffers& in) {
    if (o.status == kDeviceLost || o.status == kCudaError)
        throw Failure("crash", "at shape " + shape.text() + " (" + which + "): " + o.message);
    if (o.status == kException)
        throw Failure("crash", o.message);
    if (o.status != kOk)
        throw HarnessError("the worker refused the request: " + o.message);
    for (std::size_t b = 0; b < in.size(); ++b)
        if (std::memcmp(in[b].data(), o.inputs_after[b].data(), in[b].size() * 4) != 0)
            throw Failure("rejected", "INPUT MODIFIED: input " + std::to_string(b) + " of " + p.name + " changed during the call at shape " +
                                          shape.text() + "; inputs are read-only");
    if (o.late_writes > 0)
        throw Failure("rejected", "WORK AFTER RETURN: " + std::to_string(o.late_writes) + " output elements of " + p.name +
                                      " changed after the entry returned (at shape " + shape.text() +
                                      "): work left running on another stream is not timed. Launch on the default stream, or "
                                      "synchronize every stream you use before returning.");
}

// ---------------------------------------------------------------------------------------------
// ptxas's resource report and the occupancy it allows.

struct ArchLimits {
    std::string arch;
    int regs_per_sm = 65536, max_threads = 2048, max_blocks = 32, smem_per_sm = 0, smem_per_block = 0;
    int fp32_lanes = 128;            // FP32 results per clock per SM / 2 (an FMA counts 2)
    int tensor_fp16_flops_clk = 0;   // dense fp16 tensor-core FLOPs per clock per SM
    bool known = false;
};

// Per-SM limits of the CUDA C++ Programming Guide's table of technical specifications per compute
// capability; 1 KB of shared memory per block is reserved for the system.
inline ArchLimits arch_limits(const std::string& arch) {
    ArchLimits l;
    l.arch = arch;
    if (arch == "sm_80") {
        l = {arch, 65536, 2048, 32, 164 * 1024, 163 * 1024, 64, 2048, true};
    } else if (arch == "sm_89") {
        l = {arch, 65536, 1536, 24, 100 * 1024, 99 * 1024, 128, 1024, true};
    } else if (arch == "sm_90") {
        l = {arch, 65536, 2048, 32, 228 * 1024, 227 * 1024, 128, 4096, true};
    }
    return l;
}

struct KernelResources {
    std::string name;          // mangled
    int registers = -1, barriers = 0;
    long smem = 0, cmem = 0, stack = 0, spill_stores = 0, spill_loads = 0, lmem = 0;
};

inline std::string demangle(const std::string& name) {
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
    std::string text = status == 0 && out ? std::string(out.get()) : name;
    return printable(text, 120);
}

inline long number_before(const std::string& line, const std::string& unit) {
    const auto at = line.find(unit);
    if (at == std::string::npos || at == 0)
        return -1;
    std::size_t b = at;
    while (b > 0 && line[b - 1] == ' ')
        --b;
    std::size_t e = b;
    while (b > 0 && std::isdigit(static_cast<unsigned char>(line[b - 1])))
        --b;
    return b < e ? std::atol(line.substr(b, e - b).c_str()) : -1;
}

// "ptxas info    : Compiling entry function '_Z3addPKfPfi' for 'sm_90'"
// "ptxas info    : Function properties for _Z3addPKfPfi"
// "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
// "ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem, 352 bytes cmem[0]"
inline std::vector<KernelResources> parse_ptxas(const std::string& text) {
    std::vector<KernelResources> kernels;
    std::map<std::string, KernelResources> props;  // "Function properties" blocks, by name
    std::string current, props_of;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        const auto quote = [&](const std::string& after) {
            const auto at = line.find(after);
            if (at == std::string::npos)
                return std::string();
            const auto b = line.find('\'', at), e = b == std::string::npos ? b : line.find('\'', b + 1);
            return b == std::string::npos || e == std::string::npos ? std::string() : line.substr(b + 1, e - b - 1);
        };
        if (line.find("Compiling entry function") != std::string::npos) {
            current = quote("Compiling entry function");
            kernels.push_back({});
            kernels.back().name = current;
            continue;
        }
        if (const auto at = line.find("Function properties for "); at != std::string::npos) {
            props_of = trim(line.substr(at + 24));
            continue;
        }
        if (line.find("bytes stack frame") != std::string::npos && !props_of.empty()) {
            KernelResources& r = props[props_of];
            r.stack = std::max(0L, number_before(line, "bytes stack frame"));
            r.spill_stores = std::max(0L, number_before(line, "bytes spill stores"));
            r.spill_loads = std::max(0L, number_before(line, "bytes spill loads"));
            continue;
        }
        if (line.find("Used ") != std::string::npos && line.find(" registers") != std::string::npos && !kernels.empty() &&
            kernels.back().registers < 0) {
            KernelResources& k = kernels.back();
            k.registers = static_cast<int>(number_before(line, " registers"));
            k.barriers = static_cast<int>(std::max(0L, number_before(line, " barriers")));
            k.smem = std::max(0L, number_before(line, " bytes smem"));
            k.lmem = std::max(0L, number_before(line, " bytes lmem"));
            for (std::size_t at = line.find("bytes cmem"); at != std::string::npos; at = line.find("bytes cmem", at + 1))
                k.cmem += std::max(0L, number_before(line.substr(0, at + 10), "bytes cmem"));
        }
    }
    for (auto& k : kernels) {
        const auto it = props.find(k.name);
        if (it != props.end()) {
            k.stack = it->second.stack;
            k.spill_stores = it->second.spill_stores;
            k.spill_loads = it->second.spill_loads;
        }
    }
    return kernels;
}

struct Occupancy {
    int blocks = 0;
    double fraction = 0;
    std::string limit;
};

inline Occupancy occupancy(const ArchLimits& l, const KernelResources& k, int threads) {
    Occupancy o;
    const int warps = (threads + 31) / 32;
    const int max_warps = l.max_threads / 32;
    const int regs = std::max(1, k.registers);
    const int regs_per_warp = (regs * 32 + 255) / 256 * 256;  // allocated per warp, 256 at a time
    if (static_cast<long>(regs_per_warp) * warps > l.regs_per_sm) {
        o.limit = "registers (cannot launch)";
        return o;
    }
    const int by_regs = (l.regs_per_sm / regs_per_warp) / warps;
    const int by_threads = l.max_threads / threads;
    const int by_smem = k.smem > 0 ? static_cast<int>(l.smem_per_sm / (k.smem + 1024)) : l.max_blocks;
    o.blocks = std::min({l.max_blocks, by_regs, by_threads, by_smem});
    o.fraction = static_cast<double>(o.blocks * warps) / max_warps;
    o.limit = o.blocks == by_regs && by_regs < std::min({l.max_blocks, by_threads, by_smem}) ? "registers"
              : o.blocks == by_smem && by_smem < std::min(l.max_blocks, by_threads)      ? "shared memory"
              : o.blocks == by_threads && by_threads < l.max_blocks                      ? "threads per SM"
                                                                                          : "blocks per SM";
    return o;
}

inline std::vector<std::string> resource_feedback(const std::vector<KernelResources>& kernels, const ArchLimits& l) {
    std::vector<std::string> lines;
    for (const auto& k : kernels) {
        if (k.registers < 0)
            continue;
        std::string line = "kernel " + demangle(k.name) + ": " + std::to_string(k.registers) + " registers/thread, " +
                           std::to_string(k.smem) + " B static shared memory, " + std::to_string(k.cmem) + " B constant, " +
                           std::to_string(k.stack) + " B stack frame, spills " + std::to_string(k.spill_stores) + " B stored / " +
                           std::to_string(k.spill_loads) + " B loaded";
        if (l.known) {
            line += "; theoretical occupancy on " + l.arch + " at 128/256/512/1024 threads per block: ";
            std::string limits;
            for (const int t : {128, 256, 512, 1024}) {
                const Occupancy o = occupancy(l, k, t);
                line += (t == 128 ? "" : "/") + (o.blocks == 0 ? std::string("none") : fmt("%.0f%%", 100 * o.fraction));
                if (t == 256)
                    limits = o.limit;
            }
            line += " (at 256 limited by " + limits + "; dynamic shared memory not counted)";
        }
        lines.push_back(line);
        if (k.spill_stores > 0 || k.spill_loads > 0)
            lines.push_back("REGISTER SPILLS in " + demangle(k.name) + ": " + std::to_string(k.spill_stores) + " B stored to and " +
                            std::to_string(k.spill_loads) + " B loaded from local memory per thread; fewer live values, smaller "
                            "per-thread tiles or a looser __launch_bounds__ would keep them in registers");
        else if (k.stack > 0)
            lines.push_back("kernel " + demangle(k.name) + " keeps a " + std::to_string(k.stack) +
                            " B per-thread stack frame in local memory (an array indexed at run time, or a call)");
    }
    return lines;
}

// Functions a candidate's shared object may not import: processes, files, sockets, loading code,
// timers and events the harness owns, other devices, libraries outside the CUDA runtime.
inline std::string forbidden_import(const std::string& sym) {
    static const char* exact[] = {"fork", "vfork", "clone", "clone3", "execve", "execv", "execvp", "execl", "execlp", "system",
                                  "popen", "posix_spawn", "posix_spawnp", "socket", "connect", "dlopen", "dlmopen", "dlsym",
                                  "ptrace", "process_vm_writev", "process_vm_readv", "kill", "mprotect", "syscall", "open",
                                  "open64", "openat", "fopen", "fopen64", "pthread_create", "cudaDeviceReset", "cudaSetDevice",
                                  "cudaEventElapsedTime", "cudaEventRecord", "cudaEventRecordWithFlags", "cudaProfilerStart",
                                  "cudaProfilerStop", "cudaDeviceSetLimit"};
    for (const char* e : exact)
        if (sym == e)
            return sym;
    for (const char* prefix : {"cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver", "nccl", "cuGetProcAddress"})
        if (sym.rfind(prefix, 0) == 0)
            return sym;
    return {};
}

inline std::string run_capture(const std::vector<std::string>& argv) {
    int pipefd[2];
    if (pipe(pipefd) != 0)
        return {};
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 1);
        ::close(pipefd[0]);
        ::close(pipefd[1]);
        std::vector<char*> args;
        for (const auto& s : argv)
            args.push_back(const_cast<char*>(s.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    ::close(pipefd[1]);
    std::string out;
    char buf[65536];
    for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0 && out.size() < (16u << 20);)
        out.append(buf, static_cast<std::size_t>(n));
    ::close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return out;
}

inline int mode_resources(const Args& a) {
    const ArchLimits l = arch_limits(a.need("arch"));
    const auto kernels = parse_ptxas(read_untrusted(a.need("ptxas")));
    std::vector<std::string> feedback = resource_feedback(kernels, l);
    if (!l.known)
        feedback.push_back("no occupancy figures: architecture " + a.need("arch") + " is not one of sm_80, sm_89, sm_90");
    // The object's imports, read by nm as data.
    const std::string object = a.get("object");
    if (!object.empty()) {
        const std::string nm = run_capture({"nm", "-D", "--undefined-only", object});
        std::istringstream in(nm);
        for (std::string line; std::getline(in, line);) {
            std::string sym = trim(line);
            const auto sp = sym.rfind(' ');
            sym = sp == std::string::npos ? sym : sym.substr(sp + 1);
            sym = sym.substr(0, sym.find('@'));
            if (const std::string bad = forbidden_import(sym); !bad.empty()) {
                write_result(a.need("result"), "rejected", false, {}, feedback, {"forbidden import: " + bad},
                             "REJECTED: the candidate calls " + bad +
                                 ", which a kernel may not use (no processes, files, sockets, code loading, device or timer "
                                 "control, or libraries besides the CUDA runtime)");
                return 1;
            }
        }
    }
    Record r;
    long max_regs = 0, spills = 0;
    for (const auto& k : kernels) {
        max_regs = std::max<long>(max_regs, k.registers);
        spills += k.spill_stores + k.spill_loads;
    }
    r.set("kernels", static_cast<double>(kernels.size()));
    r.set("max_registers", static_cast<double>(max_regs));
    r.set("spill_bytes", static_cast<double>(spills));
    for (const auto& f : feedback)
        r.set("feedback", f);
    write_file(a.need("out"), r.text());
    // What an evaluation without a GPU ends with: the compile report, not yet a verdict.
    if (kernels.empty())
        feedback.push_back("ptxas reported no kernel: the file defines no __global__ function");
    write_result(a.need("result"), "ok", false,
                 {{"kernels", json_number(static_cast<double>(kernels.size()))},
                  {"max_registers", json_number(static_cast<double>(max_regs))},
                  {"spill_bytes", json_number(static_cast<double>(spills))}},
                 feedback, {}, "compiled for " + l.arch + " by nvcc; ptxas resource usage in the feedback");
    return 0;
}

// ---------------------------------------------------------------------------------------------
// check, bench, report

inline void device_record(Record& r, const DeviceInfo& d) {
    r.set("device", std::string(d.name));
    r.set("cc", std::to_string(d.cc_major) + std::to_string(d.cc_minor));
    r.set("sm_count", d.sm_count);
    r.set("clock_khz", d.clock_khz);
    r.set("mem_clock_khz", d.mem_clock_khz);
    r.set("bus_width_bits", d.bus_width_bits);
    r.set("l2_bytes", d.l2_bytes);
    r.set("smem_per_sm", d.smem_per_sm);
    r.set("max_threads_per_sm", d.max_threads_per_sm);
    r.set("max_blocks_per_sm", d.max_blocks_per_sm);
    r.set("regs_per_sm", d.regs_per_sm);
    r.set("copy_gbps", d.copy_gbps);
    r.set("flush_bytes", static_cast<double>(d.flush_bytes));
    r.set("driver_version", d.driver_version);
}

inline int mode_check(const Problem& p, const Args& a) {
    const std::uint64_t seed = parse_seed(a.need("seed"));
    const Tolerance tol = parse_tolerance(a.need("tolerance"));
    std::vector<Shape> shapes = shapes_for(p, a.need("shapes"));
    for (auto& s : random_shapes(p, a.get("shape-ranges"), std::atoi(a.get("random-shapes", "0").c_str()), seed))
        shapes.push_back(s);
    auto w = open_worker(a);
    expect_hello(*w);
    const double timeout = std::atof(a.get("call-timeout", "60").c_str());
    std::size_t index = 0;
    for (const Shape& shape : shapes) {
        for (int trial = 0; trial < kTrials; ++trial, ++index) {
            Rng rng(derive_seed(seed, kStreamCheck, index));
            const Buffers in = p.make_inputs(shape, rng);
            const auto o = w->call(shape, in, output_counts(p, shape), false, timeout);
            const std::string which = "input set " + std::to_string(trial + 1);
            check_call(p, shape, which, o, in);
            const Buffers ref = reference(p, shape, in);
            const auto dims = p.outputs(shape);
            for (std::size_t b = 0; b < ref.size(); ++b)
                if (const std::string bad = compare(p, shape, which, b, o.outputs[b].data(), ref[b], tol, dims[b]); !bad.empty())
                    throw Failure("incorrect", bad);
        }
    }
    w->exit();
    Record r;
    device_record(r, w->device());
    std::string list;
    for (const auto& s : shapes)
        list += (list.empty() ? "" : "; ") + s.text();
    r.set("checked", std::to_string(shapes.size()) + " shapes x " + std::to_string(kTrials) + " input sets (" + list + ")");
    write_file(a.need("out"), r.text());
    return 0;
}

inline int mode_bench(const Problem& p, const Args& a) {
    const std::uint64_t seed = parse_seed(a.need("seed"));
    const Tolerance tol = parse_tolerance(a.need("tolerance"));
    const Shape shape = shapes_for(p, a.need("shapes")).at(0);
    const int trials = std::max(5, std::atoi(a.get("trials", "30").c_str()));
    const double timeout = std::atof(a.get("call-timeout", "60").c_str());
    auto w = open_worker(a);
    expect_hello(*w);
    const auto counts = output_counts(p, shape);
    // The cost of a call that does nothing: the channel, a launch, the events, the snapshot.
    std::vector<double> empty_wall;
    for (int i = 0; i < 15; ++i) {
        const auto o = w->call(shape, {}, {}, true, timeout, kEmpty);
        if (o.status != kOk)
            throw HarnessError("an empty call failed: " + o.message);
        if (i >= 3)
            empty_wall.push_back(o.wall_ms);
    }
    // Which timed calls the judge checks, drawn from its seed.
    Rng pick(derive_seed(seed, kStreamPick, 0));
    const std::size_t check_a = static_cast<std::size_t>(pick.between(0, trials - 1));
    const std::size_t check_b = static_cast<std::size_t>(pick.between(0, trials - 1));
    std::vector<double> events, walls, gaps;
    for (int i = -3; i < trials; ++i) {
        const std::size_t index = static_cast<std::size_t>(i + 3);
        Rng rng(derive_seed(seed, kStreamBench, index));
        const Buffers in = p.make_inputs(shape, rng);
        const auto o = w->call(shape, in, counts, true, timeout);
        check_call(p, shape, i < 0 ? "warm-up" : "timed call " + std::to_string(i + 1), o, in);
        if (i >= 0 && (static_cast<std::size_t>(i) == check_a || static_cast<std::size_t>(i) == check_b)) {
            const Buffers ref = reference(p, shape, in);
            const auto dims = p.outputs(shape);
            for (std::size_t b = 0; b < ref.size(); ++b)
                if (const std::string bad = compare(p, shape, "timed call " + std::to_string(i + 1), b, o.outputs[b].data(), ref[b], tol, dims[b]);
                    !bad.empty())
                    throw Failure("incorrect", bad);
        }
        if (i < 0)
            continue;
        if (!(o.event_ms >= 0) || o.event_ms > o.wall_ms + 0.002)
            throw Failure("rejected", "TIMING INCONSISTENT: the worker reported " + fmt("%.4f", o.event_ms) + " ms for a call the judge's clock saw take " +
                                          fmt("%.4f", o.wall_ms) + " ms");
        events.push_back(o.event_ms);
        walls.push_back(o.wall_ms);
    }
    w->exit();
    const Stats ev = stats(events), wall = stats(walls), empty = stats(empty_wall);
    const double judge_estimate = wall.median - empty.median;
    if (ev.median < 0.5 * judge_estimate - 0.05)
        throw Failure("rejected", "TIMING INCONSISTENT: median cudaEvent time " + fmt("%.4f", ev.median) + " ms, but the judge's clock saw " +
                                      fmt("%.4f", wall.median) + " ms per call against " + fmt("%.4f", empty.median) +
                                      " ms for an empty call: the kernel's work was not between the events");
    Record r;
    device_record(r, w->device());
    r.set("shape", shape.text());
    r.set("event_median", ev.median);
    r.set("event_mean", ev.mean);
    r.set("event_min", ev.min);
    r.set("event_p99", ev.p99);
    r.set("event_stddev", ev.stddev);
    r.set("event_n", static_cast<double>(ev.n));
    r.set("wall_median", wall.median);
    r.set("empty_median", empty.median);
    write_file(a.need("out"), r.text());
    return 0;
}

// ---------------------------------------------------------------------------------------------
// profile: one call under Nsight Compute (the worker runs under ncu, which writes its CSV when the
// worker exits); the CSV is the candidate step's file, parsed as data.

inline std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (quoted) {
            if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                cur += '"';
                ++i;
            } else if (ch == '"') {
                quoted = false;
            } else {
                cur += ch;
            }
        } else if (ch == '"') {
            quoted = true;
        } else if (ch == ',') {
            out.push_back(cur);
            cur.clear();
        } else if (ch != '\r') {
            cur += ch;
        }
    }
    out.push_back(cur);
    return out;
}

struct NcuMetric {
    const char* name;
    const char* label;
};

inline const std::vector<NcuMetric>& ncu_metrics() {
    static const std::vector<NcuMetric> s_metrics = {
        {"gpu__time_duration.sum", "duration"},
        {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput"},
        {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput"},
        {"sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy"},
        {"l1tex__t_sector_hit_rate.pct", "L1 hit rate"},
        {"lts__t_sector_hit_rate.pct", "L2 hit rate"}};
    return s_metrics;
}

// "kernel K: duration 12.3 us, SM throughput 45.1 %, ..." per kernel, in the order ncu saw them.
inline std::vector<std::string> parse_ncu_csv(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::vector<std::string> header;
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> values;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("\"ID\"", 0) == 0) {
            header = csv_fields(line);
            continue;
        }
        if (header.empty() || line.empty() || line[0] != '"')
            continue;
        const auto f = csv_fields(line);
        const auto col = [&](const char* name) -> std::string {
            for (std::size_t i = 0; i < header.size() && i < f.size(); ++i)
                if (header[i] == name)
                    return f[i];
            return {};
        };
        const std::string kernel = printable(col("Kernel Name"), 100), id = col("ID");
        const std::string key = id + " " + kernel;
        if (!values.count(key))
            order.push_back(key);
        std::string value = col("Metric Value");
        value.erase(std::remove(value.begin(), value.end(), ','), value.end());
        for (const auto& m : ncu_metrics())
            if (col("Metric Name") == m.name)
                values[key].push_back({m.label, printable(value, 20) + " " + printable(col("Metric Unit"), 12)});
    }
    for (const auto& key : order) {
        if (lines.size() >= 8)
            break;
        std::string line = "ncu, kernel " + key.substr(key.find(' ') + 1) + ":";
        for (const auto& m : ncu_metrics())
            for (const auto& [label, value] : values[key])
                if (label == m.label)
                    line += std::string(" ") + label + " " + trim(value) + ",";
        if (!line.empty() && line.back() == ',')
            line.pop_back();
        lines.push_back(line);
    }
    return lines;
}

inline int mode_profile(const Problem& p, const Args& a) {
    const std::uint64_t seed = parse_seed(a.need("seed"));
    const Shape shape = shapes_for(p, a.need("shapes")).at(0);
    auto w = open_worker(a);
    expect_hello(*w);
    Rng rng(derive_seed(seed, kStreamBench, 1000));
    const Buffers in = p.make_inputs(shape, rng);
    const auto o = w->call(shape, in, output_counts(p, shape), true, 300.0);
    check_call(p, shape, "profiled call", o, in);
    w->exit();
    // ncu writes its report when the profiled process ends.
    const auto start = clock::now();
    while (w->alive() && std::chrono::duration<double>(clock::now() - start).count() < 300)
        usleep(20000);
    const auto lines = parse_ncu_csv(read_untrusted(a.need("ncu-log"), 4u << 20));
    if (lines.empty())
        throw HarnessError("ncu's report names no kernel of the candidate");
    Record r;
    for (const auto& l : lines)
        r.set("feedback", l);
    write_file(a.need("out"), r.text());
    return 0;
}

inline double peak_fp32_tflops(const Record& dev, const ArchLimits& l) {
    return dev.num("sm_count") * dev.num("clock_khz") * 1e3 * l.fp32_lanes * 2 / 1e12;
}

inline int mode_report(const Problem& p, const Args& a) {
    const Record res = Record::load(a.need("resources"));
    const Record chk = Record::load(a.need("check"));
    const Record tim = Record::load(a.need("timings"));
    const Shape shape = shapes_for(p, a.need("shapes")).at(0);
    const ArchLimits l = arch_limits(a.need("arch"));
    const double ms = tim.num("event_median");
    if (!(ms > 0))
        throw HarnessError("timings.json has no event time");
    std::vector<std::string> feedback = res.all("feedback"), flags;
    std::vector<std::pair<std::string, std::string>> metrics;
    metrics.push_back({"latency_ms", "{\"median\": " + json_number(ms) + ", \"mean\": " + json_number(tim.num("event_mean")) +
                                         ", \"min\": " + json_number(tim.num("event_min")) + ", \"p99\": " + json_number(tim.num("event_p99")) +
                                         ", \"stddev\": " + json_number(tim.num("event_stddev")) + ", \"n\": " + json_number(tim.num("event_n")) + "}"});
    metrics.push_back({"judge_wall_ms", json_number(tim.num("wall_median"))});
    for (const char* key : {"kernels", "max_registers", "spill_bytes"})
        metrics.push_back({key, json_number(res.num(key))});
    metrics.push_back({"empty_call_ms", json_number(tim.num("empty_median"))});
    const double flops = p.flops ? p.flops(shape) : 0, bytes = p.bytes ? p.bytes(shape) : 0;
    const double tflops = flops / (ms * 1e-3) / 1e12, gbps = bytes / (ms * 1e-3) / 1e9;
    const double peak_bw = tim.num("mem_clock_khz") * 1e3 * 2 * tim.num("bus_width_bits") / 8 / 1e9;
    const double copy = tim.num("copy_gbps");
    metrics.push_back({"tflops", json_number(tflops)});
    metrics.push_back({"gbps", json_number(gbps)});
    metrics.push_back({"copy_gbps", json_number(copy)});
    std::string device = tim.get("device") + " (sm_" + tim.get("cc") + ", " + fmt("%.0f", tim.num("sm_count")) + " SMs at " +
                         fmt("%.0f", tim.num("clock_khz") / 1000) + " MHz)";
    if (l.known) {
        const double fp32 = peak_fp32_tflops(tim, l);
        const double tensor = tim.num("sm_count") * tim.num("clock_khz") * 1e3 * l.tensor_fp16_flops_clk / 1e12;
        const bool half = p.dtype == "fp16" || p.dtype == "bf16";
        const double peak = half ? tensor : fp32;
        feedback.push_back("achieved " + fmt("%.2f", tflops) + " TFLOP/s at " + shape.text() + ": " + fmt("%.1f", 100 * tflops / peak) +
                           "% of the " + (half ? "dense fp16 tensor-core" : "fp32 CUDA-core") + " peak of " + fmt("%.0f", peak) +
                           " TFLOP/s of " + device);
        metrics.push_back({"compute_fraction", json_number(tflops / peak)});
        if (tflops > 1.05 * (half ? tensor : std::max(fp32, tensor)))
            flags.push_back("throughput above the device's compute peak: " + fmt("%.1f", tflops) + " TFLOP/s");
    }
    feedback.push_back("compulsory memory traffic " + fmt("%.0f", gbps) + " GB/s: " + fmt("%.1f", 100 * gbps / copy) +
                       "% of the measured device-to-device copy (" + fmt("%.0f", copy) + " GB/s; theoretical " + fmt("%.0f", peak_bw) +
                       " GB/s)");
    metrics.push_back({"memory_fraction", json_number(gbps / copy)});
    if (gbps > 1.1 * std::max(copy, peak_bw))
        flags.push_back("bandwidth above the device's roofline: " + fmt("%.0f", gbps) + " GB/s of compulsory traffic");
    feedback.push_back("timing: median of " + fmt("%.0f", tim.num("event_n")) + " calls by CUDA events, " +
                       fmt("%.0f", tim.num("flush_bytes") / 1048576) + " MiB L2 flush and fresh inputs before each; the judge's clock saw " +
                       fmt("%.4f", tim.num("wall_median")) + " ms per call including " + fmt("%.4f", tim.num("empty_median")) +
                       " ms for an empty call");
    for (const auto& f : Record::load(a.get("ncu", "/nonexistent")).all("feedback"))
        feedback.push_back(f);
    write_result(a.need("result"), "ok", true, metrics, feedback, flags,
                 "correct on " + chk.get("checked") + "; timed at " + shape.text() + " on " + device);
    return 0;
}

// The CUDA judge's modes; `p` must outlive the table.
inline kit::ModeTable cuda_modes(const Problem& p) {
    return {
        {"resources", [](const Args& a) { return mode_resources(a); }},
        {"check", [&p](const Args& a) { return mode_check(p, a); }},
        {"bench", [&p](const Args& a) { return mode_bench(p, a); }},
        {"report", [&p](const Args& a) { return mode_report(p, a); }},
        {"profile", [&p](const Args& a) { return mode_profile(p, a); }},
    };
}

} // namespace judge

int harness_main(int argc, char** argv, const Problem& p) {
    return kit::run_modes(argc, argv, judge::cuda_modes(p), "cuda judge", p.name);
}

} // namespace cuda
} // namespace autocomp

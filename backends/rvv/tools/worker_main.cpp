// worker_main.cpp — the rvv worker's main loop (riscv64, run under qemu-riscv64).
//
//   qemu-riscv64 -cpu rv64,v=true,vlen=V,vext_spec=v1.0 [-plugin count_plugin.so,out=F] worker --channel-fd 3
//
// Built once per machine into the cache; the candidate's link step links it with the problem's worker
// harness and the candidate's object into one static executable, so the kernel is an ordinary call
// (no dynamic loading) and qemu knows every symbol (the counting plugin finds the markers by name).
//
// It speaks the CPU target's channel protocol (the kit's autocomp_channel.h and autocomp/serve.h: memfd on fd 3, sequence words and
// futexes), which works unchanged across qemu-user: the guest maps the host's memfd, its loads and
// stores are the host's, and its futex calls are the host's. What it does not have is the CPU
// worker's seccomp filter: qemu-user refuses a guest's PR_SET_SECCOMP. Its containment is the
// sandbox the evaluator runs it in (no network, read-only file system, nothing writable except the
// count directory in the counting step, its own pid namespace) and the judge's gate on the candidate's
// object (no ecall, no counter CSR reads, only allowed library functions).
#include "autocomp/serve.h"
#include "autocomp/worker_side.h"
#include "autocomp_channel.h"
#include "autocomp_harness.h"

#include <csignal>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// The markers the counting plugin watches: called, never inlined, so each starts a translated block.
extern "C" __attribute__((noinline, used)) void autocomp_rvv_count_begin() { asm volatile("" ::: "memory"); }
extern "C" __attribute__((noinline, used)) void autocomp_rvv_count_end() { asm volatile("" ::: "memory"); }

namespace autocomp {
namespace {

using kit::g_context;

void on_fatal_signal(int sig) {
    kit::report_fatal_signal("autocomp rvv worker", sig,
                             sig == SIGILL ? " (an instruction or extension that qemu's -cpu does not enable?)" : "");
}

[[noreturn]] void fail_load(channel::Control* c, const std::string& why) {
    kit::fail_start("autocomp rvv worker", c, channel::kLoadError, why);
}

} // namespace

int harness_main(int argc, char** argv, const Problem& p) {
    std::snprintf(g_context, sizeof g_context, "while starting");
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
        std::signal(sig, on_fatal_signal);
    int fd = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        if (key == "--channel-fd")
            fd = std::atoi(value.c_str());
        else
            fail_load(nullptr, "unknown option " + key);
    }
    std::size_t size = 0;
    channel::Control* c = kit::open_channel("autocomp rvv worker", fd, size);
    // The markers' own cost, once: the counting plugin's first pair, which the judge subtracts.
    autocomp_rvv_count_begin();
    autocomp_rvv_count_end();
    std::snprintf(g_context, sizeof g_context, "between calls");
    c->status = channel::kOk;
    c->hello.store(1, std::memory_order_release);
    channel::wake(&c->hello);
    kit::serve(p, c, reinterpret_cast<unsigned char*>(c), size);
}

} // namespace autocomp

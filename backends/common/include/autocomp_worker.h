// autocomp_worker.h — the process that runs a candidate's kernel for the judge (C++17, Linux x86-64).
//
//   worker --channel-fd 3 --object candidate.so [--libraries openblas,...] [--threads 0|1] [--seccomp 1|0]
//
// In order: crash handlers; the libraries the problem allows are loaded (trusted system code, whose
// constructors may need files and threads); a first seccomp allow-list (what the dynamic loader
// needs to map a file read-only, nothing else); the candidate's shared object is loaded (the gate
// rejected constructors, init/fini sections and ifunc resolvers, so none of its code runs here); its
// entry points are looked up; the final allow-list (compute, memory, futexes, threads only where the
// problem allows them, writes to stdout/stderr) is installed for every thread; then the worker
// serves the judge's requests until told to exit. Failing to install a filter fails the evaluation.
// `--seccomp 0` is for valgrind, which emulates system calls and cannot run under a filter.
#pragma once

#include "autocomp/serve.h"
#include "autocomp/worker_side.h"
#include "autocomp_channel.h"
#include "autocomp_probe.h"

#include <csignal>
#include <dlfcn.h>
#include <fcntl.h>
#include <map>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace autocomp {
namespace worker {

using kit::g_context;
using kit::say;

inline void on_fatal_signal(int sig) { kit::report_fatal_signal("autocomp worker", sig, ""); }

inline const char* syscall_name(int nr) {
    switch (nr) {
    case 56: case 57: case 58: case 435: return "process creation (fork/clone)";
    case 59: case 322: return "exec of another program";
    case 41: case 42: case 43: case 49: case 50: case 288: return "network socket";
    case 101: return "ptrace";
    case 310: case 311: return "process_vm_readv/writev (another process's memory)";
    case 2: case 257: case 437: case 85: return "opening a file";
    case 0: case 17: case 19: return "reading a file descriptor";
    case 62: case 200: case 234: case 129: case 297: return "sending a signal";
    case 13: return "installing a signal handler";
    case 203: return "changing the CPU affinity";
    case 425: case 426: case 427: return "io_uring";
    case 157: return "prctl";
    case 317: return "installing a seccomp filter";
    case 165: case 166: case 272: return "mount or namespace change";
    default: return nullptr;
    }
}

inline void on_sigsys(int, siginfo_t* info, void*) {
    const int nr = info ? info->si_syscall : -1;
    char num[32];
    std::snprintf(num, sizeof num, "%d", nr);
    say("autocomp worker: FORBIDDEN SYSTEM CALL ");
    say(num);
    if (const char* what = syscall_name(nr)) {
        say(" (");
        say(what);
        say(")");
    }
    say(" ");
    say(g_context);
    say("; a kernel may only compute on its arguments\n");
    _exit(159);
}

inline void install_handlers() {
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigaction(sig, &sa, nullptr);
    }
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &sa, nullptr);
}

// The allow-list. `loading`: also what the dynamic loader needs to map a shared object read-only.
// Anything else traps (SIGSYS names the call); another architecture or the x32 ABI kills.
inline bool install_filter(bool loading, bool threads, std::string& error) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
    if (!ctx) {
        error = "seccomp_init failed";
        return false;
    }
    int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    rc |= seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    // no_new_privs is set with the first filter; the second one may not call prctl any more.
    rc |= seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, loading ? 1 : 0);
    auto allow = [&](int nr) { rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0); };
    for (int nr : {SCMP_SYS(futex), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(brk), SCMP_SYS(madvise),
                   SCMP_SYS(mprotect), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(rt_sigreturn),
                   SCMP_SYS(rt_sigprocmask), SCMP_SYS(sched_yield), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
                   SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(getpid), SCMP_SYS(gettid),
                   SCMP_SYS(getrandom), SCMP_SYS(restart_syscall), SCMP_SYS(sched_getaffinity), SCMP_SYS(getcpu),
                   // NUMA placement of the process's own memory (OpenBLAS's buffers)
                   SCMP_SYS(mbind), SCMP_SYS(get_mempolicy)})
        allow(nr);
    // Output for messages only, to stdout and stderr.
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, SCMP_A0(SCMP_CMP_LE, 2));
    // abort() signals its own thread group, nothing else.
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(getpid())));
    if (threads) {
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                               SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
        allow(SCMP_SYS(set_robust_list));
        allow(SCMP_SYS(rseq));
        // glibc's own handlers for its internal signals (cancellation, set*id), set up with the
        // first thread; no handler for any other signal.
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigaction), 1, SCMP_A0(SCMP_CMP_GE, 32));
    }
    // clone3 keeps its flags in memory, out of the filter's reach: glibc falls back to clone.
    rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (loading) {
        rc |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
                               SCMP_A2(SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC, O_RDONLY));
        for (int nr : {SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(close), SCMP_SYS(getcwd),
                       SCMP_SYS(seccomp), // to add the final filter, which only narrows this one
                       SCMP_SYS(lseek)})
            allow(nr);
    }
    if (rc != 0) {
        error = "building the seccomp filter failed";
        seccomp_release(ctx);
        return false;
    }
    rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc != 0) {
        error = "installing the seccomp filter failed: " + std::string(std::strerror(-rc));
        return false;
    }
    return true;
}

struct Options {
    int fd = 3;
    std::string object;
    std::vector<std::string> libraries;
    bool threads = false;
    bool seccomp = true;
};

[[noreturn]] inline void fail_load(channel::Control* c, int status, const std::string& why) {
    kit::fail_start("autocomp worker", c, status, why);
}

} // namespace worker

inline int harness_main(int argc, char** argv, const Problem& p) {
    using namespace worker;
    install_handlers();
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        if (key == "--channel-fd")
            o.fd = std::atoi(value.c_str());
        else if (key == "--object")
            o.object = value;
        else if (key == "--libraries")
            o.libraries = split(value, ',');
        else if (key == "--threads")
            o.threads = value == "1";
        else if (key == "--seccomp")
            o.seccomp = value != "0";
        else
            fail_load(nullptr, channel::kBadRequest, "unknown option " + key);
    }
    std::size_t size = 0;
    channel::Control* c = kit::open_channel("autocomp worker", o.fd, size);

    for (const auto& lib : o.libraries) {
        const std::string soname = "lib" + lib + ".so";
        if (!dlopen(soname.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
            const char* e = dlerror();
            fail_load(c, channel::kLoadError, "cannot load the allowed library " + soname + ": " + (e ? e : ""));
        }
    }
    std::string error;
    if (o.seccomp && !install_filter(true, o.threads, error))
        fail_load(c, channel::kGuardError, error);
    void* handle = dlopen(o.object.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* e = dlerror();
        fail_load(c, channel::kLoadError, std::string("cannot load the candidate: ") + (e ? e : "unknown error"));
    }
    for (const Entry& entry : entries()) {
        void* sym = dlsym(handle, entry.name);
        if (!sym)
            fail_load(c, channel::kLoadError, std::string("the candidate does not define ") + entry.name);
        std::memcpy(entry.slot, &sym, sizeof sym);
    }
    if (o.seccomp && !install_filter(false, o.threads, error))
        fail_load(c, channel::kGuardError, error);
    std::snprintf(g_context, sizeof g_context, "between calls");
    c->status = channel::kOk;
    c->hello.store(1, std::memory_order_release);
    channel::wake(&c->hello);
    kit::serve(p, c, reinterpret_cast<unsigned char*>(c), size, CacheProbe());
}

} // namespace autocomp

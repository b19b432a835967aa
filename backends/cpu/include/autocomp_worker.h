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

inline char g_context[512] = "while loading the candidate";

inline void say(const char* text) {
    ssize_t ignored = write(2, text, std::strlen(text));
    (void)ignored;
}

inline void on_fatal_signal(int sig) {
    const char* name = sig == SIGSEGV ? "SIGSEGV (invalid memory access)"
                       : sig == SIGBUS ? "SIGBUS (misaligned or invalid access)"
                       : sig == SIGFPE ? "SIGFPE (arithmetic fault)"
                       : sig == SIGILL ? "SIGILL (illegal instruction)"
                                       : "SIGABRT (abort)";
    say("autocomp worker: crashed with ");
    say(name);
    say(" ");
    say(g_context);
    say("\n");
    // Re-raising would need sigaction, which the filter forbids: the exit status says it instead.
    _exit(128 + sig);
}

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

inline void fail_load(channel::Control* c, int status, const std::string& why) {
    say("autocomp worker: ");
    say(why.c_str());
    say("\n");
    if (c) {
        c->status = status;
        std::snprintf(c->message, sizeof c->message, "%s", why.c_str());
        c->hello.store(2, std::memory_order_release);
        channel::wake(&c->hello);
    }
    _exit(2);
}

// Between requests the worker sleeps: the judge reads this process's CPU clock around each batch,
// and a worker spinning while the judge waits for its own turn on a busy CPU would add that wait.
inline std::uint32_t wait_change(std::atomic<std::uint32_t>* word, std::uint32_t old) {
    for (;;) {
        const std::uint32_t v = word->load(std::memory_order_acquire);
        if (v != old)
            return v;
        channel::wait_while(word, old, 100000000L);
    }
}

// The worker sleeps until `go` as well: the judge reads its CPU clock while it sleeps (the kernel
// brings a sleeping task's clock up to date; a running one's only at the next tick).
inline void wait_for(std::atomic<std::uint32_t>* word, std::uint32_t value) {
    for (;;) {
        const std::uint32_t v = word->load(std::memory_order_acquire);
        if (v == value)
            return;
        channel::wait_while(word, v, 100000000L);
    }
}

inline int serve(const Problem& p, channel::Control* c, unsigned char* base, std::size_t size) {
    CacheProbe probe;
    // Request numbers start at 1: the judge may have sent the first before this line runs.
    std::uint32_t last = 0;
    std::vector<Spans> ins, outs;
    for (;;) {
        const std::uint32_t seq = wait_change(&c->request, last);
        last = seq;
        const std::uint32_t command = c->command;
        c->status = channel::kOk;
        c->message[0] = '\0';
        if (command == channel::kExit)
            _exit(0);
        Shape shape;
        bool ok = command == channel::kProbe || command == channel::kEmpty;
        if (command == channel::kCalls) {
            // The judge wrote this block; it is checked anyway, so a bad request is an error
            // message rather than a wild pointer.
            const std::uint64_t count = c->count, slot = c->slot_bytes;
            ok = c->n_in <= channel::kMaxBuffers && c->n_out <= channel::kMaxBuffers && slot > 0 &&
                 count <= (size - channel::kControlBytes) / slot;
            for (std::uint32_t b = 0; ok && b < c->n_in; ++b)
                ok = c->in_offset[b] + c->in_count[b] * sizeof(float) <= slot;
            for (std::uint32_t b = 0; ok && b < c->n_out; ++b)
                ok = c->out_offset[b] + c->out_count[b] * sizeof(float) <= slot;
            if (ok) {
                c->shape[sizeof c->shape - 1] = '\0';
                try {
                    shape = parse_shape(c->shape);
                } catch (const std::exception&) {
                    ok = false;
                }
            }
            if (ok) {
                ins.assign(count, Spans());
                outs.assign(count, Spans());
                for (std::uint64_t k = 0; k < count; ++k) {
                    unsigned char* s = base + channel::kControlBytes + k * slot;
                    for (std::uint32_t b = 0; b < c->n_in; ++b)
                        ins[k].push_back({reinterpret_cast<float*>(s + c->in_offset[b]), c->in_count[b]});
                    for (std::uint32_t b = 0; b < c->n_out; ++b)
                        outs[k].push_back({reinterpret_cast<float*>(s + c->out_offset[b]), c->out_count[b]});
                }
                std::snprintf(g_context, sizeof g_context, "while running %s at shape %s", p.name.c_str(),
                              shape.text().c_str());
            }
        }
        if (!ok) {
            c->status = channel::kBadRequest;
            std::snprintf(c->message, sizeof c->message, "malformed request");
        }
        if (command == channel::kProbe)
            probe.warm();
        c->ready.store(seq, std::memory_order_release);
        channel::wake(&c->ready);
        wait_for(&c->go, seq);
        if (ok && command == channel::kCalls) {
            try {
                for (std::size_t k = 0; k < ins.size(); ++k)
                    p.call(shape, ins[k], outs[k]);
            } catch (const std::exception& e) {
                c->status = channel::kException;
                std::snprintf(c->message, sizeof c->message, "the kernel threw an exception: %s", e.what());
            } catch (...) {
                c->status = channel::kException;
                std::snprintf(c->message, sizeof c->message, "the kernel threw an exception");
            }
        } else if (command == channel::kProbe) {
            probe.timed_pass(static_cast<int>(c->count));
        }
        c->done.store(seq, std::memory_order_release);
        channel::wake(&c->done);
    }
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
    struct stat st;
    if (fstat(o.fd, &st) != 0 || st.st_size < static_cast<off_t>(channel::kControlBytes))
        fail_load(nullptr, channel::kBadRequest, "no channel on fd " + std::to_string(o.fd));
    const std::size_t size = static_cast<std::size_t>(st.st_size);
    void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, o.fd, 0);
    if (mem == MAP_FAILED)
        fail_load(nullptr, channel::kBadRequest, "cannot map the channel");
    auto* c = static_cast<channel::Control*>(mem);
    // The judge writes the header when it starts, which may be after this process.
    for (int waited = 0; c->magic != channel::kMagic; ++waited) {
        if (waited > 60000)
            fail_load(nullptr, channel::kBadRequest, "the channel has no judge's header");
        usleep(1000);
    }
    if (c->version != channel::kVersion)
        fail_load(nullptr, channel::kBadRequest, "the judge speaks another channel version");

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
    return serve(p, c, static_cast<unsigned char*>(mem), size);
}

} // namespace autocomp

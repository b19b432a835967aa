// autocomp/worker_side.h — what every worker process shares: its crash messages, waiting on the
// channel's sequence words, and reporting a failed start to the judge (C++17, Linux; no libc calls
// that are not async-signal-safe in the signal paths).
//
// Part of the judge kit (backends/common/include). A worker runs the candidate's code, so nothing it
// says is trusted by the judge; these messages are for the log only.
//   g_context           what the worker is doing ("while running gemm at shape M=64,..."), for crash
//                       messages; kept current by the worker.
//   fatal_signal_text   "SIGSEGV (invalid memory access)" and so on.
//   wait_change         sleep (futex) until a word differs from `old`; wait_until: until it equals
//                       `value`. Sleeping, not spinning: the judge reads the worker's CPU clock.
//   fail_start          tell the judge (hello = 2, status, message) and stderr why the worker could not
//                       start, then _exit(2). Works with any control block that has hello, status
//                       and message (the CPU channel's and the CUDA channel's).
#pragma once

#include "autocomp_channel.h"

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include <unistd.h>

namespace autocomp {
namespace kit {

inline char g_context[512] = "while loading the candidate";

inline void say(const char* text) {
    ssize_t ignored = write(2, text, std::strlen(text));
    (void)ignored;
}

inline const char* fatal_signal_text(int sig) {
    return sig == SIGSEGV ? "SIGSEGV (invalid memory access)"
           : sig == SIGBUS ? "SIGBUS (misaligned or invalid access)"
           : sig == SIGFPE ? "SIGFPE (arithmetic fault)"
           : sig == SIGILL ? "SIGILL (illegal instruction)"
           : sig == SIGABRT ? "SIGABRT (abort)"
                            : "a fatal signal";
}

// "<who>: crashed with <signal> <context><hint>" on stderr, then _exit(128 + sig): re-raising would
// need sigaction, which a worker's seccomp filter may forbid, so the exit status says it instead.
inline void report_fatal_signal(const char* who, int sig, const char* hint) {
    say(who);
    say(": crashed with ");
    say(fatal_signal_text(sig));
    say(" ");
    say(g_context);
    say(hint);
    say("\n");
    _exit(128 + sig);
}

inline std::uint32_t wait_change(std::atomic<std::uint32_t>* word, std::uint32_t old) {
    for (;;) {
        const std::uint32_t v = word->load(std::memory_order_acquire);
        if (v != old)
            return v;
        channel::wait_while(word, old, 100000000L);
    }
}

inline void wait_until(std::atomic<std::uint32_t>* word, std::uint32_t value) {
    for (;;) {
        const std::uint32_t v = word->load(std::memory_order_acquire);
        if (v == value)
            return;
        channel::wait_while(word, v, 100000000L);
    }
}

template <typename ControlBlock>
[[noreturn]] void fail_start(const char* who, ControlBlock* c, int status, const std::string& why) {
    say(who);
    say(": ");
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

} // namespace kit
} // namespace autocomp

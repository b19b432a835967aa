// worker_main.cpp — the rvv worker's main loop (riscv64, run under qemu-riscv64).
//
//   qemu-riscv64 -cpu rv64,v=true,vlen=V,vext_spec=v1.0 [-plugin count_plugin.so,out=F] worker --channel-fd 3
//
// Built once per machine into the cache; the candidate's link step links it with the problem's worker
// harness and the candidate's object into one static executable, so the kernel is an ordinary call
// (no dynamic loading) and qemu knows every symbol (the counting plugin finds the markers by name).
//
// It speaks the CPU target's channel protocol (autocomp_channel.h: memfd on fd 3, sequence words and
// futexes), which works unchanged across qemu-user: the guest maps the host's memfd, its loads and
// stores are the host's, and its futex calls are the host's. What it does not have is the CPU
// worker's seccomp filter: qemu-user refuses a guest's PR_SET_SECCOMP. Its containment is the
// sandbox the evaluator runs it in (no network, read-only file system, nothing writable except the
// count directory in the counting step, its own pid namespace) and the judge's gate on the candidate's
// object (no ecall, no counter CSR reads, only allowed library functions).
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

char g_context[512] = "while starting";

void say(const char* text) {
    ssize_t ignored = write(2, text, std::strlen(text));
    (void)ignored;
}

void on_fatal_signal(int sig) {
    say(sig == SIGSEGV ? "autocomp rvv worker: SIGSEGV (invalid memory access) "
        : sig == SIGBUS ? "autocomp rvv worker: SIGBUS (misaligned or invalid access) "
        : sig == SIGILL ? "autocomp rvv worker: SIGILL (illegal instruction: an extension qemu's -cpu does not enable?) "
                        : "autocomp rvv worker: fatal signal ");
    say(g_context);
    say("\n");
    _exit(128 + sig);
}

[[noreturn]] void fail_load(channel::Control* c, const std::string& why) {
    say(("autocomp rvv worker: " + why + "\n").c_str());
    if (c) {
        c->status = channel::kLoadError;
        std::snprintf(c->message, sizeof c->message, "%s", why.c_str());
        c->hello.store(2, std::memory_order_release);
        channel::wake(&c->hello);
    }
    _exit(2);
}

void wait_for(std::atomic<std::uint32_t>* word, std::uint32_t value) {
    for (;;) {
        const std::uint32_t v = word->load(std::memory_order_acquire);
        if (v == value)
            return;
        channel::wait_while(word, v, 100000000L);
    }
}

std::uint32_t wait_change(std::atomic<std::uint32_t>* word, std::uint32_t old) {
    for (;;) {
        const std::uint32_t v = word->load(std::memory_order_acquire);
        if (v != old)
            return v;
        channel::wait_while(word, old, 100000000L);
    }
}

[[noreturn]] void serve(const Problem& p, channel::Control* c, unsigned char* base, std::size_t size) {
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
            // The judge wrote this block; it is range-checked anyway.
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
            }
        }
        std::snprintf(g_context, sizeof g_context, "between calls");
        c->done.store(seq, std::memory_order_release);
        channel::wake(&c->done);
    }
}

} // namespace

int harness_main(int argc, char** argv, const Problem& p) {
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
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(channel::kControlBytes))
        fail_load(nullptr, "no channel on fd " + std::to_string(fd));
    const std::size_t size = static_cast<std::size_t>(st.st_size);
    void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED)
        fail_load(nullptr, "cannot map the channel");
    auto* c = static_cast<channel::Control*>(mem);
    for (int waited = 0; c->magic != channel::kMagic; ++waited) {
        if (waited > 60000)
            fail_load(nullptr, "the channel has no judge's header");
        usleep(1000);
    }
    if (c->version != channel::kVersion)
        fail_load(c, "the judge speaks another channel version");
    // The markers' own cost, once: the counting plugin's first pair, which the judge subtracts.
    autocomp_rvv_count_begin();
    autocomp_rvv_count_end();
    std::snprintf(g_context, sizeof g_context, "between calls");
    c->status = channel::kOk;
    c->hello.store(1, std::memory_order_release);
    channel::wake(&c->hello);
    serve(p, c, static_cast<unsigned char*>(mem), size);
}

} // namespace autocomp

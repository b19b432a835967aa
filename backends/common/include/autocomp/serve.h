// autocomp/serve.h — a CPU-style worker's request loop over the shared-memory channel (C++17).
//
// Part of the judge kit (backends/common/include). Used by the CPU worker (autocomp_worker.h, the
// candidate's shared object loaded under seccomp) and by the rvv worker (tools/worker_main.cpp, linked
// statically and run under qemu), which differ only in how they start. The protocol is described in
// autocomp_channel.h. Every request is range-checked against the channel's size before any pointer is
// made from it: a malformed one is answered with kBadRequest, never followed. `Extra` supplies the
// commands beyond calls and empty requests: warm() before `ready` of a kProbe request and
// timed_pass(count) after `go` (the CPU worker's cache probe; rvv passes NoProbe).
#pragma once

#include "autocomp/shapes.h"
#include "autocomp/worker_side.h"
#include "autocomp_channel.h"

#include <cstdio>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace autocomp {
namespace kit {

struct NoProbe {
    void warm() {}
    void timed_pass(int) {}
};

// The calls of a kCalls request: their shape and the spans of each call's buffers in the channel.
// False (and nothing set) when the request does not fit the channel.
inline bool map_calls(channel::Control* c, unsigned char* base, std::size_t size, Shape& shape, std::vector<Spans>& ins,
                      std::vector<Spans>& outs) {
    const std::uint64_t count = c->count, slot = c->slot_bytes;
    bool ok = c->n_in <= channel::kMaxBuffers && c->n_out <= channel::kMaxBuffers && slot > 0 &&
              count <= (size - channel::kControlBytes) / slot;
    for (std::uint32_t b = 0; ok && b < c->n_in; ++b)
        ok = c->in_offset[b] + c->in_count[b] * sizeof(float) <= slot;
    for (std::uint32_t b = 0; ok && b < c->n_out; ++b)
        ok = c->out_offset[b] + c->out_count[b] * sizeof(float) <= slot;
    if (!ok)
        return false;
    c->shape[sizeof c->shape - 1] = '\0';
    try {
        shape = parse_shape(c->shape);
    } catch (const std::exception&) {
        return false;
    }
    ins.assign(count, Spans());
    outs.assign(count, Spans());
    for (std::uint64_t k = 0; k < count; ++k) {
        unsigned char* s = base + channel::kControlBytes + k * slot;
        for (std::uint32_t b = 0; b < c->n_in; ++b)
            ins[k].push_back({reinterpret_cast<float*>(s + c->in_offset[b]), c->in_count[b]});
        for (std::uint32_t b = 0; b < c->n_out; ++b)
            outs[k].push_back({reinterpret_cast<float*>(s + c->out_offset[b]), c->out_count[b]});
    }
    return true;
}

// The channel on `fd`, mapped, once the judge has written its header (it may start after this
// process); its size in `size`. Any failure ends the worker through fail_start.
inline channel::Control* open_channel(const char* who, int fd, std::size_t& size) {
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(channel::kControlBytes))
        fail_start<channel::Control>(who, nullptr, channel::kBadRequest, "no channel on fd " + std::to_string(fd));
    size = static_cast<std::size_t>(st.st_size);
    void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED)
        fail_start<channel::Control>(who, nullptr, channel::kBadRequest, "cannot map the channel");
    auto* c = static_cast<channel::Control*>(mem);
    for (int waited = 0; c->magic != channel::kMagic; ++waited) {
        if (waited > 60000)
            fail_start<channel::Control>(who, nullptr, channel::kBadRequest, "the channel has no judge's header");
        usleep(1000);
    }
    if (c->version != channel::kVersion)
        fail_start<channel::Control>(who, nullptr, channel::kBadRequest, "the judge speaks another channel version");
    return c;
}

// Serves requests until kExit (then _exit(0)). P: a problem with `name` and
// call(shape, const Spans& in, const Spans& out).
template <typename P, typename Extra = NoProbe>
[[noreturn]] void serve(const P& p, channel::Control* c, unsigned char* base, std::size_t size, Extra extra = {}) {
    // Request numbers start at 1: the judge may have sent the first before this loop runs.
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
            ok = map_calls(c, base, size, shape, ins, outs);
            if (ok)
                std::snprintf(g_context, sizeof g_context, "while running %s at shape %s", p.name.c_str(), shape.text().c_str());
        }
        if (!ok) {
            c->status = channel::kBadRequest;
            std::snprintf(c->message, sizeof c->message, "malformed request");
        }
        if (command == channel::kProbe)
            extra.warm();
        c->ready.store(seq, std::memory_order_release);
        channel::wake(&c->ready);
        // Sleeping until `go` as well: the judge reads the worker's CPU clock while it sleeps (the
        // kernel brings a sleeping task's clock up to date; a running one's only at the next tick).
        wait_until(&c->go, seq);
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
            extra.timed_pass(static_cast<int>(c->count));
        }
        c->done.store(seq, std::memory_order_release);
        channel::wake(&c->done);
        if (command == channel::kCalls)
            std::snprintf(g_context, sizeof g_context, "between calls");
    }
}

} // namespace kit
} // namespace autocomp

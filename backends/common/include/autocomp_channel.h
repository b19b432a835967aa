// autocomp_channel.h — the shared memory between the judge and one worker (C++17, Linux).
//
// The evaluator creates one memfd per worker and hands it to both processes (fd 3 in the worker,
// fd 3, 4, ... in the judge). Its first page is the control block, the rest holds the call slots:
// each slot is the inputs then the outputs of one call, 64-byte aligned. One request:
//
//   judge:  fills the slots, writes command/count/shape, request = seq (futex wake)
//   worker: prepares the calls (parses the shape, builds the spans), ready = seq (futex wake),
//           then spins on `go`
//   judge:  t0 = now, go = seq, then waits for done (spinning on its own CPU, or futex wait
//           when it shares the worker's CPU)
//   worker: runs `count` calls, done = seq (futex wake)
//   judge:  t1 = now; reads outputs, compares inputs with its own copies
//
// Everything in the block may be written by the worker at any time: the judge reads only the
// sequence words and the worker's status/message, range-checks them and never takes an offset or
// a size from here.
#pragma once

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <ctime>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace autocomp {
namespace channel {

constexpr std::uint32_t kMagic = 0x48434341;  // "ACCH"
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kControlBytes = 4096;
constexpr std::size_t kMaxBuffers = 16;
constexpr std::size_t kSlotAlign = 64;

enum Command : std::uint32_t { kNone = 0, kCalls = 1, kProbe = 2, kExit = 3, kEmpty = 4 };
enum Status : std::int32_t { kOk = 0, kBadRequest = 1, kLoadError = 2, kGuardError = 3, kException = 4 };

struct alignas(64) Control {
    std::uint32_t magic;
    std::uint32_t version;
    alignas(64) std::atomic<std::uint32_t> hello;    // worker: 1 once loaded and guarded, 2 if it failed
    alignas(64) std::atomic<std::uint32_t> request;  // judge
    alignas(64) std::atomic<std::uint32_t> ready;    // worker
    alignas(64) std::atomic<std::uint32_t> go;       // judge
    alignas(64) std::atomic<std::uint32_t> done;     // worker
    alignas(64) std::uint32_t command;
    std::uint32_t count;        // calls in this request
    std::uint32_t n_in, n_out;  // buffers per call
    std::uint64_t slot_bytes;   // distance between two calls' slots
    std::uint64_t in_offset[kMaxBuffers], in_count[kMaxBuffers];    // within a slot, in bytes / floats
    std::uint64_t out_offset[kMaxBuffers], out_count[kMaxBuffers];
    char shape[256];            // "M=512,N=512,K=512"
    std::int32_t status;        // worker: Status of the last request or of loading
    char message[1024];         // worker: what went wrong
};
static_assert(sizeof(Control) <= kControlBytes, "control block must fit in its page");

inline long futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t value, const timespec* timeout) {
    return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, value, timeout, nullptr, 0);
}

inline void wake(std::atomic<std::uint32_t>* word) { futex(word, FUTEX_WAKE, INT_MAX, nullptr); }

// Sleeps while *word == value, at most `ns` nanoseconds (a spurious or early return is fine: the
// callers loop).
inline void wait_while(std::atomic<std::uint32_t>* word, std::uint32_t value, long ns) {
    timespec ts{ns / 1000000000L, ns % 1000000000L};
    futex(word, FUTEX_WAIT, value, &ts);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

inline std::size_t align_up(std::size_t n) { return (n + kSlotAlign - 1) / kSlotAlign * kSlotAlign; }

} // namespace channel
} // namespace autocomp

// autocomp_cuda_channel.h — the shared memory between the CUDA target's judge and one worker.
//
// The evaluator gives both processes one memfd (fd 3 in the worker, {channels} in the judge). Its
// first 64 KiB are this control block; after it comes one slot: the inputs, then the outputs of one
// call, as fp32 values, 256-byte aligned. One call:
//
//   judge:  writes fresh inputs and the request (shape, buffers), request = seq
//   worker: uploads the inputs to the device (fp16 inputs converted), fills the outputs with NaN,
//           flushes the L2 cache, synchronizes, ready = seq, then spins on `go`
//   judge:  t0 = its clock, go = seq, spins until `returned`
//   worker: event e0, the candidate's entry, event e1, waits for e1, snapshots the outputs on a
//           stream of its own, returned = seq
//   judge:  t1 = its clock (the judge's wall time of the call: t1 - t0)
//   worker: synchronizes the whole device, compares the outputs with the snapshot (work still
//           running after the entry returned changes them), copies outputs and inputs back into the
//           slot, writes event_ms and status, done = seq
//   judge:  compares outputs with its reference and inputs with its own copies
//
// The worker process runs the candidate's code, so everything here may be written by it at any
// time: the judge reads only the sequence words, status, flags and numbers, range-checks them, never
// takes an offset or a size from here, and accepts an event time only when it is consistent with
// its own clock.
#pragma once

#include "autocomp_channel.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace autocomp {
namespace cuda {

constexpr std::uint32_t kMagic = 0x41444355;  // "UCDA"
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kControlBytes = 65536;
constexpr std::size_t kMaxBuffers = 8;
constexpr std::size_t kSlotAlign = 256;

enum Command : std::uint32_t { kNone = 0, kCall = 1, kEmpty = 2, kExit = 3 };
enum Status : std::int32_t { kOk = 0, kBadRequest = 1, kLoadError = 2, kCudaError = 3, kException = 4, kDeviceLost = 5 };
// Element types of device buffers: what the worker converts the judge's fp32 values to.
enum Elem : std::uint32_t { kF32 = 0, kF16 = 1, kBF16 = 2 };

struct DeviceInfo {
    char name[256];
    std::int32_t cc_major, cc_minor;
    std::int32_t sm_count;
    std::int32_t clock_khz, mem_clock_khz, bus_width_bits;
    std::int32_t l2_bytes;
    std::int32_t smem_per_sm, smem_per_block_optin;
    std::int32_t max_threads_per_sm, max_blocks_per_sm, regs_per_sm;
    std::int32_t driver_version, runtime_version;
    std::uint64_t global_mem_bytes;
    double copy_gbps;           // measured device-to-device copy, bytes read + written per second / 1e9
    std::uint64_t flush_bytes;  // the buffer written before every timed call
};

struct alignas(64) Control {
    std::uint32_t magic;
    std::uint32_t version;
    alignas(64) std::atomic<std::uint32_t> hello;     // worker: 1 ready to serve, 2 failed (message says why)
    alignas(64) std::atomic<std::uint32_t> request;   // judge
    alignas(64) std::atomic<std::uint32_t> ready;     // worker
    alignas(64) std::atomic<std::uint32_t> go;        // judge
    alignas(64) std::atomic<std::uint32_t> returned;  // worker: the call returned and its last event completed
    alignas(64) std::atomic<std::uint32_t> done;      // worker
    alignas(64) std::uint32_t command;
    std::uint32_t flush;          // flush the L2 cache before the call
    std::uint32_t n_in, n_out;
    // Within the slot, bytes / elements; the values are fp32, converted by the worker to the
    // problem's element type of each input.
    std::uint64_t in_offset[kMaxBuffers], in_count[kMaxBuffers];
    std::uint64_t out_offset[kMaxBuffers], out_count[kMaxBuffers];
    char shape[256];
    // worker -> judge
    std::int32_t status;
    std::uint32_t late_writes;    // output elements that changed after the entry returned
    double event_ms;              // cudaEvent time of the call
    DeviceInfo device;
    char message[4096];
};
static_assert(sizeof(Control) <= kControlBytes, "control block must fit");

inline std::size_t align_up(std::size_t n) { return (n + kSlotAlign - 1) / kSlotAlign * kSlotAlign; }

} // namespace cuda
} // namespace autocomp

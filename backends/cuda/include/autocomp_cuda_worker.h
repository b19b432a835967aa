// autocomp_cuda_worker.h — the process that runs a candidate's CUDA kernels for the judge.
// Compiled by nvcc with the problem's harness.cpp (-DAUTOCOMP_CUDA_WORKER), linked with the shared
// CUDA runtime, which the candidate's shared object uses too (one runtime, one context).
//
//   worker --channel-fd 3 --object candidate.so --arch sm_90
//
// In order: the channel; the device (its compute capability must be the configured one, or the
// candidate's code has no image for it); the device's properties and a measured device-to-device
// copy, before any candidate code is loaded; the L2-flush buffer and the events; the candidate's
// shared object (RTLD_LOCAL: it cannot interpose on anything this program calls) and its entry
// points; then requests until told to exit. A CUDA error that leaves the context unusable (an
// illegal address, a trap) ends the process after it is reported.
#pragma once

#include "autocomp/worker_side.h"
#include "autocomp_cuda_channel.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace autocomp {
namespace cuda {
namespace worker {

using kit::g_context;
using kit::say;
using kit::wait_change;

inline void on_fatal_signal(int sig) {
    kit::report_fatal_signal("autocomp cuda worker", sig, " (a device pointer dereferenced on the host is a common cause)");
}

[[noreturn]] inline void fail(Control* c, int status, const std::string& why) { kit::fail_start("autocomp cuda worker", c, status, why); }

inline std::string cuda_text(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// Sticky errors leave the context unusable: the process reports and exits.
inline bool sticky(cudaError_t e) {
    return e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorIllegalInstruction ||
           e == cudaErrorMisalignedAddress || e == cudaErrorInvalidAddressSpace || e == cudaErrorInvalidPc ||
           e == cudaErrorHardwareStackError || e == cudaErrorAssert || e == cudaErrorLaunchTimeout ||
           e == cudaErrorECCUncorrectable || e == cudaErrorContextIsDestroyed;
}

__global__ void autocomp_count_changes(const unsigned* a, const unsigned* b, std::size_t n, unsigned* count) {
    unsigned local = 0;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        local += a[i] != b[i] ? 1u : 0u;
    if (local)
        atomicAdd(count, local);
}

__global__ void autocomp_empty_kernel() {}

struct DeviceBuffer {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    void ensure(std::size_t want) {
        if (want <= bytes && ptr)
            return;
        if (ptr)
            cudaFree(ptr);
        ptr = nullptr;
        bytes = 0;
        const cudaError_t e = cudaMalloc(&ptr, want ? want : 256);
        if (e != cudaSuccess)
            throw std::runtime_error("cudaMalloc of " + std::to_string(want) + " bytes failed: " + cuda_text(e));
        bytes = want ? want : 256;
    }
};

inline void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess)
        throw std::runtime_error(std::string(what) + ": " + cuda_text(e));
}

inline void describe_device(int dev, DeviceInfo& d) {
    cudaDeviceProp prop;
    check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    std::snprintf(d.name, sizeof d.name, "%s", prop.name);
    d.cc_major = prop.major;
    d.cc_minor = prop.minor;
    d.sm_count = prop.multiProcessorCount;
    d.l2_bytes = prop.l2CacheSize;
    d.smem_per_sm = static_cast<std::int32_t>(prop.sharedMemPerMultiprocessor);
    d.smem_per_block_optin = static_cast<std::int32_t>(prop.sharedMemPerBlockOptin);
    d.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
    d.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
    d.regs_per_sm = prop.regsPerMultiprocessor;
    d.global_mem_bytes = prop.totalGlobalMem;
    d.bus_width_bits = prop.memoryBusWidth;
    cudaDeviceGetAttribute(&d.clock_khz, cudaDevAttrClockRate, dev);
    cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, dev);
    cudaDriverGetVersion(&d.driver_version);
    cudaRuntimeGetVersion(&d.runtime_version);
}

// Device-to-device copy of 256 MiB, best of five: the memory roofline the report compares with.
inline double measure_copy_gbps() {
    const std::size_t bytes = 256u << 20;
    void *a = nullptr, *b = nullptr;
    check(cudaMalloc(&a, bytes), "cudaMalloc (copy bandwidth)");
    check(cudaMalloc(&b, bytes), "cudaMalloc (copy bandwidth)");
    check(cudaMemset(a, 1, bytes), "cudaMemset");
    cudaEvent_t e0, e1;
    check(cudaEventCreate(&e0), "cudaEventCreate");
    check(cudaEventCreate(&e1), "cudaEventCreate");
    check(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
    float best = 1e30f;
    for (int i = 0; i < 5; ++i) {
        cudaEventRecord(e0);
        cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(e1);
        check(cudaEventSynchronize(e1), "copy bandwidth");
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        best = ms < best ? ms : best;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return 2.0 * static_cast<double>(bytes) / (best * 1e-3) / 1e9;
}

inline void spin_until(std::atomic<std::uint32_t>* word, std::uint32_t value) {
    // Spinning keeps the judge's clock close to the call; after a second it sleeps in between.
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        const std::uint32_t v = word->load(std::memory_order_acquire);
        if (v == value)
            return;
        if (std::chrono::steady_clock::now() - start < std::chrono::seconds(1))
            channel::cpu_relax();
        else
            channel::wait_while(word, v, 10000000L);
    }
}

inline std::size_t elem_bytes(std::uint32_t elem) { return elem == kF32 ? 4 : 2; }

struct State {
    std::vector<DeviceBuffer> in, out, shadow;
    DeviceBuffer flush, counter;
    std::vector<unsigned char> host;  // conversions
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    cudaStream_t side = nullptr;      // the snapshot's stream: does not wait for the default stream
};

inline int serve(const Problem& p, Control* c, unsigned char* base, std::size_t size, State& st) {
    std::uint32_t last = 0;
    for (;;) {
        const std::uint32_t seq = wait_change(&c->request, last);
        last = seq;
        const std::uint32_t command = c->command;
        c->status = kOk;
        c->message[0] = '\0';
        c->late_writes = 0;
        c->event_ms = -1.0;
        if (command == kExit)
            _exit(0);
        const std::size_t slot_bytes = size - kControlBytes;
        unsigned char* slot = base + kControlBytes;
        Shape shape;
        DeviceArgs args;
        std::vector<std::size_t> out_n;
        bool ok = command == kCall || command == kEmpty;
        std::string error;
        try {
            if (command == kCall) {
                if (c->n_in > kMaxBuffers || c->n_out > kMaxBuffers || c->n_in != p.input_elems.size())
                    throw std::runtime_error("malformed request");
                c->shape[sizeof c->shape - 1] = '\0';
                shape = parse_shape(c->shape);
                st.in.resize(c->n_in);
                st.out.resize(c->n_out);
                st.shadow.resize(c->n_out);
                for (std::uint32_t b = 0; b < c->n_in; ++b) {
                    const std::size_t n = c->in_count[b];
                    if (c->in_offset[b] + n * 4 > slot_bytes)
                        throw std::runtime_error("malformed request");
                    const float* values = reinterpret_cast<const float*>(slot + c->in_offset[b]);
                    const std::uint32_t elem = p.input_elems[b];
                    st.in[b].ensure(n * elem_bytes(elem));
                    if (elem == kF32) {
                        check(cudaMemcpy(st.in[b].ptr, values, n * 4, cudaMemcpyHostToDevice), "uploading an input");
                    } else {
                        st.host.resize(n * 2);
                        for (std::size_t i = 0; i < n; ++i) {
                            if (elem == kF16) {
                                const __half h = __float2half_rn(values[i]);
                                std::memcpy(st.host.data() + 2 * i, &h, 2);
                            } else {
                                const __nv_bfloat16 h = __float2bfloat16_rn(values[i]);
                                std::memcpy(st.host.data() + 2 * i, &h, 2);
                            }
                        }
                        check(cudaMemcpy(st.in[b].ptr, st.host.data(), n * 2, cudaMemcpyHostToDevice), "uploading an input");
                    }
                    args.in.push_back(st.in[b].ptr);
                }
                for (std::uint32_t b = 0; b < c->n_out; ++b) {
                    const std::size_t n = c->out_count[b];
                    if (c->out_offset[b] + n * 4 > slot_bytes)
                        throw std::runtime_error("malformed request");
                    st.out[b].ensure(n * 4);
                    st.shadow[b].ensure(n * 4);
                    // 0xFF bytes: a NaN no arithmetic produces from these inputs.
                    check(cudaMemset(st.out[b].ptr, 0xFF, n * 4), "poisoning an output");
                    args.out.push_back(static_cast<float*>(st.out[b].ptr));
                    out_n.push_back(n);
                }
                std::snprintf(g_context, sizeof g_context, "while running %s at shape %s", p.name.c_str(), shape.text().c_str());
            }
            if (ok && c->flush)
                check(cudaMemsetAsync(st.flush.ptr, static_cast<int>(seq & 0xFF), st.flush.bytes), "flushing the L2 cache");
            check(cudaDeviceSynchronize(), "before the call");
        } catch (const std::exception& e) {
            ok = false;
            error = e.what();
        }
        if (!ok) {
            c->status = kBadRequest;
            std::snprintf(c->message, sizeof c->message, "%s", error.empty() ? "malformed request" : error.c_str());
        }
        cudaGetLastError();
        c->ready.store(seq, std::memory_order_release);
        channel::wake(&c->ready);
        spin_until(&c->go, seq);
        cudaError_t launch = cudaSuccess, run = cudaSuccess;
        if (ok) {
            cudaEventRecord(st.e0, 0);
            if (command == kCall) {
                try {
                    p.call(shape, args);
                } catch (const std::exception& e) {
                    c->status = kException;
                    std::snprintf(c->message, sizeof c->message, "the entry threw an exception: %s", e.what());
                } catch (...) {
                    c->status = kException;
                    std::snprintf(c->message, sizeof c->message, "the entry threw an exception");
                }
            } else {
                autocomp_empty_kernel<<<1, 1>>>();
            }
            launch = cudaGetLastError();
            cudaEventRecord(st.e1, 0);
            run = cudaEventSynchronize(st.e1);
            // What the outputs hold the moment the default stream's work is done.
            if (run == cudaSuccess)
                for (std::size_t b = 0; b < out_n.size(); ++b)
                    cudaMemcpyAsync(st.shadow[b].ptr, st.out[b].ptr, out_n[b] * 4, cudaMemcpyDeviceToDevice, st.side);
            if (run == cudaSuccess)
                run = cudaStreamSynchronize(st.side);
        }
        c->returned.store(seq, std::memory_order_release);
        if (ok) {
            const cudaError_t all = cudaDeviceSynchronize();
            if (run == cudaSuccess)
                run = all;
            if (launch != cudaSuccess || run != cudaSuccess) {
                const cudaError_t e = launch != cudaSuccess ? launch : run;
                c->status = sticky(e) ? kDeviceLost : kCudaError;
                std::snprintf(c->message, sizeof c->message, "CUDA error %s %s (%s)", cuda_text(e).c_str(), g_context,
                              launch != cudaSuccess ? "reported right after the call: a launch error"
                                                    : "reported when the call's work completed");
            } else {
                float ms = -1.0f;
                if (cudaEventElapsedTime(&ms, st.e0, st.e1) == cudaSuccess)
                    c->event_ms = ms;
                try {
                    unsigned changes = 0;
                    for (std::size_t b = 0; b < out_n.size(); ++b) {
                        check(cudaMemset(st.counter.ptr, 0, 4), "cudaMemset");
                        autocomp_count_changes<<<256, 256>>>(static_cast<const unsigned*>(st.out[b].ptr),
                                                             static_cast<const unsigned*>(st.shadow[b].ptr), out_n[b],
                                                             static_cast<unsigned*>(st.counter.ptr));
                        unsigned n = 0;
                        check(cudaMemcpy(&n, st.counter.ptr, 4, cudaMemcpyDeviceToHost), "counting late writes");
                        changes += n;
                        // The outputs as they were when the call returned: late work is not credited.
                        check(cudaMemcpy(slot + c->out_offset[b], st.shadow[b].ptr, out_n[b] * 4, cudaMemcpyDeviceToHost),
                              "downloading an output");
                    }
                    c->late_writes = changes;
                    for (std::uint32_t b = 0; b < c->n_in && command == kCall; ++b) {
                        const std::size_t n = c->in_count[b];
                        float* values = reinterpret_cast<float*>(slot + c->in_offset[b]);
                        const std::uint32_t elem = p.input_elems[b];
                        if (elem == kF32) {
                            check(cudaMemcpy(values, st.in[b].ptr, n * 4, cudaMemcpyDeviceToHost), "downloading an input");
                        } else {
                            st.host.resize(n * 2);
                            check(cudaMemcpy(st.host.data(), st.in[b].ptr, n * 2, cudaMemcpyDeviceToHost), "downloading an input");
                            for (std::size_t i = 0; i < n; ++i) {
                                if (elem == kF16) {
                                    __half h;
                                    std::memcpy(&h, st.host.data() + 2 * i, 2);
                                    values[i] = __half2float(h);
                                } else {
                                    __nv_bfloat16 h;
                                    std::memcpy(&h, st.host.data() + 2 * i, 2);
                                    values[i] = __bfloat162float(h);
                                }
                            }
                        }
                    }
                } catch (const std::exception& e) {
                    c->status = kCudaError;
                    std::snprintf(c->message, sizeof c->message, "%s", e.what());
                }
            }
        }
        const bool lost = c->status == kDeviceLost;
        std::snprintf(g_context, sizeof g_context, "between calls");
        c->done.store(seq, std::memory_order_release);
        channel::wake(&c->done);
        if (lost)
            _exit(3);
    }
}

} // namespace worker

inline int harness_main(int argc, char** argv, const Problem& p) {
    using namespace worker;
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
        std::signal(sig, on_fatal_signal);
    int fd = 3;
    std::string object, arch;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i], value = argv[i + 1];
        if (key == "--channel-fd")
            fd = std::atoi(value.c_str());
        else if (key == "--object")
            object = value;
        else if (key == "--arch")
            arch = value;
        else
            fail(nullptr, kBadRequest, "unknown option " + key);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_size < static_cast<off_t>(kControlBytes))
        fail(nullptr, kBadRequest, "no channel on fd " + std::to_string(fd));
    const std::size_t size = static_cast<std::size_t>(sb.st_size);
    void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED)
        fail(nullptr, kBadRequest, "cannot map the channel");
    auto* c = static_cast<Control*>(mem);
    for (int waited = 0; c->magic != kMagic; ++waited) {
        if (waited > 60000)
            fail(nullptr, kBadRequest, "the channel has no judge's header");
        usleep(1000);
    }
    if (c->version != kVersion)
        fail(nullptr, kBadRequest, "the judge speaks another channel version");

    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
        fail(c, kLoadError, "no usable CUDA device: " + (e != cudaSuccess ? cuda_text(e) : std::string("no device found")));
    State st;
    try {
        check(cudaSetDevice(0), "cudaSetDevice");
        describe_device(0, c->device);
        const std::string have = "sm_" + std::to_string(c->device.cc_major) + std::to_string(c->device.cc_minor);
        if (!arch.empty() && arch != have)
            fail(c, kLoadError, "the GPU (" + std::string(c->device.name) + ") is " + have + " but the target builds for " + arch +
                                    ": set the target setting arch to " + have + " (AUTOCOMP_CUDA_ARCH=" + have + ")");
        c->device.copy_gbps = measure_copy_gbps();
        const std::size_t l2 = static_cast<std::size_t>(c->device.l2_bytes > 0 ? c->device.l2_bytes : 0);
        st.flush.ensure(std::max<std::size_t>(256u << 20, 4 * l2));
        c->device.flush_bytes = st.flush.bytes;
        st.counter.ensure(256);
        check(cudaEventCreate(&st.e0), "cudaEventCreate");
        check(cudaEventCreate(&st.e1), "cudaEventCreate");
        check(cudaStreamCreateWithFlags(&st.side, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    } catch (const std::exception& ex) {
        fail(c, kLoadError, ex.what());
    }
    void* handle = dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        fail(c, kLoadError, std::string("cannot load the candidate: ") + (why ? why : "unknown error"));
    }
    for (const Entry& entry : entries()) {
        void* sym = dlsym(handle, entry.name);
        if (!sym)
            fail(c, kLoadError, std::string("the candidate does not define extern \"C\" ") + entry.name);
        std::memcpy(entry.slot, &sym, sizeof sym);
    }
    if (const cudaError_t le = cudaGetLastError(); le != cudaSuccess)
        fail(c, kLoadError, "loading the candidate's kernels failed: " + cuda_text(le));
    std::snprintf(g_context, sizeof g_context, "between calls");
    c->status = kOk;
    c->hello.store(1, std::memory_order_release);
    channel::wake(&c->hello);
    return serve(p, c, static_cast<unsigned char*>(mem), size, st);
}

} // namespace cuda
} // namespace autocomp

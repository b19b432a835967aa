// autocomp_cuda_harness.h — evaluation harness of the CUDA target (C++17, Linux).
//
// A problem's harness.cpp describes its kernel with an autocomp::cuda::Problem and hands it to
// autocomp::cuda::harness_main(). The same file is built twice into the per-machine cache by the
// target's setup steps:
//
//   judge  = harness.cpp + the problem's reference (host C++, double accumulation), built with the
//            host compiler and no CUDA at all (autocomp_cuda_judge.h). It owns the seed, the inputs,
//            its clock and the verdict; it parses ptxas's resource report, drives the worker over
//            shared memory, compares outputs with its own reference results and cross-checks the
//            worker's cudaEvent times with its own clock.
//   worker = harness.cpp built by nvcc with -DAUTOCOMP_CUDA_WORKER (autocomp_cuda_worker.h). It owns
//            the GPU: it measures the device's copy bandwidth, then loads the candidate's shared
//            object, and for every call uploads the judge's inputs, poisons the outputs, flushes the
//            L2 cache, times the call with CUDA events and checks for errors and for work still
//            running after the entry returned.
//
// The candidate's code runs in the worker's process, so nothing the worker reports is trusted
// beyond what the judge can check: outputs against its reference, inputs against its copies, and
// event times against its own wall clock.
#pragma once

#include "autocomp_cuda_channel.h"
#include "autocomp/entries.h"  // Entry, entries(), register_entry (the C/C++ kit, backends/common/include)
#include "autocomp/shapes.h"   // Shape, Rng, Buffer

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace autocomp {
namespace cuda {

// Device pointers of one call, in the order of the problem's inputs and outputs.
struct DeviceArgs {
    std::vector<void*> in;
    std::vector<float*> out;
    template <typename T>
    const T* input(std::size_t i) const { return static_cast<const T*>(in.at(i)); }
};

struct Problem {
    std::string name;
    std::string dtype = "fp32";
    std::vector<std::string> keys;
    // Element type on the device of each input (channel Elem values); fp32 when absent. The judge
    // draws fp16 inputs exactly representable in fp16, so its reference sees the same numbers.
    std::vector<std::uint32_t> input_elems;
    std::function<Buffers(const Shape&, Rng&)> make_inputs;
    std::function<std::vector<Dims>(const Shape&)> outputs;  // every output is fp32
    std::function<double(const Shape&)> flops;
    std::function<double(const Shape&)> bytes;
    // judge: the trusted reference on the host
    std::function<void(const Shape&, const Buffers& in, Buffers& out)> reference;
    // worker: the candidate's entry on device pointers
    std::function<void(const Shape&, const DeviceArgs&)> call;
};

// The candidate's entry points, looked up in its shared object by the worker.
// The candidate's entry points, looked up in its shared object by the worker (the kit's registry).
using ::autocomp::Entry;
using ::autocomp::entries;
using ::autocomp::register_entry;

int harness_main(int argc, char** argv, const Problem& p);

} // namespace cuda
} // namespace autocomp

#ifdef AUTOCOMP_CUDA_WORKER
// A pointer to the candidate's function, filled from its shared object.
#define AUTOCOMP_CUDA_ENTRY(name, params)                                                                      \
    static void(*name) params = nullptr;                                                                       \
    static const int autocomp_cuda_entry_##name = ::autocomp::cuda::register_entry(#name, reinterpret_cast<void*>(&name));
#include "autocomp_cuda_worker.h"
#else
// The judge never calls the candidate: the entry is only a name here.
#define AUTOCOMP_CUDA_ENTRY(name, params)                                                                      \
    static const int autocomp_cuda_entry_##name = ::autocomp::cuda::register_entry(#name, nullptr);
#ifdef AUTOCOMP_CUDA_JUDGE_IMPLEMENTATION
#include "autocomp_cuda_judge.h"
#endif
#endif

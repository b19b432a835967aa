// autocomp_harness.h — evaluation harness of the CPU target (C++17, header-only, Linux x86-64).
//
// A problem's harness.cpp describes its kernel with an autocomp::Problem, declares the kernel's
// entry points with AUTOCOMP_ENTRY and hands the problem to autocomp::harness_main(). The same
// harness.cpp is built twice, both times into the per-machine cache by the target's setup steps,
// never into a directory a candidate step can write:
//
//   judge  = harness.cpp + the trusted reference (autocomp_judge.h). It owns the clock, the inputs,
//            the seed and the verdict. It runs the static checks (lint on the preprocessed source,
//            gate on the compiled object), then drives a worker through shared memory: it writes
//            fresh inputs for every call, times each call or batch itself, compares outputs of
//            calls it chose at random with its own reference results, and watches the worker's
//            threads and CPUs from outside (/proc).
//   worker = harness.cpp built with -DAUTOCOMP_WORKER (autocomp_worker.h). It installs a seccomp
//            allow-list, then loads the candidate's shared object (which the gate has checked to
//            have no constructors of its own) and calls the kernel when the judge asks. It never
//            sees the seed, the shapes to come or which calls are checked.
//
// Everything the worker process does is treated as untrusted: its memory, its exit status and its
// output. The judge parses what a candidate step wrote (preprocessed text, the object file,
// compiler remarks, a callgrind profile) as data, with size limits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "autocomp/entries.h"
#include "autocomp/shapes.h"

namespace autocomp {

// ---------------------------------------------------------------------------------------------
// What a problem supplies.

struct Problem {
    std::string name;                                                          // kernel name, for messages
    std::string dtype = "fp32";                                                // for feedback text
    std::vector<std::string> keys;                                             // shape keys that must be present
    std::function<Buffers(const Shape&, Rng&)> make_inputs;                    // fresh inputs (throws for an invalid shape)
    std::function<std::vector<Dims>(const Shape&)> outputs;                    // dims of each output buffer
    std::function<void(const Shape&, const Spans& in, const Spans& out)> call; // call the kernel once
    std::function<double(const Shape&)> flops;                                 // useful floating-point ops
    std::function<double(const Shape&)> bytes;                                 // compulsory memory traffic
};

} // namespace autocomp

#ifdef AUTOCOMP_WORKER
// The worker calls the candidate through a pointer filled from its shared object after the
// seccomp filter is in place.
#define AUTOCOMP_ENTRY(ret, name, params)                                                                     \
    static ret(*name) params = nullptr;                                                                      \
    static const int autocomp_entry_##name = ::autocomp::register_entry(#name, reinterpret_cast<void*>(&name));
#include "autocomp_worker.h"
#else
// The judge links the trusted reference, which defines the entry points.
#define AUTOCOMP_ENTRY(ret, name, params)                                                                     \
    extern "C" ret name params;                                                                               \
    static const int autocomp_entry_##name = ::autocomp::register_entry(#name, nullptr);
#ifdef AUTOCOMP_JUDGE_IMPLEMENTATION
// The judge's problem-independent part (tools/judge_core.cpp), compiled once per machine.
#include "autocomp_judge.h"
#else
namespace autocomp {
int harness_main(int argc, char** argv, const Problem& p);
}
#endif
#endif

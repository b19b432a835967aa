// autocomp_rvv.h — what a problem's harness.cpp of the rvv target adds to the CPU target's harness
// (backends/common/include/autocomp_harness.h, whose Problem, shapes and RNG it reuses).
//
// The same harness.cpp is built three times by the rvv target's setup steps (backends/rvv/backend.yaml):
//   judge   (x86-64, native)  harness.cpp + the trusted reference + the judge core: owns the seed, the
//                             inputs, the reference results and the verdict;
//   worker  (riscv64, -DAUTOCOMP_RVV_WORKER) harness.cpp + tools/worker_main.cpp, linked statically
//                             with the candidate's object by the candidate's link step and run under
//                             qemu-riscv64; it serves the judge's requests over the shared-memory
//                             channel of the CPU target (autocomp_channel.h).
// AUTOCOMP_COUNTED(call) wraps the one kernel call inside Problem::call: in the worker it is bracketed
// by the two marker functions that the counting plugin (tools/count_plugin.c) watches, so conversions
// the harness does around the call (int8 inputs from the channel's floats, say) are not counted.
#pragma once

#ifdef AUTOCOMP_RVV_WORKER
extern "C" void autocomp_rvv_count_begin();
extern "C" void autocomp_rvv_count_end();
#define AUTOCOMP_COUNTED(call)                                                                                 \
    do {                                                                                                       \
        autocomp_rvv_count_begin();                                                                            \
        call;                                                                                                  \
        autocomp_rvv_count_end();                                                                              \
    } while (0)
#else
#define AUTOCOMP_COUNTED(call)                                                                                 \
    do {                                                                                                       \
        call;                                                                                                  \
    } while (0)
#endif

// The rvv judge's problem-independent part, built once per machine into the cache (see
// backends/rvv/backend.yaml). It compiles the CPU target's judge (autocomp_judge.h: seed, inputs,
// comparison, channel, lint, check) and replaces its entry point with the rvv one
// (autocomp_rvv_judge.h: gate for riscv64 objects, counting, report). The CPU judge's own
// harness_main is renamed out of the way rather than edited, so the two targets share one judge.
#define AUTOCOMP_JUDGE_IMPLEMENTATION
#define harness_main cpu_harness_main
#include "autocomp_harness.h"
#undef harness_main
#include "autocomp_rvv_judge.h"

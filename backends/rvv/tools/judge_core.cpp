// The rvv judge's problem-independent part, built once per machine into the cache (see
// backends/rvv/backend.yaml). It compiles the CPU judge of the C/C++ kit (backends/common/include:
// seed, inputs, comparison, channel, lint, check) without its entry point (AUTOCOMP_JUDGE_MODES),
// then the rvv modes (autocomp_rvv_judge.h), whose table starts from the CPU judge's and replaces
// lint, gate, count and report.
#define AUTOCOMP_JUDGE_IMPLEMENTATION
#define AUTOCOMP_JUDGE_MODES
#include "autocomp_harness.h"
#include "autocomp_rvv_judge.h"

// The C/C++ judge kit's compiled part for the CPU-style targets (cpu, cpu-instructions): every mode
// of the CPU judge (lint, gate, check, bench, count, report, selftime) and the channel to the
// workers. Built once per machine and kit version ({backend_hash}) into the cache by the target's
// setup; each problem's judge is then its harness.cpp and reference linked with this object.
#define AUTOCOMP_JUDGE_IMPLEMENTATION
#include "autocomp_harness.h"

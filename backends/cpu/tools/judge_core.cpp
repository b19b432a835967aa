// The judge's problem-independent part: every mode (lint, gate, check, bench, count, report,
// selftime) and the channel to the workers. Built once per machine into the cache by the target's
// setup; each problem's judge is then its harness.cpp and reference linked with this object.
#define AUTOCOMP_JUDGE_IMPLEMENTATION
#include "autocomp_harness.h"

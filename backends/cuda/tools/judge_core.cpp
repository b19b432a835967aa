// The judge's problem-independent part (autocomp_cuda_judge.h), built once per machine with the host
// compiler; each problem's judge is its harness.cpp and reference linked with this object.
#define AUTOCOMP_CUDA_JUDGE_IMPLEMENTATION
#include "autocomp_cuda_harness.h"

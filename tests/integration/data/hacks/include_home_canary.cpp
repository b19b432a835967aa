// Quotes a file from the user's home directory (AUTOCOMP_HOME_CANARY is substituted by the test).
#include "AUTOCOMP_HOME_CANARY"
extern "C" void gemm(int, int, int, const float*, const float*, float*) {}

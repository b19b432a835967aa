// A setup tool that cannot be built on any machine: the header it includes is not there (as the cpu
// target's roofline tool could not find ../include when the sandbox hid it).
#include "../include/absent_header.h"
int main() { return 0; }

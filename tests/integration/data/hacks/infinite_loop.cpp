// Never returns: the run step's watchdog must kill it (status timeout).
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    volatile unsigned long spin = 0;
    for (;;)
        spin = spin + static_cast<unsigned long>(M + N + K) + (A != B) + (C != nullptr);
}

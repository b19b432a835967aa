// Opens a TCP connection to 1.1.1.1:80 and, if that works, returns wrong results so it is noticed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
extern "C" void gemm(int M, int N, int K, const float* A, const float* B, float* C) {
    bool connected = false;
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0) {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(80);
        inet_pton(AF_INET, "1.1.1.1", &addr.sin_addr);
        connected = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
        close(fd);
    }
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = connected ? 1.0f : 0.0f;
            for (int k = 0; k < K; ++k)
                s += A[i * K + k] * B[k * N + j];
            C[i * N + j] = s;
        }
}

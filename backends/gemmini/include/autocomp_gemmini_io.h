// Printing and comparison for the gemmini harnesses. Numbers are formatted here, not by printf's
// conversions: the bare-metal printf of riscv-tests handles only a few of them.
#ifndef AUTOCOMP_GEMMINI_IO_H
#define AUTOCOMP_GEMMINI_IO_H

#include <stdint.h>
#include <stdio.h>

static inline const char *ac_u64_text(uint64_t v, char *buf /* 24 bytes */)
{
    char *p = buf + 23;
    *p = 0;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return p;
}

static inline const char *ac_i64_text(int64_t v, char *buf /* 24 bytes */)
{
    if (v >= 0)
        return ac_u64_text((uint64_t)v, buf);
    char *p = (char *)ac_u64_text((uint64_t)(-(v + 1)) + 1, buf) - 1; // at most 20 digits: room for the sign
    *p = '-';
    return p;
}

static inline const char *ac_hex64_text(uint64_t v, char *buf /* 17 bytes */)
{
    for (int i = 15; i >= 0; --i, v >>= 4)
        buf[i] = "0123456789abcdef"[v & 15];
    buf[16] = 0;
    return buf;
}

#ifndef AUTOCOMP_GEMMINI_HOST
static inline uint64_t ac_read_instret(void)
{
    uint64_t n;
    __asm__ volatile("rdinstret %0" : "=r"(n));
    return n;
}
#endif

static inline void ac_print_header(const char *problem, const char *shape, const char *key)
{
    char buf[24];
    printf("autocomp-gemmini: %s %s key=%s repeats=%s\n", problem, shape, key, ac_u64_text(AC_REPEATS, buf));
}

static inline void ac_print_checksum(int repeat, uint64_t sum)
{
    char a[24], h[17];
    printf("repeat %s: checksum %s\n", ac_u64_text((uint64_t)repeat, a), ac_hex64_text(sum, h));
}

// The latency line is the one Autocomp's Gemmini evaluator reads (a read_cycles() delta); on spike a
// cycle is one retired instruction, on FireSim it is an RTL cycle.
static inline void ac_print_measurement(uint64_t cycles, uint64_t instructions)
{
    char a[24], b[24];
    printf("Generated implementation latency: %s cycles\n", ac_u64_text(cycles, a));
    printf("Generated implementation instructions: %s\n", ac_u64_text(instructions, b));
}

static inline int ac_report_failure(int repeat, const char *what, long row, long col, int64_t got, int64_t want)
{
    char r[24], i[24], j[24], g[24], w[24];
    if (row < 0)
        printf("Incorrect result: repeat %s: %s\n", ac_u64_text((uint64_t)repeat, r), what);
    else
        printf("Incorrect result: repeat %s: %s[%s][%s] = %s, expected %s\n", ac_u64_text((uint64_t)repeat, r), what,
               ac_u64_text((uint64_t)row, i), ac_u64_text((uint64_t)col, j), ac_i64_text(got, g), ac_i64_text(want, w));
    return 1;
}

// Exact int8 equality, element by element; the first mismatch is named.
static inline int ac_compare_i8(int repeat, const int8_t *got, const int8_t *want, long rows, long cols)
{
    for (long i = 0; i < rows; ++i)
        for (long j = 0; j < cols; ++j)
            if (got[i * cols + j] != want[i * cols + j])
                return ac_report_failure(repeat, "C", i, j, got[i * cols + j], want[i * cols + j]);
    return 0;
}

static inline void ac_print_verdict(int failures)
{
    printf(failures ? "Incorrect result\n" : "Correct result\n");
}

#endif

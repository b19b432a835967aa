// The gemmini target's trusted helpers, shared by every problem's harness.c in both of its builds:
// the RISC-V one that runs under spike --extension=gemmini (or on FireSim) with the candidate pasted
// in, and the host one (-DAUTOCOMP_GEMMINI_HOST) that the judge builds with the host compiler and
// runs itself. Both draw the same inputs from the same key and print the same checksums, so the judge
// can check what the simulated run printed against a run the candidate never touched.
//
// Output lines (parsed by tools/gemmini_output.py):
//   autocomp-gemmini: <problem> <shape> key=<key> repeats=<n>
//   repeat <i>: checksum <16 hex digits>
//   Generated implementation latency: <n> cycles
//   Generated implementation instructions: <n>
//   Correct result | Incorrect result: <where>
#ifndef AUTOCOMP_GEMMINI_H
#define AUTOCOMP_GEMMINI_H

#include <stddef.h>
#include <stdint.h>

#define AC_REPEATS 5

typedef struct {
    uint64_t state;
} ac_rng;

// FNV-1a over the key text: the data of every repeat follows from the key alone.
static inline uint64_t ac_hash_text(const char *text)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *text; ++text) {
        h ^= (uint8_t)*text;
        h *= 0x100000001b3ull;
    }
    return h;
}

// splitmix64: small, and identical on every platform.
static inline uint64_t ac_next(ac_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void ac_seed(ac_rng *rng, const char *key, int repeat)
{
    rng->state = ac_hash_text(key) ^ (0x632be59bd9b4e019ull * (uint64_t)(repeat + 1));
    (void)ac_next(rng);
}

// Uniform in [lo, hi].
static inline int32_t ac_uniform(ac_rng *rng, int32_t lo, int32_t hi)
{
    return lo + (int32_t)(ac_next(rng) % (uint64_t)(hi - lo + 1));
}

static inline void ac_fill_i8(ac_rng *rng, int8_t *p, size_t n, int lo, int hi)
{
    for (size_t i = 0; i < n; ++i)
        p[i] = (int8_t)ac_uniform(rng, lo, hi);
}

static inline void ac_fill_i32(ac_rng *rng, int32_t *p, size_t n, int32_t lo, int32_t hi)
{
    for (size_t i = 0; i < n; ++i)
        p[i] = ac_uniform(rng, lo, hi);
}

// Gemmini's output scaling of an accumulator value by 2^-shift (the float acc_scale 1/2^shift):
// round half to even, then saturate to int8, in integers so host and RISC-V agree bit for bit.
static inline int8_t ac_scale_shift_clamp(int64_t acc, int shift)
{
    int64_t q = acc;
    if (shift > 0) {
        q = acc >> shift; // floor
        const int64_t rem = acc - q * ((int64_t)1 << shift);
        const int64_t half = (int64_t)1 << (shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q += 1;
    }
    return (int8_t)(q > 127 ? 127 : (q < -128 ? -128 : q));
}

static inline uint64_t ac_checksum(const void *data, size_t bytes)
{
    const uint8_t *p = (const uint8_t *)data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < bytes; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

#endif

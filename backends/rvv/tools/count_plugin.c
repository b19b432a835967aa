/* count_plugin.c — a QEMU TCG plugin that counts the guest instructions executed between two marker
 * functions of the rvv worker (qemu-riscv64, one vCPU).
 *
 *   qemu-riscv64 -plugin count_plugin.so,out=FILE[,begin=SYMBOL,end=SYMBOL] worker ...
 *
 * Every translated block adds its instruction count, its RVV instructions and its vsetvl*
 * instructions to three counters when it executes (inline adds: exact and cheap). The first
 * instruction of the `begin` marker snapshots the counters and the first instruction of the `end`
 * marker records the differences: one line per begin/end pair. The worker brackets an empty pair
 * first (its constant cost, which the judge subtracts) and then each kernel call. Each block also
 * counts its executions, so the hottest blocks (by instructions executed) can be named with their
 * symbol: the judge keeps those of the candidate's functions as "per loop" feedback.
 *
 * The output file is opened when the plugin is installed, before any guest code runs. */
#include "qemu_plugin_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

enum { kMaxPairs = 256, kTableBits = 16, kTableSize = 1 << kTableBits, kHotBlocks = 12 };

struct counters {
    uint64_t total, vector, vsetvl;
};

struct block {
    uint64_t vaddr;
    uint32_t n_insns, n_vector, n_vsetvl, used;
    uint64_t execs;
    char symbol[96];
};

static struct counters s_now, s_begin;
static struct counters s_pairs[kMaxPairs];
static int s_pair_count, s_in_pair, s_unpaired;
static struct block *s_blocks; /* open addressing on (vaddr, n_insns) */
static int s_table_full;
static FILE *s_out;
static const char *s_begin_symbol = "autocomp_rvv_count_begin";
static const char *s_end_symbol = "autocomp_rvv_count_end";

/* RVV 1.0: OP-V (0x57) is arithmetic and, with funct3 = 7, vsetvli/vsetivli/vsetvl; LOAD-FP (0x07)
 * and STORE-FP (0x27) are vector loads/stores when the width field is 0, 5, 6 or 7 (8..64-bit
 * elements), scalar FP loads/stores otherwise. */
static void classify(const struct qemu_plugin_insn *insn, uint32_t *vector, uint32_t *vsetvl)
{
    if (qemu_plugin_insn_size(insn) != 4)
        return;
    uint32_t w;
    memcpy(&w, qemu_plugin_insn_data(insn), 4);
    const uint32_t opcode = w & 0x7f, funct3 = (w >> 12) & 7;
    if (opcode == 0x57) {
        ++*vector;
        if (funct3 == 7)
            ++*vsetvl;
    } else if ((opcode == 0x07 || opcode == 0x27) && (funct3 == 0 || funct3 >= 5)) {
        ++*vector;
    }
}

static struct block *block_for(uint64_t vaddr, uint32_t n)
{
    uint64_t h = (vaddr * 0x9E3779B97F4A7C15ull) ^ n;
    for (int probe = 0; probe < kTableSize; ++probe) {
        struct block *b = &s_blocks[(h + (uint64_t)probe) & (kTableSize - 1)];
        if (!b->used) {
            b->used = 1;
            b->vaddr = vaddr;
            b->n_insns = n;
            return b;
        }
        if (b->vaddr == vaddr && b->n_insns == n)
            return b;
    }
    s_table_full = 1;
    return NULL;
}

static void on_begin(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    (void)udata;
    if (s_in_pair)
        ++s_unpaired;
    s_begin = s_now;
    s_in_pair = 1;
}

static void on_end(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    (void)udata;
    if (!s_in_pair) {
        ++s_unpaired;
        return;
    }
    s_in_pair = 0;
    if (s_pair_count < kMaxPairs) {
        struct counters *p = &s_pairs[s_pair_count++];
        p->total = s_now.total - s_begin.total;
        p->vector = s_now.vector - s_begin.vector;
        p->vsetvl = s_now.vsetvl - s_begin.vsetvl;
    }
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    const size_t n = qemu_plugin_tb_n_insns(tb);
    uint32_t vector = 0, vsetvl = 0;
    for (size_t i = 0; i < n; ++i)
        classify(qemu_plugin_tb_get_insn(tb, i), &vector, &vsetvl);
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &s_now.total, n);
    if (vector)
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &s_now.vector, vector);
    if (vsetvl)
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &s_now.vsetvl, vsetvl);
    if (n == 0)
        return;
    struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
    const char *symbol = qemu_plugin_insn_symbol(first);
    struct block *b = block_for(qemu_plugin_tb_vaddr(tb), (uint32_t)n);
    if (b) {
        b->n_vector = vector;
        b->n_vsetvl = vsetvl;
        snprintf(b->symbol, sizeof b->symbol, "%s", symbol ? symbol : "?");
        qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->execs, 1);
    }
    /* The markers are called (a jump ends a block), so their first instruction starts a block. */
    if (symbol && strcmp(symbol, s_begin_symbol) == 0)
        qemu_plugin_register_vcpu_insn_exec_cb(first, on_begin, QEMU_PLUGIN_CB_NO_REGS, NULL);
    else if (symbol && strcmp(symbol, s_end_symbol) == 0)
        qemu_plugin_register_vcpu_insn_exec_cb(first, on_end, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

static int by_weight(const void *a, const void *b)
{
    const struct block *x = *(const struct block *const *)a, *y = *(const struct block *const *)b;
    const uint64_t wx = x->execs * x->n_insns, wy = y->execs * y->n_insns;
    return wx < wy ? 1 : wx > wy ? -1 : 0;
}

static void on_plugin_exit(qemu_plugin_id_t id, void *udata)
{
    (void)id;
    (void)udata;
    if (!s_out)
        return;
    fprintf(s_out, "version 1\n");
    for (int i = 0; i < s_pair_count; ++i)
        fprintf(s_out, "pair %llu %llu %llu\n", (unsigned long long)s_pairs[i].total,
                (unsigned long long)s_pairs[i].vector, (unsigned long long)s_pairs[i].vsetvl);
    if (s_unpaired || s_in_pair)
        fprintf(s_out, "unpaired %d\n", s_unpaired + s_in_pair);
    if (s_table_full)
        fprintf(s_out, "blocks-truncated 1\n");
    struct block **hot = calloc(kTableSize, sizeof *hot);
    int used = 0;
    for (int i = 0; hot && i < kTableSize; ++i)
        if (s_blocks[i].used && s_blocks[i].execs)
            hot[used++] = &s_blocks[i];
    if (hot)
        qsort(hot, (size_t)used, sizeof *hot, by_weight);
    /* The candidate's blocks may be behind the worker's own (the judge filters by symbol). */
    for (int i = 0; i < used && i < 64; ++i)
        fprintf(s_out, "block %llx %u %u %u %llu %s\n", (unsigned long long)hot[i]->vaddr, hot[i]->n_insns,
                hot[i]->n_vector, hot[i]->n_vsetvl, (unsigned long long)hot[i]->execs, hot[i]->symbol);
    fprintf(s_out, "end\n");
    free(hot);
    fclose(s_out);
    s_out = NULL;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    (void)info;
    const char *out = NULL;
    for (int i = 0; i < argc; ++i) {
        if (strncmp(argv[i], "out=", 4) == 0)
            out = argv[i] + 4;
        else if (strncmp(argv[i], "begin=", 6) == 0)
            s_begin_symbol = argv[i] + 6;
        else if (strncmp(argv[i], "end=", 4) == 0)
            s_end_symbol = argv[i] + 4;
        else {
            fprintf(stderr, "count_plugin: unknown argument '%s' (out=FILE, begin=SYMBOL, end=SYMBOL)\n", argv[i]);
            return -1;
        }
    }
    if (!out) {
        fprintf(stderr, "count_plugin: out=FILE is required\n");
        return -1;
    }
    s_out = fopen(out, "w");
    s_blocks = calloc(kTableSize, sizeof *s_blocks);
    if (!s_out || !s_blocks) {
        fprintf(stderr, "count_plugin: cannot open %s\n", out);
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
    return 0;
}

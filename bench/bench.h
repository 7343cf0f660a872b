/* bench.h -- what the benchmark programs share beyond base.h (clocks
 * base_now and base_cpu_now, base_median): a small seeded generator
 * for random genomes. */
#ifndef DSE_BENCH_H
#define DSE_BENCH_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "base.h"

/* xorshift64: uniform integer in [lo, hi]; state must be non-zero. */
static inline int bench_rnd(uint64_t *state, int lo, int hi)
{
    uint64_t x = *state;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    *state = x;
    return lo + (int)(x % (uint64_t)(hi - lo + 1));
}

#endif

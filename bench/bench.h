/* bench.h -- what the benchmark programs share: clocks, the median of
 * repeated timings, and a small seeded generator for random genomes. */
#ifndef DSE_BENCH_H
#define DSE_BENCH_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic wall clock. */
static inline double bench_wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* This thread's CPU seconds: other load on the machine does not inflate it. */
static inline double bench_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v in place). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* xorshift64: uniform integer in [lo, hi]; state must be non-zero. */
static inline int bench_rnd(uint64_t *state, int lo, int hi)
{
    uint64_t x = *state;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    *state = x;
    return lo + (int)(x % (uint64_t)(hi - lo + 1));
}

#endif

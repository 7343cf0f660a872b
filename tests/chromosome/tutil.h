/* tutil.h -- what the chromosome and mapping tests share besides
 * tests/check.h: an error-message check (TERR), a seeded RNG independent of the engine's,
 * test platforms of any size, and random genomes within bounds.
 */
#ifndef DSE_TEST_CHROM_UTIL_H
#define DSE_TEST_CHROM_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "chrom.h"
#include "mapping.h"
#include "platform.h"

/* err must contain every one of the NULL-terminated substrings. */
static inline void terr_has(const char *file, int line, const char *err, ...)
    __attribute__((sentinel));
#include <stdarg.h>
static inline void terr_has(const char *file, int line, const char *err, ...)
{
    va_list ap;
    va_start(ap, err);
    for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *))
        if (!strstr(err, s)) {
            fprintf(stderr, "%s:%d: error \"%s\" does not mention \"%s\"\n", file, line, err, s);
            check_failures++;
        }
    va_end(ap);
}
#define TERR(err, ...) terr_has(__FILE__, __LINE__, err, __VA_ARGS__, (const char *)NULL)


/* splitmix64: small, seeded, reproducible. */
static inline uint64_t trand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline int trange(uint64_t *s, int lo, int hi) /* inclusive */
{
    return lo + (int)(trand(s) % (uint64_t)(hi - lo + 1));
}

/* A platform of ndev devices "d0".."d<n-1>", one per board. */
static inline platform *tplatform(int ndev)
{
    size_t cap = 512 + (size_t)ndev * 200;
    char *t = malloc(cap);
    size_t u = (size_t)snprintf(t, cap, "{\"format\":\"dse-platform\",\"version\":1,"
                                        "\"name\":\"test%d\",\"devices\":[", ndev);
    for (int d = 0; d < ndev; d++)
        u += (size_t)snprintf(t + u, cap - u,
                              "%s{\"name\":\"d%d\",\"board\":\"b%d\",\"kind\":\"cpu\","
                              "\"freq_mhz\":1000,\"cores\":1,\"memory_mb\":1000,"
                              "\"idle_w\":1,\"busy_w\":2}",
                              d ? "," : "", d, d);
    snprintf(t + u, cap - u, "],\"links\":{\"network\":{\"latency_us\":10,"
                             "\"bandwidth_mbs\":100}}}");
    char err[BASE_ERRLEN];
    platform *p = platform_from_json(t, "test platform", err);
    if (!p) fprintf(stderr, "tplatform: %s\n", err), exit(2);
    free(t);
    return p;
}

static inline void trandom_genome(const chrom *c, const int *lo, const int *hi, int *g,
                                  uint64_t *s)
{
    for (int i = 0; i < chrom_length(c); i++) g[i] = trange(s, lo[i], hi[i]);
}

/* Sparse genomes (mostly zeros) hit the repair rules of the split-point
 * encodings far more often than uniform ones. */
static inline void tsparse_genome(const chrom *c, const int *lo, const int *hi, int *g,
                                  uint64_t *s)
{
    for (int i = 0; i < chrom_length(c); i++)
        g[i] = trange(s, 0, 3) ? lo[i] : trange(s, lo[i], hi[i]);
}

#endif

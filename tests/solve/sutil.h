/* sutil.h -- what the solver tests share: small networks built layer by
 * layer, platforms of devices of distinct speeds, a seeded generator. */
#ifndef DSE_TEST_SOLVE_UTIL_H
#define DSE_TEST_SOLVE_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "cost.h"
#include "net.h"
#include "platform.h"

/* splitmix64 */
static inline uint64_t srand64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline int srange(uint64_t *s, int lo, int hi) { return lo + (int)(srand64(s) % (uint64_t)(hi - lo + 1)); }

/* ndev CPUs d0..d<n-1>, d0 the fastest (freq 3000 - 400 * d MHz), one
 * board each, linked at bw MB/s with lat us; extra_dev1 (or NULL) is
 * appended to device d1's object. */
static inline platform *splatform_link(int ndev, const char *extra_dev1, double bw, double lat)
{
    char t[8192];
    size_t u = (size_t)snprintf(t, sizeof t, "{\"format\":\"dse-platform\",\"name\":\"s%d\",\"devices\":[", ndev);
    for (int d = 0; d < ndev; d++)
        u += (size_t)snprintf(t + u, sizeof t - u,
                              "%s{\"name\":\"d%d\",\"board\":\"b%d\",\"freq_mhz\":%d,\"cores\":1,"
                              "\"memory_mb\":1000,\"idle_w\":1,\"busy_w\":2%s}",
                              d ? "," : "", d, d, 3000 - 400 * d,
                              d == 1 && extra_dev1 ? extra_dev1 : "");
    snprintf(t + u, sizeof t - u, "],\"links\":{\"network\":{\"latency_us\":%g,\"bandwidth_mbs\":%g}}}", lat, bw);
    char err[BASE_ERRLEN];
    platform *p = platform_from_json(t, "test platform", err);
    if (!p) fprintf(stderr, "splatform: %s\n", err), exit(2);
    return p;
}

static inline platform *splatform(int ndev, const char *extra_dev1)
{
    return splatform_link(ndev, extra_dev1, 500, 30);
}

/* Append a layer with inputs by name; exits on error (test set-up). */
static inline void sadd(net *n, const char *name, net_kind k, net_attr a, int nin, const char *i0,
                        const char *i1)
{
    const char *in[2] = {i0, i1};
    char err[BASE_ERRLEN];
    if (net_add(n, name, k, &a, nin, in, err) < 0) fprintf(stderr, "%s\n", err), exit(2);
}

static inline void sfinal(net *n)
{
    char err[BASE_ERRLEN];
    if (net_finalize(n, n->name, err)) fprintf(stderr, "%s\n", err), exit(2);
}

#endif

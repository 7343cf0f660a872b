/* fuzz_json.c -- libFuzzer target for the JSON readers: network, platform,
 * mapping and coefficients files (issue 15).  The first byte of an input
 * picks the reader, the rest is the file's text.  Any byte string must
 * give either an object that holds its reader's invariant -- and that
 * survives its own writer and reader again -- or exactly one error line
 * naming the source; never a crash, a hang, a leak or undefined behaviour
 * (built with ASan + UBSan by scripts/fuzz).
 */
#include "cost.h"
#include "mapping.h"
#include "net.h"
#include "platform.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The network and platform mappings are read against (toy6 and the
 * two-device platform every seed mapping names). */
#define FUZZ_PLAT                                                                               \
    "{\"format\":\"dse-platform\",\"devices\":["                                                \
    "{\"name\":\"d0\",\"board\":\"a\",\"freq_mhz\":1000,\"cores\":2,\"memory_mb\":512,"          \
    "\"idle_w\":1,\"busy_w\":2},"                                                                 \
    "{\"name\":\"d1\",\"board\":\"b\",\"freq_mhz\":1000,\"cores\":2,\"memory_mb\":512,"          \
    "\"idle_w\":1,\"busy_w\":2}],"                                                                \
    "\"links\":{\"same_board\":{\"latency_us\":1,\"bandwidth_mbs\":1000},"                        \
    "\"network\":{\"latency_us\":100,\"bandwidth_mbs\":100}}}"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A refusal: one line, naming the source ("fuzz"). */
static void refused(const char *err)
{
    if (!err[0] || strchr(err, '\n') || !strstr(err, "fuzz")) abort();
}

static net *g_net;
static platform *g_plat;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[BASE_ERRLEN];
    if (size < 1) return 0;
    if (!g_net) {
        g_net = net_zoo("toy6", err);
        g_plat = platform_from_json(FUZZ_PLAT, "fixed", err);
        if (!g_net || !g_plat) abort();
    }
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = 0;
    err[0] = 0;
    switch (data[0] % 4) {
    case 0: {
        net *n = net_from_json(text, "fuzz", err);
        if (!n) {
            refused(err);
            break;
        }
        if (n->n < 1 || net_ncons(n, n->n - 1) != 0) abort();
        for (int i = 0; i < n->n; i++)
            for (int k = 0; k < n->layers[i].nin; k++)
                if (n->layers[i].in[k] >= i || n->layers[i].nin > NET_MAX_IN) abort();
        net_totals t = net_total(n, NET_SPLIT_DEFAULT);
        if (t.macs < 0 || t.macs > NET_COUNT_MAX) abort();
        char *again = net_to_json(n), e2[BASE_ERRLEN];
        net *m = again ? net_from_json(again, "again", e2) : NULL;
        if (!m || m->n != n->n) abort(); /* what dse writes, dse reads */
        net_free(m);
        free(again);
        net_free(n);
        break;
    }
    case 1: {
        platform *p = platform_from_json(text, "fuzz", err);
        if (!p) {
            refused(err);
            break;
        }
        if (p->ndev < 1 || p->ndev > PLAT_MAX_DEV) abort();
        platform_free(p);
        break;
    }
    case 2: {
        mapping *m = mapping_from_json(text, "fuzz", g_net, g_plat, err);
        if (!m) {
            refused(err);
            break;
        }
        char *again = mapping_to_json(m, g_net, g_plat), e2[BASE_ERRLEN];
        mapping *b = again ? mapping_from_json(again, "again", g_net, g_plat, e2) : NULL;
        if (!b || !mapping_equal(b, m)) abort();
        mapping_free(b);
        free(again);
        mapping_free(m);
        break;
    }
    default: {
        cost_coeffs *c = coeffs_from_json(text, "fuzz", err);
        if (!c) {
            refused(err);
            break;
        }
        char *again = coeffs_to_json(c), e2[BASE_ERRLEN];
        cost_coeffs *d = again ? coeffs_from_json(again, "again", e2) : NULL;
        if (!d) abort();
        coeffs_free(d);
        free(again);
        coeffs_free(c);
        break;
    }
    }
    free(text);
    return 0;
}

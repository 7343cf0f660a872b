/* test_repair.c -- devices with a "supports" list (docs/chromosomes.md,
 * "Restricted devices"):
 *  - repair never places a layer on a device that does not support its
 *    kind: random (uniform and sparse) genomes of every encoding, several
 *    networks, the accelerator preset and random restrictions; every
 *    repaired mapping is valid;
 *  - a genome whose mapping needs no repair decodes as without the lists,
 *    and a platform where no device lists supports changes nothing;
 *  - a moved slice goes to a device of the same board first, and merges
 *    with that device's own share of the layer;
 *  - encoding (chrom_encode): single-device mappings are exact in every
 *    encoding, decoded naive genomes re-encode exactly, and the distance
 *    returned is that of the genome's decoded mapping, never worse than
 *    the closest single device; a spatial genome with two bands before
 *    sixteen channel shares re-encodes exactly.
 */
#include "sutil.h"

#include "chrom.h"
#include "mapping.h"

#include <string.h>

static int respects(const mapping *m, const net *n, const platform *pl)
{
    for (int l = 0; l < n->n; l++)
        for (int k = 0; k < mapping_nslices(m, l); k++)
            if (!platform_supports(pl, mapping_slices(m, l)[k].dev, n->layers[l].kind)) return 0;
    return 1;
}

/* A platform of nd devices on nd/2 boards, some restricted at random
 * (every kind stays supported by the unrestricted ones). */
static platform *random_platform(int nd, uint64_t *s)
{
    static const char *kinds[] = {"Conv", "FC", "ReLU", "MaxPool", "BatchNorm", "Add", "Concat", "Flatten", "Softmax"};
    char t[16384], sup[400];
    size_t u = (size_t)snprintf(t, sizeof t, "{\"format\":\"dse-platform\",\"name\":\"r\",\"devices\":[");
    for (int d = 0; d < nd; d++) {
        sup[0] = 0;
        if (d > 0 && srange(s, 0, 1)) {
            size_t q = (size_t)snprintf(sup, sizeof sup, ",\"supports\":[\"Conv\"");
            for (int k = 1; k < 9; k++)
                if (srange(s, 0, 2) == 0) q += (size_t)snprintf(sup + q, sizeof sup - q, ",\"%s\"", kinds[k]);
            snprintf(sup + q, sizeof sup - q, "]");
        }
        u += (size_t)snprintf(t + u, sizeof t - u,
                              "%s{\"name\":\"d%d\",\"board\":\"b%d\",\"freq_mhz\":%d,\"cores\":%d,\"memory_mb\":1000,"
                              "\"idle_w\":1,\"busy_w\":2%s}",
                              d ? "," : "", d, d / 2, srange(s, 1000, 3000), srange(s, 1, 8), sup);
    }
    snprintf(t + u, sizeof t - u, "],\"links\":{\"same_board\":{\"latency_us\":5,\"bandwidth_mbs\":5000},"
                                  "\"network\":{\"latency_us\":30,\"bandwidth_mbs\":500}}}");
    char err[BASE_ERRLEN];
    platform *p = platform_from_json(t, "random", err);
    if (!p) fprintf(stderr, "%s\n", err), exit(2);
    return p;
}

static void random_genome(const int *lo, const int *hi, int len, int *g, uint64_t *s, int sparse)
{
    for (int i = 0; i < len; i++) g[i] = sparse && srange(s, 0, 3) ? lo[i] : srange(s, lo[i], hi[i]);
}

static void repair_property(void)
{
    static const char *nets[] = {"toy6", "branchy", "alexnet-bvlc", "resnet50", "mobilenetv2"};
    char err[BASE_ERRLEN];
    uint64_t s = 7;
    long long decoded = 0, repaired = 0;
    for (int ni = 0; ni < 5; ni++) {
        net *n = net_zoo(nets[ni], err);
        for (int pi = 0; pi < 4; pi++) {
            platform *pl = pi == 0 ? platform_open("jetson-nx-4-cpudla", err) : random_platform(2 + 2 * pi, &s);
            for (int kind = 0; kind < 3; kind++) {
                chrom *c = chrom_new(n, pl->ndev, (chrom_kind)kind, kind == CHROM_HYBRID ? 2 : 0, NET_SPLIT_DEFAULT, err);
                chrom *free_c = chrom_new(n, pl->ndev, (chrom_kind)kind, kind == CHROM_HYBRID ? 2 : 0, NET_SPLIT_DEFAULT, err);
                CHECK(chrom_restrict(c, pl, err) == 0, "%s", err);
                int len = chrom_length(c), lo[4096], hi[4096], g[4096];
                chrom_bounds(c, lo, hi);
                mapping *m = mapping_new(n->n, pl->ndev), *f = mapping_new(n->n, pl->ndev);
                for (int t = 0; t < 300; t++) {
                    random_genome(lo, hi, len, g, &s, t & 1);
                    CHECK(chrom_decode(c, g, len, m, err) == 0, "%s", err);
                    CHECK(chrom_decode(free_c, g, len, f, err) == 0, "%s", err);
                    CHECK(mapping_validate(m, n, err) == 0, "%s: %s", nets[ni], err);
                    CHECK(respects(m, n, pl), "%s on %s: an unsupported layer on a restricted device", nets[ni], pl->name);
                    /* nothing to repair: the same mapping */
                    if (respects(f, n, pl)) CHECK(mapping_equal(m, f));
                    else repaired++;
                    decoded++;
                }
                mapping_free(m), mapping_free(f);
                chrom_free(c), chrom_free(free_c);
            }
            platform_free(pl);
        }
        net_free(n);
    }
    printf("%lld genomes decoded on restricted platforms, %lld repaired\n", decoded, repaired);
    CHECK(repaired > decoded / 4);
}

/* No device lists supports: decoding is unchanged. */
static void unrestricted(void)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo("resnet50", err);
    platform *pl = platform_open("jetson-nx-8-cpugpu", err);
    uint64_t s = 9;
    for (int kind = 0; kind < 3; kind++) {
        chrom *a = chrom_new(n, pl->ndev, (chrom_kind)kind, 3, NET_SPLIT_DEFAULT, err);
        chrom *b = chrom_new(n, pl->ndev, (chrom_kind)kind, 3, NET_SPLIT_DEFAULT, err);
        CHECK(chrom_restrict(b, pl, err) == 0);
        int len = chrom_length(a), lo[4096], hi[4096], g[4096];
        chrom_bounds(a, lo, hi);
        mapping *ma = mapping_new(n->n, pl->ndev), *mb = mapping_new(n->n, pl->ndev);
        for (int t = 0; t < 200; t++) {
            random_genome(lo, hi, len, g, &s, t & 1);
            chrom_decode(a, g, len, ma, err);
            chrom_decode(b, g, len, mb, err);
            CHECK(mapping_equal(ma, mb));
        }
        mapping_free(ma), mapping_free(mb), chrom_free(a), chrom_free(b);
    }
    platform_free(pl);
    net_free(n);
}

/* toy6 (conv, relu, pool, flatten, fc, softmax) on the DLA preset: naive
 * genes put everything on nx1-dla except conv, split 3 ways. */
static void by_hand(void)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo("toy6", err);
    platform *pl = platform_open("jetson-nx-4-cpudla", err);
    chrom *c = chrom_new(n, 8, CHROM_NAIVE, 0, NET_SPLIT_DEFAULT, err);
    CHECK(chrom_restrict(c, pl, err) == 0);
    int cpu1 = platform_find(pl, "nx1-cpu"), dla1 = platform_find(pl, "nx1-dla"), dla2 = platform_find(pl, "nx2-dla");
    /* conv: 8 genes dla1 x3, cpu1 x3, dla2 x2; relu, pool, flatten: dla1; fc: all dla1; softmax dla1 */
    int g[8 + 3 + 8 + 1], k = 0;
    for (int i = 0; i < 3; i++) g[k++] = dla1;
    for (int i = 0; i < 3; i++) g[k++] = cpu1;
    for (int i = 0; i < 2; i++) g[k++] = dla2;
    g[k++] = dla1, g[k++] = dla1, g[k++] = dla1;
    for (int i = 0; i < 8; i++) g[k++] = dla1;
    g[k++] = dla1;
    mapping *m = mapping_new(n->n, 8);
    CHECK(chrom_decode(c, g, k, m, err) == 0, "%s", err);
    /* conv, relu and pool run on the DLA: untouched */
    CHECK(mapping_nslices(m, 0) == 3 && mapping_slices(m, 0)[0].dev == dla1);
    CHECK(mapping_slices(m, 1)[0].dev == dla1 && mapping_slices(m, 2)[0].dev == dla1);
    /* flatten, fc and softmax cannot: to nx1-cpu, the CPU of nx1-dla's board */
    for (int l = 3; l < 6; l++) CHECK(mapping_nslices(m, l) == 1 && mapping_slices(m, l)[0].dev == cpu1);
    /* fc split between dla1 and cpu1 would merge into cpu1's share: */
    for (int i = 0; i < 4; i++) g[11 + i] = cpu1;
    CHECK(chrom_decode(c, g, k, m, err) == 0);
    CHECK(mapping_nslices(m, 4) == 1 && mapping_slices(m, 4)[0].dev == cpu1 && mapping_slices(m, 4)[0].nc == 10);
    mapping_free(m);
    chrom_free(c);
    platform_free(pl);
    net_free(n);
}

static void encoding(void)
{
    static const char *nets[] = {"toy6", "branchy", "alexnet-bvlc", "resnet50"};
    char err[BASE_ERRLEN];
    uint64_t s = 11;
    for (int ni = 0; ni < 4; ni++) {
        net *n = net_zoo(nets[ni], err);
        platform *pl = splatform(4, NULL);
        for (int kind = 0; kind < 3; kind++) {
            chrom *c = chrom_new(n, 4, (chrom_kind)kind, 2, NET_SPLIT_DEFAULT, err);
            int len = chrom_length(c), lo[4096], hi[4096], g[4096], e[4096];
            chrom_bounds(c, lo, hi);
            mapping *t = mapping_new(n->n, 4), *m = mapping_new(n->n, 4), *one = mapping_new(n->n, 4);
            for (int d = 0; d < 4; d++) {
                mapping_set_single(t, n, d);
                CHECK(chrom_encode(c, t, e, err) == 0.0, "%s %s: device %d", nets[ni], chrom_kind_name((chrom_kind)kind), d);
            }
            for (int trial = 0; trial < 12; trial++) {
                random_genome(lo, hi, len, g, &s, trial & 1);
                chrom_decode(c, g, len, t, err);
                double d = chrom_encode(c, t, e, err);
                CHECK(d >= 0 && d <= 1, "%s", err);
                chrom_decode(c, e, len, m, err);
                CHECK(mapping_distance(m, t, n) == d);
                if (kind == CHROM_NAIVE) CHECK(d == 0, "%s naive: re-encoded at distance %g", nets[ni], d);
                double single = 1;
                for (int dv = 0; dv < 4; dv++) {
                    mapping_set_single(one, n, dv);
                    double x = mapping_distance(one, t, n);
                    if (x < single) single = x;
                }
                CHECK(d <= single);
            }
            mapping_free(t), mapping_free(m), mapping_free(one);
            chrom_free(c);
        }
        platform_free(pl);
        net_free(n);
    }
}

/* A spatial genome on 16 devices (p = 16): the first seven splittable
 * layers in bands over devices 0 and 1 (rows alternate between them),
 * every later one by channels over all sixteen (row k's owner is device
 * k). Its decoded mapping re-encodes exactly: only the start that fills
 * the rows with a layer's slices in turn finds it (the first-slice fill
 * gives device 0 fifteen of the sixteen bands' weights). */
static void encoding_bands(void)
{
    char err[BASE_ERRLEN];
    enum { D = 16 };
    net *n = net_zoo("vgg16", err);
    CHECK(n != NULL, "%s", err);
    if (!n) return;
    chrom *c = chrom_new(n, D, CHROM_SPATIAL, D, NET_SPLIT_DEFAULT, err);
    CHECK(c && chrom_set_cut_mode(c, CHROM_CUTS_BANDS) == 0, "%s", err);
    if (!c) {
        net_free(n);
        return;
    }
    int S = chrom_nsplittable(c), len = chrom_length(c), g[512] = {0}, e[512];
    CHECK(S == 16 && len == D * D + S && len <= 512, "vgg16 spatial on 16 devices: %d genes", len);
    for (int k = 0; k < D; k++) {
        g[k * D + k] = S;                     /* row k: device k owns up to the last layer */
        if (k >= 2) g[k * D + k % 2] = 7; /* and device k mod 2 the first seven */
    }
    for (int j = 0; j < 7; j++) g[D * D + j] = 1;
    mapping *t = mapping_new(n->n, D), *m = mapping_new(n->n, D);
    CHECK(t && m && len <= 512, "out of memory");
    if (!t || !m || len > 512) {
        mapping_free(t), mapping_free(m), chrom_free(c), net_free(n);
        return;
    }
    CHECK(chrom_decode(c, g, len, t, err) == 0, "%s", err);
    CHECK(t->cut[0] == MAP_CUT_ROWS && mapping_nslices(t, 0) == 2 && mapping_slices(t, 0)[0].nc == 112,
          "vgg16: conv1_1 not in two even row bands");
    double d = chrom_encode(c, t, e, err);
    CHECK(d == 0, "vgg16 bands then 16 shares: re-encoded at distance %g (%s)", d, err);
    CHECK(chrom_decode(c, e, len, m, err) == 0 && mapping_distance(m, t, n) == d, "%s", err);
    mapping_free(t), mapping_free(m);
    chrom_free(c);
    net_free(n);
}

int main(void)
{
    repair_property();
    unrestricted();
    by_hand();
    encoding();
    encoding_bands();
    return check_done("test_repair");
}

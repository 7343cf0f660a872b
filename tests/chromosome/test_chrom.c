/* test_chrom.c -- the decoding rules of the three encodings, one by one
 * (DESIGN section 5, docs/chromosomes.md): the thesis' worked example
 * (figures 8-11), first-appearance slice order, the repair and tie rules,
 * genome lengths and space sizes from the thesis (section 4.2), errors,
 * and agreement with the reference decoder of refdecode.h.
 */
#include "refdecode.h"

#include <math.h>

static net *zoo(const char *name)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo(name, err);
    if (!n) fprintf(stderr, "%s\n", err), exit(2);
    return n;
}

static chrom *mk(const net *n, int ndev, chrom_kind k, int p, int mask)
{
    char err[BASE_ERRLEN];
    chrom *c = chrom_new(n, ndev, k, p, mask, err);
    if (!c) fprintf(stderr, "chrom_new: %s\n", err), exit(2);
    return c;
}

/* Decode and return a fresh mapping (caller frees), or NULL on error. */
static mapping *dec(const chrom *c, const int *g)
{
    char err[BASE_ERRLEN];
    const net *n = chrom_net(c);
    mapping *m = mapping_new(n->n, chrom_ndev(c));
    if (chrom_decode(c, g, chrom_length(c), m, err)) {
        fprintf(stderr, "decode: %s\n", err);
        check_failures++;
        mapping_free(m);
        return NULL;
    }
    if (mapping_validate(m, n, err)) {
        fprintf(stderr, "validate: %s\n", err);
        check_failures++;
    }
    return m;
}

/* Layer `name` must have exactly the k slices (dev, c0, nc) given. */
static void expect(const char *file, int line, const mapping *m, const net *n, const char *name,
                   int k, const int *s)
{
    int i = net_find(n, name);
    if (i < 0) {
        fprintf(stderr, "%s:%d: no layer %s\n", file, line, name);
        check_failures++;
        return;
    }
    int ok = mapping_nslices(m, i) == k;
    const map_slice *ms = mapping_slices(m, i);
    for (int a = 0; ok && a < k; a++)
        ok = ms[a].dev == s[3 * a] && ms[a].c0 == s[3 * a + 1] && ms[a].nc == s[3 * a + 2];
    if (!ok) {
        fprintf(stderr, "%s:%d: layer %s is", file, line, name);
        for (int a = 0; a < mapping_nslices(m, i); a++)
            fprintf(stderr, " (dev%d %d+%d)", ms[a].dev, ms[a].c0, ms[a].nc);
        fprintf(stderr, ", expected");
        for (int a = 0; a < k; a++)
            fprintf(stderr, " (dev%d %d+%d)", s[3 * a], s[3 * a + 1], s[3 * a + 2]);
        fprintf(stderr, "\n");
        check_failures++;
    }
}
#define EXPECT(m, n, name, k, ...) expect(__FILE__, __LINE__, m, n, name, k, (const int[]){__VA_ARGS__})
/* Whole layer on one device. */
#define WHOLE(m, n, name, dev) \
    EXPECT(m, n, name, 1, dev, 0, (n)->layers[net_find(n, name)].out.c)

static void test_sizes(void)
{
    net *a = zoo("alexnet-bvlc");
    /* Thesis 4.2.1 / 4.2.2: 24 layers, 8 splittable, 5 devices. */
    chrom *c = mk(a, 5, CHROM_NAIVE, 0, NET_SPLIT_DEFAULT);
    CHECK_I64(chrom_length(c), 8 * 5 + 24 - 8);
    CHECK_I64(chrom_length(c), 56);
    CHECK(fabs(chrom_log10_space(c) - 39.142) < 0.0005); /* 56 log10 5 = 39.1425 */
    CHECK_I64(chrom_nsplittable(c), 8);
    int lo[64], hi[64];
    chrom_bounds(c, lo, hi);
    for (int i = 0; i < 56; i++) CHECK(lo[i] == 0 && hi[i] == 4);
    chrom_free(c);
    c = mk(a, 5, CHROM_HYBRID, 5, NET_SPLIT_DEFAULT);
    CHECK_I64(chrom_length(c), 25);
    CHECK(fabs(chrom_log10_space(c) - 23.856) < 0.0005); /* 25 log10 9 = 23.8561 */
    chrom_bounds(c, lo, hi);
    for (int i = 0; i < 25; i++) CHECK(lo[i] == 0 && hi[i] == 8);
    /* "lower than 5^56 by 15 orders of magnitude" */
    CHECK(floor(39.142 - chrom_log10_space(c)) == 15);
    chrom_free(c);
    /* FC-only naive AlexNet (thesis 4.2.1): 3 splittable, 24 + 3*5 - 3 = 36. */
    c = mk(a, 5, CHROM_NAIVE, 0, net_split_mask_parse("fc"));
    CHECK_I64(chrom_length(c), 36);
    CHECK_I64(chrom_nsplittable(c), 3);
    chrom_free(c);
    c = mk(a, 5, CHROM_HYBRID, 2, net_split_mask_parse("fc"));
    CHECK_I64(chrom_length(c), 10);
    chrom_bounds(c, lo, hi);
    CHECK_I64(hi[0], 3);
    chrom_free(c);
    /* Vertical: n genes 0..L, (L+1)^n. */
    c = mk(a, 5, CHROM_VERTICAL, 0, NET_SPLIT_DEFAULT);
    CHECK_I64(chrom_length(c), 5);
    chrom_bounds(c, lo, hi);
    CHECK_I64(hi[4], 24);
    CHECK(fabs(chrom_log10_space(c) - 5 * log10(25.0)) < 1e-9);
    chrom_free(c);
    /* Example of thesis 4.2.1: x = 4 positions per splittable layer. */
    net *t = zoo("toy6");
    c = mk(t, 4, CHROM_NAIVE, 0, NET_SPLIT_DEFAULT);
    CHECK_I64(chrom_length(c), 2 * 4 + 6 - 2);
    chrom_free(c);
    net_free(t);
    net_free(a);
    chrom_kind k;
    CHECK(chrom_kind_parse("naive", &k) == 0 && k == CHROM_NAIVE);
    CHECK(chrom_kind_parse("hybrid", &k) == 0 && k == CHROM_HYBRID);
    CHECK(chrom_kind_parse("vertical", &k) == 0 && k == CHROM_VERTICAL);
    CHECK(chrom_kind_parse("advanced", &k) == -1);
}

/* Thesis figures 8-11 on toy6 (conv 20 channels, fc 10 outputs), 5 devices
 * (the thesis numbers them from 1; here from 0). */
static void test_worked_example(void)
{
    net *t = zoo("toy6");
    CHECK_I64(t->layers[net_find(t, "conv")].out.c, 20);
    CHECK_I64(t->layers[net_find(t, "fc")].out.c, 10);
    chrom *c = mk(t, 5, CHROM_HYBRID, 5, NET_SPLIT_DEFAULT);
    const int g[25] = {0, 0, 1, 2, 0, /* split 1 */
                       1, 2, 0, 0, 0, /* split 2 */
                       0, 1, 0, 0, 2, /* split 3 */
                       2, 1, 0, 0, 0, /* split 4 */
                       2, 0, 0, 0, 0}; /* split 5 */
    mapping *m = dec(c, g);
    if (!m) return;
    /* conv: 5 shares: device 3 (row 1), 1 (rows 2, 5), 2 (rows 3, 4):
     * thesis devices 3, 1, 2 = ours 2, 0, 1 with 1/5, 2/5, 2/5 of 20. */
    EXPECT(m, t, "conv", 3, 2, 0, 4, 0, 4, 8, 1, 12, 8);
    /* relu, pool, flatten follow the row-1 owner of conv (device 3). */
    WHOLE(m, t, "relu", 2);
    WHOLE(m, t, "pool", 2);
    WHOLE(m, t, "flatten", 2);
    /* fc: thesis devices 4, 2, 5, 1 (row order), 1/5 each and 2/5 for 1. */
    EXPECT(m, t, "fc", 4, 3, 0, 2, 1, 2, 2, 4, 4, 2, 0, 6, 4);
    WHOLE(m, t, "softmax", 3);
    /* Same mapping with the naive chromosome: 5 genes for conv, one for
     * each of relu, pool, flatten, 5 for fc, one for softmax. */
    chrom *cn = mk(t, 5, CHROM_NAIVE, 0, NET_SPLIT_DEFAULT);
    CHECK_I64(chrom_length(cn), 14);
    const int gn[14] = {2, 0, 1, 0, 1, 2, 2, 2, 3, 1, 4, 0, 0, 3};
    mapping *mn = dec(cn, gn);
    if (mn) CHECK(mapping_equal(m, mn));
    /* A different order of the same genes changes the slice order only. */
    const int gn2[14] = {0, 0, 1, 1, 2, 2, 2, 2, 3, 1, 4, 0, 0, 3};
    mapping *mn2 = dec(cn, gn2);
    if (mn2) {
        CHECK(!mapping_equal(m, mn2));
        EXPECT(mn2, t, "conv", 3, 0, 0, 8, 1, 8, 8, 2, 16, 4);
    }
    char buf[2048];
    int need = chrom_dump(c, g, buf, sizeof buf);
    CHECK(need > 0 && need < (int)sizeof buf);
    CHECK(strstr(buf, "split 1: 0 0 1 2 0") != NULL);
    CHECK(strstr(buf, "dev2: conv..conv") != NULL && strstr(buf, "dev3: fc..fc") != NULL);
    /* Truncation is safe and reports the same length. */
    char small[16];
    CHECK_I64(chrom_dump(c, g, small, sizeof small), need);
    CHECK_I64(strlen(small), sizeof small - 1);
    need = chrom_dump(cn, gn, buf, sizeof buf);
    CHECK(strstr(buf, "conv") && strstr(buf, " 2 0 1 0 1") && strstr(buf, "softmax"));
    mapping_free(m);
    mapping_free(mn);
    mapping_free(mn2);
    chrom_free(c);
    chrom_free(cn);
    net_free(t);
}

static void test_naive_rules(void)
{
    net *a = zoo("alexnet-bvlc");
    chrom *c = mk(a, 5, CHROM_NAIVE, 0, NET_SPLIT_DEFAULT);
    int g[56];
    for (int i = 0; i < 56; i++) g[i] = 4;
    /* conv1 (genes 0..4): 3,3,1,3,1 -> device 3 gets 3/5, device 1 2/5 of 96:
     * 57.6 -> 58 (larger remainder .6 vs .4), 38.4 -> 38. */
    g[0] = 3, g[1] = 3, g[2] = 1, g[3] = 3, g[4] = 1;
    /* conv2 (genes 8..12 after relu1 5, norm1 6, pool1 7): all device 2. */
    for (int i = 8; i < 13; i++) g[i] = 2;
    g[5] = 0; /* relu1 */
    mapping *m = dec(c, g);
    if (m) {
        EXPECT(m, a, "conv1", 2, 3, 0, 58, 1, 58, 38);
        WHOLE(m, a, "relu1", 0);
        WHOLE(m, a, "norm1", 4);
        WHOLE(m, a, "conv2", 2);
        WHOLE(m, a, "fc8", 4);
    }
    /* Five distinct devices: 5 shares of 1/5; fc8 (1000) -> 200 each. */
    int o = 56 - 1 - 5; /* fc8's genes come just before prob's one */
    for (int t = 0; t < 5; t++) g[o + t] = 4 - t;
    mapping *m2 = dec(c, g);
    if (m2) EXPECT(m2, a, "fc8", 5, 4, 0, 200, 3, 200, 200, 2, 400, 200, 1, 600, 200, 0, 800, 200);
    mapping_free(m);
    mapping_free(m2);
    chrom_free(c);
    /* FC-only: convs are ordinary one-gene layers. */
    c = mk(a, 5, CHROM_NAIVE, 0, net_split_mask_parse("fc"));
    int h[36];
    for (int i = 0; i < 36; i++) h[i] = i % 5;
    m = dec(c, h);
    if (m) {
        WHOLE(m, a, "conv1", 0);
        WHOLE(m, a, "relu1", 1);
        WHOLE(m, a, "conv2", 4);
        /* fc6 = layer 16, genes 16..20 = devices 1,2,3,4,0: 4096/5 = 819.2,
         * remainders equal -> the first (lowest index) share gets the extra. */
        EXPECT(m, a, "fc6", 5, 1, 0, 820, 2, 820, 819, 3, 1639, 819, 4, 2458, 819, 0, 3277, 819);
    }
    mapping_free(m);
    chrom_free(c);
    net_free(a);
}

static void test_hybrid_rules(void)
{
    net *a = zoo("alexnet-bvlc");
    chrom *c = mk(a, 5, CHROM_HYBRID, 2, NET_SPLIT_DEFAULT);
    mapping *m;
    /* Repair: split points 3 (dev0) and 5 (dev2); layers 6..8 (fc6..fc8)
     * go to the largest split point's device, dev2. */
    int g1[10] = {3, 0, 5, 0, 0, 0, 0, 0, 0, 0};
    if ((m = dec(c, g1))) {
        WHOLE(m, a, "conv1", 0);
        WHOLE(m, a, "pool1", 0); /* before conv2: follows conv1's owner */
        WHOLE(m, a, "conv3", 0);
        WHOLE(m, a, "relu3", 0);
        WHOLE(m, a, "conv4", 2);
        WHOLE(m, a, "fc6", 2);
        WHOLE(m, a, "prob", 2);
        mapping_free(m);
    }
    /* Tie in row 1: dev0 and dev1 both say 4; the lower index takes 1..4,
     * dev1 gets nothing; the tail 5..8 goes to the tied lower index. */
    int g2[10] = {4, 4, 0, 0, 0, 0, 0, 0, 0, 0};
    if ((m = dec(c, g2))) {
        for (int i = 0; i < a->n; i++) WHOLE(m, a, a->layers[i].name, 0);
        mapping_free(m);
    }
    int g3[10] = {0, 8, 0, 8, 0, 0, 0, 0, 0, 0};
    if ((m = dec(c, g3))) {
        for (int i = 0; i < a->n; i++) WHOLE(m, a, a->layers[i].name, 1);
        mapping_free(m);
    }
    /* Tie between different values: dev3=2, dev1=2, dev4=6: dev1 gets 1..2,
     * dev4 3..6, tail 7..8 to dev4. */
    int g4[10] = {0, 2, 0, 2, 6, 0, 0, 0, 0, 0};
    if ((m = dec(c, g4))) {
        WHOLE(m, a, "conv2", 1);
        WHOLE(m, a, "pool2", 1);
        WHOLE(m, a, "conv3", 4);
        WHOLE(m, a, "fc7", 4);
        WHOLE(m, a, "fc8", 4);
        mapping_free(m);
    }
    /* All-zero row 1: everything whole on device 0, row 2 ignored. */
    int g5[10] = {0, 0, 0, 0, 0, 0, 0, 2, 0, 0};
    if ((m = dec(c, g5))) {
        for (int i = 0; i < a->n; i++) WHOLE(m, a, a->layers[i].name, 0);
        mapping_free(m);
    }
    int g0[10] = {0};
    if ((m = dec(c, g0))) {
        for (int i = 0; i < a->n; i++) WHOLE(m, a, a->layers[i].name, 0);
        mapping_free(m);
    }
    /* Row 2 below S covers only up to its largest value; beyond, layers are
     * not split.  Row 1 on dev1 alone; row 2: dev0 up to 3. */
    int g6[10] = {0, 8, 0, 0, 0, 3, 0, 0, 0, 0};
    if ((m = dec(c, g6))) {
        EXPECT(m, a, "conv1", 2, 1, 0, 48, 0, 48, 48);
        EXPECT(m, a, "conv3", 2, 1, 0, 192, 0, 192, 192);
        WHOLE(m, a, "relu1", 1); /* row-1 owner, not the second share */
        WHOLE(m, a, "conv4", 1);
        WHOLE(m, a, "fc8", 1);
        mapping_free(m);
    }
    /* Shares on the same device merge. */
    int g7[10] = {0, 8, 0, 0, 0, 0, 8, 0, 0, 0};
    if ((m = dec(c, g7))) {
        for (int i = 0; i < a->n; i++) WHOLE(m, a, a->layers[i].name, 1);
        mapping_free(m);
    }
    /* Row 2 with several ranges: dev4 1..2, dev3 3..5; row 1 dev0 1..4,
     * dev1 5..8. */
    int g8[10] = {4, 8, 0, 0, 0, 0, 0, 0, 5, 2};
    if ((m = dec(c, g8))) {
        EXPECT(m, a, "conv1", 2, 0, 0, 48, 4, 48, 48);
        EXPECT(m, a, "conv2", 2, 0, 0, 128, 4, 128, 128);
        EXPECT(m, a, "conv3", 2, 0, 0, 192, 3, 192, 192);
        EXPECT(m, a, "conv4", 2, 0, 0, 192, 3, 192, 192);
        EXPECT(m, a, "conv5", 2, 1, 0, 128, 3, 128, 128);
        WHOLE(m, a, "pool5", 1);
        WHOLE(m, a, "fc6", 1);
        mapping_free(m);
    }
    chrom_free(c);
    /* Three rows: dev0 twice and dev1 once: 2/3 and 1/3, dev0 first. */
    c = mk(a, 5, CHROM_HYBRID, 3, NET_SPLIT_DEFAULT);
    int g9[15] = {8, 0, 0, 0, 0, 0, 8, 0, 0, 0, 8, 0, 0, 0, 0};
    if ((m = dec(c, g9))) {
        EXPECT(m, a, "conv1", 2, 0, 0, 64, 1, 64, 32);
        EXPECT(m, a, "fc8", 2, 0, 0, 667, 1, 667, 333); /* 666.67 / 333.33 */
        mapping_free(m);
    }
    /* Row 1 second: dev1 owns, rows 2 and 3 dev0: dev1 1/3 first. */
    int g10[15] = {0, 8, 0, 0, 0, 8, 0, 0, 0, 0, 8, 0, 0, 0, 0};
    if ((m = dec(c, g10))) {
        EXPECT(m, a, "conv1", 2, 1, 0, 32, 0, 32, 64);
        mapping_free(m);
    }
    chrom_free(c);
    /* p = 1: a pure split-point (vertical over splittable layers). */
    c = mk(a, 5, CHROM_HYBRID, 1, NET_SPLIT_DEFAULT);
    int g11[5] = {0, 0, 0, 1, 0};
    if ((m = dec(c, g11))) {
        for (int i = 0; i < a->n; i++) WHOLE(m, a, a->layers[i].name, 3);
        mapping_free(m);
    }
    chrom_free(c);
    net_free(a);
}

static void test_vertical_rules(void)
{
    net *a = zoo("alexnet-bvlc");
    chrom *c = mk(a, 5, CHROM_VERTICAL, 0, NET_SPLIT_DEFAULT);
    mapping *m;
    /* dev1 layers 1..4, dev3 5..10, tail 11..24 to dev3. */
    int g1[5] = {0, 4, 0, 10, 0};
    if ((m = dec(c, g1))) {
        for (int i = 0; i < a->n; i++) WHOLE(m, a, a->layers[i].name, i < 4 ? 1 : 3);
        mapping_free(m);
    }
    /* Tie: dev0 and dev1 at 5: dev0 takes 1..5, dev1 nothing; dev4 (24)
     * owns 6..24. */
    int g2[5] = {5, 5, 0, 0, 24};
    if ((m = dec(c, g2))) {
        for (int i = 0; i < a->n; i++) WHOLE(m, a, a->layers[i].name, i < 5 ? 0 : 4);
        mapping_free(m);
    }
    int g3[5] = {7, 7, 0, 0, 0};
    if ((m = dec(c, g3))) {
        for (int i = 0; i < a->n; i++) WHOLE(m, a, a->layers[i].name, 0);
        mapping_free(m);
    }
    int g4[5] = {0};
    if ((m = dec(c, g4))) {
        for (int i = 0; i < a->n; i++) WHOLE(m, a, a->layers[i].name, 0);
        mapping_free(m);
    }
    /* Largest value < L: the tail follows the device holding it (dev2 at
     * 20), and splittable layers are never split. */
    int g5[5] = {10, 0, 20, 0, 0};
    if ((m = dec(c, g5))) {
        for (int i = 0; i < a->n; i++) WHOLE(m, a, a->layers[i].name, i < 10 ? 0 : 2);
        mapping_free(m);
    }
    chrom_free(c);
    net_free(a);
}

/* A net with fewer channels than devices: conv of 2 channels, fc of 3. */
static net *tiny(int conv_c, int fc_c)
{
    char err[BASE_ERRLEN];
    net *n = net_new("tiny", "data", (net_shape){3, 4, 4});
    net_attr ca = net_attr_default(NET_CONV);
    ca.out_c = conv_c;
    net_attr fa = net_attr_default(NET_FC);
    fa.out_c = fc_c;
    net_attr ra = net_attr_default(NET_RELU), la = net_attr_default(NET_FLATTEN);
    const char *in0[] = {"data"}, *in1[] = {"c"}, *in2[] = {"r"}, *in3[] = {"fl"};
    if (net_add(n, "c", NET_CONV, &ca, 1, in0, err) < 0 ||
        net_add(n, "r", NET_RELU, &ra, 1, in1, err) < 0 ||
        net_add(n, "fl", NET_FLATTEN, &la, 1, in2, err) < 0 ||
        net_add(n, "f", NET_FC, &fa, 1, in3, err) < 0 || net_finalize(n, "tiny", err)) {
        fprintf(stderr, "tiny: %s\n", err);
        exit(2);
    }
    return n;
}

static void test_few_channels(void)
{
    net *t = tiny(2, 3);
    chrom *c = mk(t, 5, CHROM_NAIVE, 0, NET_SPLIT_DEFAULT);
    CHECK_I64(chrom_length(c), 12);
    /* conv: 5 devices want 1/5 of 2 channels: quotas 0.4 each, the two
     * leftovers go to the lowest indices (ties), the rest get nothing. */
    int g[12] = {4, 3, 2, 1, 0, 0, 0, 1, 1, 2, 2, 0};
    mapping *m = dec(c, g);
    if (m) {
        EXPECT(m, t, "c", 2, 4, 0, 1, 3, 1, 1);
        /* fc: devices 1 (2/5), 2 (2/5), 0 (1/5) of 3: 1.2, 1.2, 0.6 ->
         * floors 1, 1, 0, one leftover to the largest remainder (0.6). */
        EXPECT(m, t, "f", 3, 1, 0, 1, 2, 1, 1, 0, 2, 1);
        mapping_free(m);
    }
    /* Skewed: device 0 has 4/5 of the shares, device 1 1/5.  fc: 2.4 / 0.6
     * -> 2 / 1 (the 0.6 remainder wins). */
    int g2[12] = {0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0};
    if ((m = dec(c, g2))) {
        /* conv: 1.6 / 0.4: the leftover goes to the larger remainder (0.6),
         * leaving device 1 empty; the non-empty rule moves one channel. */
        EXPECT(m, t, "c", 2, 0, 0, 1, 1, 1, 1);
        EXPECT(m, t, "f", 2, 0, 0, 2, 1, 2, 1);
        mapping_free(m);
    }
    chrom_free(c);
    /* Hybrid with 1-channel conv: a layer of one channel cannot be split. */
    net *t1 = tiny(1, 3);
    c = mk(t1, 3, CHROM_HYBRID, 3, NET_SPLIT_DEFAULT);
    int g3[9] = {2, 0, 0, 0, 2, 0, 0, 0, 1};
    if ((m = dec(c, g3))) {
        EXPECT(m, t1, "c", 1, 0, 0, 1);   /* shares 1/3 each of 1: the first wins */
        EXPECT(m, t1, "f", 2, 0, 0, 2, 1, 2, 1); /* row 3 covers only layer 1 */
        WHOLE(m, t1, "r", 0);
        mapping_free(m);
    }
    chrom_free(c);
    net_free(t1);
    net_free(t);
}

static void test_no_splittable(void)
{
    /* Mask 0: nothing is splittable, S = 0. */
    net *t = zoo("toy6");
    char err[BASE_ERRLEN];
    chrom *c = mk(t, 3, CHROM_HYBRID, 2, 0);
    CHECK_I64(chrom_nsplittable(c), 0);
    CHECK_I64(chrom_length(c), 6);
    CHECK(chrom_log10_space(c) == 0.0);
    int g[6] = {0};
    mapping *m = dec(c, g);
    if (m) {
        for (int i = 0; i < t->n; i++) WHOLE(m, t, t->layers[i].name, 0);
        mapping_free(m);
    }
    CHECK(chrom_single_device(c, 0, g) == 0);
    CHECK(chrom_single_device(c, 1, g) == -1); /* cannot be expressed */
    chrom_free(c);
    c = mk(t, 3, CHROM_NAIVE, 0, 0);
    CHECK_I64(chrom_length(c), 6);
    chrom_free(c);
    CHECK(chrom_new(t, 3, CHROM_NAIVE, 0, 1 << NET_RELU, err) == NULL);
    TERR(err, "ReLU");
    net_free(t);
}

static void test_errors(void)
{
    net *a = zoo("alexnet-bvlc");
    char err[BASE_ERRLEN];
    CHECK(chrom_new(a, 5, CHROM_HYBRID, 0, NET_SPLIT_DEFAULT, err) == NULL);
    TERR(err, "splits");
    CHECK(chrom_new(a, 5, CHROM_HYBRID, 6, NET_SPLIT_DEFAULT, err) == NULL);
    CHECK(chrom_new(a, 0, CHROM_NAIVE, 0, NET_SPLIT_DEFAULT, err) == NULL);
    CHECK(chrom_new(a, CHROM_MAX_DEV + 1, CHROM_NAIVE, 0, NET_SPLIT_DEFAULT, err) == NULL);
    CHECK(chrom_new(a, 5, (chrom_kind)7, 0, NET_SPLIT_DEFAULT, err) == NULL);
    CHECK(chrom_new(a, 5, CHROM_NAIVE, 0, -1, err) == NULL);
    for (int k = 0; k < 3; k++) {
        chrom *c = mk(a, 5, (chrom_kind)k, 2, NET_SPLIT_DEFAULT);
        int len = chrom_length(c);
        int *g = calloc((size_t)len + 1, sizeof *g);
        mapping *m = mapping_new(a->n, 5);
        CHECK(chrom_decode(c, g, len, m, err) == 0);
        CHECK(chrom_decode(c, g, len - 1, m, err) == -1);
        TERR(err, "genes");
        CHECK(chrom_decode(c, g, len + 1, m, err) == -1);
        g[len - 1] = -1;
        CHECK(chrom_decode(c, g, len, m, err) == -1);
        TERR(err, "outside");
        int lo[64], hi[64];
        chrom_bounds(c, lo, hi);
        g[len - 1] = hi[len - 1] + 1;
        CHECK(chrom_decode(c, g, len, m, err) == -1);
        g[len - 1] = hi[len - 1];
        CHECK(chrom_decode(c, g, len, m, err) == 0);
        mapping *wrong = mapping_new(a->n, 4);
        CHECK(chrom_decode(c, g, len, wrong, err) == -1);
        mapping_free(wrong);
        /* single-device genomes decode to mapping_set_single */
        mapping *ref = mapping_new(a->n, 5);
        for (int d = 0; d < 5; d++) {
            CHECK(chrom_single_device(c, d, g) == 0);
            CHECK(chrom_decode(c, g, len, m, err) == 0);
            mapping_set_single(ref, a, d);
            CHECK(mapping_equal(m, ref));
        }
        CHECK(chrom_single_device(c, 5, g) == -1);
        CHECK(chrom_single_device(c, -1, g) == -1);
        mapping_free(ref);
        mapping_free(m);
        free(g);
        chrom_free(c);
    }
    net_free(a);
}

/* chrom_decode against the reference decoder, on random and sparse
 * genomes, several nets, device counts, split counts and masks. */
static void test_against_reference(void)
{
    const char *nets[] = {"toy6", "branchy", "alexnet-bvlc", "alexnet", "resnet50", NULL};
    const int ndevs[] = {1, 2, 3, 5, 16};
    const int masks[] = {NET_SPLIT_DEFAULT, 1 << NET_FC, 1 << NET_CONV};
    uint64_t seed = 42;
    char err[BASE_ERRLEN];
    long compared = 0;
    for (int ni = 0; nets[ni]; ni++) {
        net *n = zoo(nets[ni]);
        for (int di = 0; di < 5; di++) {
            int nd = ndevs[di];
            for (int k = 0; k < 3; k++)
                for (int mi = 0; mi < 3; mi++) {
                    int ps[3] = {1, nd > 1 ? 2 : 1, nd}, np = k == CHROM_HYBRID ? 3 : 1;
                    for (int pi = 0; pi < np; pi++) {
                        chrom *c = chrom_new(n, nd, (chrom_kind)k, ps[pi], masks[mi], err);
                        if (!c) {
                            fprintf(stderr, "%s\n", err);
                            check_failures++;
                            continue;
                        }
                        int len = chrom_length(c);
                        int *lo = malloc(sizeof(int) * len), *hi = malloc(sizeof(int) * len);
                        int *g = malloc(sizeof(int) * len);
                        chrom_bounds(c, lo, hi);
                        mapping *m = mapping_new(n->n, nd), *r = mapping_new(n->n, nd);
                        int reps = n->n > 100 ? 40 : 300;
                        for (int rep = 0; rep < reps; rep++) {
                            if (rep & 1) tsparse_genome(c, lo, hi, g, &seed);
                            else trandom_genome(c, lo, hi, g, &seed);
                            if (chrom_decode(c, g, len, m, err)) {
                                fprintf(stderr, "%s\n", err);
                                check_failures++;
                                break;
                            }
                            ref_decode(n, nd, (chrom_kind)k, ps[pi], masks[mi], g, r);
                            compared++;
                            if (!mapping_equal(m, r)) {
                                char buf[8192];
                                chrom_dump(c, g, buf, sizeof buf);
                                fprintf(stderr, "%s %s %d devices p=%d mask=%d: decode differs "
                                        "from the reference for\n%s", nets[ni],
                                        chrom_kind_name((chrom_kind)k), nd, ps[pi], masks[mi],
                                        buf);
                                check_failures++;
                                break;
                            }
                        }
                        mapping_free(m);
                        mapping_free(r);
                        free(lo);
                        free(hi);
                        free(g);
                        chrom_free(c);
                    }
                }
        }
        net_free(n);
    }
    printf("compared %ld decodes with the reference decoder\n", compared);
}

int main(void)
{
    test_sizes();
    test_worked_example();
    test_naive_rules();
    test_hybrid_rules();
    test_vertical_rules();
    test_few_channels();
    test_no_splittable();
    test_errors();
    test_against_reference();
    return check_done("test_chrom");
}

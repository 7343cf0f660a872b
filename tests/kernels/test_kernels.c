/* test_kernels.c -- every kernel of kernels/kernels.h against the plain-loop
 * reference of naive.c on random shapes and attributes: groups, depthwise,
 * depth multipliers, dilation, strides, asymmetric pads, 1x1 paths, im2col
 * bands, ceil_mode, count_include_pad, LRN sizes 1..6, Softmax on maps;
 * slices of Conv/FC against the reference's rows; 1 and 2 threads; and the
 * errors kern_run must report.  Tolerance: 1e-4 relative + 1e-5 absolute.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "naive.h"
#include "vmath_check.h"

#define RTOL 1e-4
#define ATOL 1e-5

static uint64_t rng = 12345;
/* --small (the arm64 label's form, under emulation): fewer random cases of
 * every kind, the same fixed ones; every kind and algorithm still runs. */
static int small;
#define COUNT(full, few) (small ? (few) : (full))
static int ncases[NET_KIND_COUNT];
static float input_scale = 1; /* inputs of check_layer: U(-1, 1) times this */

/* data -> [p0 .. p(nprod-1): 1x1 convs giving prod_c[k] channels] -> layer.
 * Returns the net (layer under test is the last) or NULL if the attributes
 * do not fit the input (net_finalize refused). */
static net *build(net_kind kind, const net_attr *a, net_shape in, int nprod, const int *prod_c)
{
    char err[BASE_ERRLEN];
    net *n = net_new("t", "data", in);
    const char *ins[8];
    char names[8][16];
    if (nprod == 0) {
        ins[0] = "data";
    } else {
        for (int k = 0; k < nprod; k++) {
            net_attr pa = net_attr_default(NET_CONV);
            pa.out_c = prod_c[k];
            snprintf(names[k], sizeof names[k], "p%d", k);
            const char *d[1] = {"data"};
            net_add(n, names[k], NET_CONV, &pa, 1, d, err);
            ins[k] = names[k];
        }
    }
    net_add(n, "L", kind, a, nprod ? nprod : 1, ins, err);
    if (net_finalize(n, "t", err)) {
        net_free(n);
        return NULL;
    }
    return n;
}

static float *rnd(size_t len)
{
    float *x = malloc((len ? len : 1) * sizeof *x);
    trng_fill(&rng, x, len);
    return x;
}

/* Random weights of a whole layer (BN variances made positive).  Conv/FC
 * weights are U(-1, 1) / sqrt(fan_in / 3), so outputs are O(1) as in a real
 * net and the absolute tolerance means what it says (with U(-1, 1) weights
 * a 2700-term sum is O(17) and its rounding alone exceeds 1e-5). */
static float *rnd_weights(const net *n, int li)
{
    const net_layer *L = &n->layers[li];
    size_t len = (size_t)net_slice_weights(n, li, 0, L->out.c);
    float *w = rnd(len);
    if (L->kind == NET_CONV || L->kind == NET_FC) {
        size_t fan = len / L->out.c - (L->a.bias ? 1 : 0);
        float s = (float)sqrt(3.0 / (double)fan);
        for (size_t i = 0; i < fan * L->out.c; i++) w[i] *= s;
    }
    if (L->kind == NET_BN)
        for (int c = 0; c < L->out.c; c++) w[3 * L->out.c + c] = 0.3f + fabsf(w[3 * L->out.c + c]);
    return w;
}

static const char *describe(const net *n, int li)
{
    static char s[256];
    const net_layer *L = &n->layers[li];
    const net_attr *a = &L->a;
    net_shape x = net_in_shape(n, li, 0);
    snprintf(s, sizeof s,
             "%s in %dx%dx%d out %dx%dx%d k%dx%d s%dx%d d%dx%d pad %d,%d,%d,%d g%d bias%d ceil%d cip%d lrn%d",
             net_kind_name(L->kind), x.c, x.h, x.w, L->out.c, L->out.h, L->out.w, a->kh, a->kw, a->sh,
             a->sw, a->dh, a->dw, a->pt, a->pl, a->pb, a->pr, a->groups, a->bias, a->ceil_mode,
             a->count_include_pad, a->lrn_size);
    return s;
}

/* Run the last layer whole (and, for Conv/FC, one random slice) through
 * kern_run and compare with naive_layer. */
static void check_layer(const net *n)
{
    char err[BASE_ERRLEN];
    int li = n->n - 1;
    const net_layer *L = &n->layers[li];
    float *in[8];
    for (int k = 0; k < L->nin; k++) {
        size_t len = (size_t)net_shape_numel(net_in_shape(n, li, k));
        in[k] = rnd(len);
        for (size_t e = 0; e < len; e++) in[k][e] *= input_scale;
    }
    float *w = rnd_weights(n, li);
    size_t olen = (size_t)net_shape_numel(L->out);
    float *ref = malloc(olen * sizeof *ref), *got = malloc(olen * sizeof *got);
    size_t nws = kern_workspace_floats(n, li, L->out.c);
    float *ws = nws ? malloc(nws * sizeof *ws) : NULL;
    naive_layer(n, li, (const float *const *)in, w, ref);
    memset(got, 0xff, olen * sizeof *got); /* NaN: every element must be written */
    int rc = kern_run(n, li, 0, L->out.c, (const float *const *)in, w, got, ws, err);
    CHECK(rc == 0, "%s: %s", describe(n, li), err);
    size_t worst = 0;
    double bad = cmp_tol(got, ref, olen, RTOL, ATOL, &worst);
    CHECK(bad <= 0, "%s: element %zu got %g want %g", describe(n, li), worst, got[worst], ref[worst]);
    ncases[L->kind]++;

    if (net_kind_splittable(L->kind) && L->out.c > 1) {
        int c0 = trng_int(&rng, 0, L->out.c - 1), nc = trng_int(&rng, 1, L->out.c - c0);
        size_t per = (size_t)net_slice_weights(n, li, 0, 1), hw = (size_t)L->out.h * L->out.w;
        float *sw = malloc((size_t)nc * per * sizeof *sw + 1);
        int wl = net_kind_info(L->kind)->wlayout;
        if (wl == NET_W_ROWS) { /* rows of the slice's channels, then their biases */
            size_t K = L->a.bias ? per - 1 : per;
            memcpy(sw, w + (size_t)c0 * K, (size_t)nc * K * sizeof *sw);
            if (L->a.bias) memcpy(sw + (size_t)nc * K, w + (size_t)L->out.c * K + c0, (size_t)nc * sizeof *sw);
        } else { /* each vector's values of the slice's channels (weights.h) */
            for (int q = 0; q < net_wvecs(wl); q++)
                memcpy(sw + (size_t)q * nc, w + (size_t)q * L->out.c + c0, (size_t)nc * sizeof *sw);
        }
        float *ws2 = NULL;
        size_t nws2 = kern_workspace_floats(n, li, nc);
        if (nws2) ws2 = malloc(nws2 * sizeof *ws2);
        memset(got, 0xff, olen * sizeof *got);
        const float *view[NET_MAX_IN];
        slice_inputs(n, li, c0, nc, (const float *const *)in, view);
        rc = kern_run(n, li, c0, nc, view, sw, got, ws2, err);
        CHECK(rc == 0, "%s slice [%d,+%d): %s", describe(n, li), c0, nc, err);
        bad = cmp_tol(got, ref + (size_t)c0 * hw, (size_t)nc * hw, RTOL, ATOL, &worst);
        CHECK(bad <= 0, "%s slice [%d,+%d): element %zu got %g want %g", describe(n, li), c0, nc,
              worst, got[worst], ref[c0 * hw + worst]);
        free(sw);
        free(ws2);
    }
    for (int k = 0; k < L->nin; k++) free(in[k]);
    free(w);
    free(ref);
    free(got);
    free(ws);
}

static void conv_case(net_shape in, int out_c, int kh, int kw, int sh, int sw, int dh, int dw,
                      int pt, int pl, int pb, int pr, int groups, int bias)
{
    net_attr a = net_attr_default(NET_CONV);
    a.out_c = out_c;
    a.kh = kh, a.kw = kw, a.sh = sh, a.sw = sw, a.dh = dh, a.dw = dw;
    a.pt = pt, a.pl = pl, a.pb = pb, a.pr = pr;
    a.groups = groups;
    a.bias = bias;
    net *n = build(NET_CONV, &a, in, 0, NULL);
    CHECK(n != NULL, "conv case does not fit");
    if (n) check_layer(n);
    net_free(n);
}

static void random_convs(int count)
{
    for (int t = 0; t < count;) {
        int groups = trng_int(&rng, 1, 4);
        net_shape in = {groups * trng_int(&rng, 1, 5), trng_int(&rng, 1, 16), trng_int(&rng, 1, 16)};
        net_attr a = net_attr_default(NET_CONV);
        a.groups = groups;
        a.out_c = groups * trng_int(&rng, 1, 5);
        a.kh = trng_int(&rng, 1, 5), a.kw = trng_int(&rng, 1, 5);
        a.sh = trng_int(&rng, 1, 3), a.sw = trng_int(&rng, 1, 3);
        a.dh = trng_int(&rng, 1, 3), a.dw = trng_int(&rng, 1, 3);
        a.pt = trng_int(&rng, 0, 3), a.pl = trng_int(&rng, 0, 3);
        a.pb = trng_int(&rng, 0, 3), a.pr = trng_int(&rng, 0, 3);
        a.bias = trng_int(&rng, 0, 1);
        if (trng_int(&rng, 0, 4) == 0) { /* depthwise or depth multiplier */
            a.groups = in.c;
            a.out_c = in.c * trng_int(&rng, 1, 2);
        }
        net *n = build(NET_CONV, &a, in, 0, NULL);
        if (!n) continue;
        check_layer(n);
        net_free(n);
        t++;
    }
}

static void conv_tests(void)
{
    net_shape s = {6, 13, 11};
    conv_case(s, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, 1);      /* depthwise */
    conv_case(s, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 6, 0);      /* depthwise stride 2 */
    conv_case(s, 12, 3, 3, 1, 2, 2, 1, 0, 2, 1, 3, 6, 1);     /* depth multiplier, dilation */
    conv_case(s, 10, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1);     /* pointwise */
    conv_case(s, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3, 0);      /* grouped pointwise */
    conv_case(s, 8, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1);      /* 1x1 stride 2 */
    conv_case(s, 4, 3, 3, 1, 1, 2, 2, 0, 3, 2, 1, 1, 1);      /* dilation, asymmetric pads */
    conv_case(s, 4, 5, 2, 2, 3, 1, 2, 3, 0, 0, 1, 2, 1);      /* rectangular everything */
    conv_case((net_shape){1, 9, 9}, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1); /* one input channel */
    conv_case((net_shape){3, 20, 20}, 5, 20, 20, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1); /* kernel = input */
    conv_case((net_shape){64, 40, 40}, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1); /* several im2col bands */
    conv_case((net_shape){64, 40, 40}, 8, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 4, 0);  /* bands, grouped */
    random_convs(COUNT(300, 30));
}

/* Winograd territory: 3x3 stride 1, >= 16 channels per group in and out;
 * odd sizes, asymmetric pads, maps wider than one transform chunk (64
 * tiles), several bands, and small maps (which the default choice leaves
 * to im2col, but the forced modes run through F(2x2) or F(4x4)). */
static void wino_cases(void)
{
    conv_case((net_shape){16, 20, 20}, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    conv_case((net_shape){20, 25, 27}, 33, 3, 3, 1, 1, 1, 1, 0, 2, 1, 0, 1, 1);
    conv_case((net_shape){40, 31, 23}, 48, 3, 3, 1, 1, 1, 1, 2, 1, 0, 2, 2, 0);
    conv_case((net_shape){16, 5, 150}, 16, 3, 3, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1);
    conv_case((net_shape){300, 70, 9}, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    conv_case((net_shape){16, 300, 7}, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0);
    conv_case((net_shape){64, 7, 7}, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0);
    conv_case((net_shape){32, 14, 14}, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    conv_case((net_shape){32, 13, 13}, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1);
    conv_case((net_shape){16, 3, 3}, 16, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1);
    for (int t = 0; t < COUNT(20, 3); t++) {
        int g = trng_int(&rng, 1, 2), pt = trng_int(&rng, 0, 2), pb = trng_int(&rng, 0, 2);
        int pl = trng_int(&rng, 0, 2), pr = trng_int(&rng, 0, 2);
        net_shape in = {g * trng_int(&rng, 16, 40), trng_int(&rng, 5, 35), trng_int(&rng, 5, 35)};
        conv_case(in, g * trng_int(&rng, 16, 40), 3, 3, 1, 1, 1, 1, pt, pl, pb, pr, g, t % 2);
    }
}

/* The Winograd path is really taken (its rounding differs from im2col's)
 * and kern_set_winograd(0) really switches it off; both match naive. */
static void winograd_switch(void)
{
    char err[BASE_ERRLEN];
    net_attr a = net_attr_default(NET_CONV);
    a.out_c = 32, a.kh = a.kw = 3, a.pt = a.pl = a.pb = a.pr = 1;
    net *n = build(NET_CONV, &a, (net_shape){48, 24, 25}, 0, NULL);
    size_t olen = (size_t)net_shape_numel(n->layers[0].out), xlen = 48 * 24 * 25;
    float *x = rnd(xlen), *w = rnd_weights(n, 0), *ref = malloc(olen * sizeof *ref);
    float *y1 = malloc(olen * sizeof *y1), *y0 = malloc(olen * sizeof *y0);
    const float *in[1] = {x};
    naive_layer(n, 0, in, w, ref);
    size_t ws1 = kern_workspace_floats(n, 0, 32);
    float *ws = malloc(ws1 * sizeof *ws);
    CHECK(kern_run(n, 0, 0, 32, in, w, y1, ws, err) == 0, "%s", err);
    kern_set_winograd(0);
    size_t ws0 = kern_workspace_floats(n, 0, 32);
    float *wsb = malloc(ws0 * sizeof *wsb);
    CHECK(kern_run(n, 0, 0, 32, in, w, y0, wsb, err) == 0, "%s", err);
    kern_set_winograd(1);
    CHECK(ws0 != ws1, "workspace does not depend on the algorithm (%zu)", ws0);
    CHECK(memcmp(y0, y1, olen * sizeof *y0) != 0, "Winograd and im2col bit-identical: path not taken");
    CHECK(cmp_tol(y1, ref, olen, RTOL, ATOL, NULL) <= 0, "Winograd output differs from naive");
    CHECK(cmp_tol(y0, ref, olen, RTOL, ATOL, NULL) <= 0, "im2col output differs from naive");
    free(x), free(w), free(ref), free(y1), free(y0), free(ws), free(wsb);
    net_free(n);
}

static void fc_tests(void)
{
    for (int t = 0; t < COUNT(40, 8); t++) {
        net_shape in = {trng_int(&rng, 1, 40), trng_int(&rng, 1, 4), trng_int(&rng, 1, 4)};
        net_attr a = net_attr_default(NET_FC);
        a.out_c = trng_int(&rng, 1, 70);
        a.bias = trng_int(&rng, 0, 1);
        net *n = build(NET_FC, &a, in, 0, NULL);
        check_layer(n);
        net_free(n);
    }
}

static void pool_tests(void)
{
    for (int t = 0; t < COUNT(400, 40);) {
        net_kind k = trng_int(&rng, 0, 1) ? NET_MAXPOOL : NET_AVGPOOL;
        net_attr a = net_attr_default(k);
        a.kh = trng_int(&rng, 1, 4), a.kw = trng_int(&rng, 1, 4);
        a.sh = trng_int(&rng, 1, 3), a.sw = trng_int(&rng, 1, 3);
        a.pt = trng_int(&rng, 0, a.kh - 1), a.pb = trng_int(&rng, 0, a.kh - 1);
        a.pl = trng_int(&rng, 0, a.kw - 1), a.pr = trng_int(&rng, 0, a.kw - 1);
        a.ceil_mode = trng_int(&rng, 0, 1);
        a.count_include_pad = trng_int(&rng, 0, 1);
        net_shape in = {trng_int(&rng, 1, 4), trng_int(&rng, 1, 12), trng_int(&rng, 1, 12)};
        net *n = build(k, &a, in, 0, NULL);
        if (!n) continue;
        check_layer(n);
        net_free(n);
        t++;
    }
}

/* data -> GAP -> L = Mul(data, gap): each channel by one value; with
 * pixel, data -> ReduceMax over the channels -> L = Mul(data, max): each
 * pixel by one value (CBAM's spatial gate). */
static net *mul_by_channel(net_shape in, int pixel)
{
    char err[BASE_ERRLEN];
    net *n = net_new("t", "data", in);
    const char *d[1] = {"data"}, *two[2] = {"data", "g"};
    net_attr r = net_attr_default(NET_REDUCEMAX);
    r.rm_c = 1;
    if (pixel) net_add(n, "g", NET_REDUCEMAX, &r, 1, d, err);
    else net_add(n, "g", NET_GAP, NULL, 1, d, err);
    net_add(n, "L", NET_MUL, NULL, 2, two, err);
    if (net_finalize(n, "t", err)) {
        net_free(n);
        return NULL;
    }
    return n;
}

static void misc_tests(void)
{
    /* LRN of sizes 1..6 with random constants, incl. 3 and 5. */
    for (int size = 1; size <= 6; size++)
        for (int t = 0; t < COUNT(3, 1); t++) {
            net_attr a = net_attr_default(NET_LRN);
            a.lrn_size = size;
            a.lrn_alpha = 1e-4 + 0.5 * fabs(trng_float(&rng));
            a.lrn_beta = 0.5 + fabs(trng_float(&rng));
            a.lrn_k = 0.5 + 2 * fabs(trng_float(&rng));
            net *n = build(NET_LRN, &a, (net_shape){trng_int(&rng, 1, 9), 5, 4}, 0, NULL);
            check_layer(n);
            net_free(n);
        }
    for (int t = 0; t < COUNT(10, 2); t++) {
        net_shape in = {trng_int(&rng, 1, 9), trng_int(&rng, 1, 7), trng_int(&rng, 1, 7)};
        net_attr a = net_attr_default(NET_RELU);
        a.relu_max = t % 2 ? 0.5 : 0.0;
        net *n = build(NET_RELU, &a, in, 0, NULL);
        check_layer(n);
        net_free(n);
        a = net_attr_default(NET_BN);
        a.bn_eps = t % 2 ? 1e-5 : 1e-3;
        n = build(NET_BN, &a, in, 0, NULL);
        check_layer(n);
        net_free(n);
        static const net_kind plain[] = {NET_GAP, NET_FLATTEN, NET_DROPOUT, NET_SOFTMAX};
        for (int k = 0; k < 4; k++) {
            n = build(plain[k], NULL, in, 0, NULL);
            check_layer(n);
            net_free(n);
        }
        n = build(NET_SOFTMAX, NULL, (net_shape){trng_int(&rng, 1, 50), 1, 1}, 0, NULL);
        check_layer(n);
        net_free(n);
        int pc[4];
        int np = trng_int(&rng, 2, 4), same = trng_int(&rng, 1, 6);
        for (int k = 0; k < np; k++) pc[k] = same;
        n = build(NET_ADD, NULL, in, np, pc);
        check_layer(n);
        net_free(n);
        net_attr sub = net_attr_default(NET_ADD); /* input 0 minus input 1 */
        sub.add_sub = 1;
        n = build(NET_ADD, &sub, in, 2, pc);
        check_layer(n);
        net_free(n);
        for (int k = 0; k < np; k++) pc[k] = trng_int(&rng, 1, 6);
        n = build(NET_CONCAT, NULL, in, np, pc);
        check_layer(n);
        net_free(n);
    }
    /* The mobile networks' activations and the squeeze-excitation scale. */
    for (int t = 0; t < COUNT(10, 2); t++) {
        net_shape in = {trng_int(&rng, 1, 9), trng_int(&rng, 1, 7), trng_int(&rng, 1, 7)};
        net_attr a = net_attr_default(NET_HSIGMOID);
        if (t % 2) a.hs_alpha = 1 / 6.0, a.hs_beta = 0.5; /* PyTorch's */
        static const net_kind act[] = {NET_SIGMOID, NET_HSIGMOID, NET_HSWISH};
        for (int k = 0; k < 3; k++) {
            net *m = build(act[k], act[k] == NET_HSIGMOID ? &a : NULL, in, 0, NULL);
            input_scale = 8; /* reach both clips and Sigmoid's tails */
            check_layer(m);
            input_scale = 1;
            net_free(m);
        }
        int pc[2] = {in.c, in.c};
        net *m = build(NET_MUL, NULL, in, 2, pc);
        check_layer(m);
        net_free(m);
        m = mul_by_channel(in, 0);
        check_layer(m);
        net_free(m);
        m = mul_by_channel(in, 1);
        check_layer(m);
        net_free(m);
    }
    /* ConvNeXt's and ShuffleNet's kinds: ReduceMean over every axis subset,
     * channel slices, crops (YOLOv5's Focus, a U-Net's skip), shuffles, LayerNorm, both GELUs, per-channel scale. */
    for (int t = 0; t < 12; t++) {
        net_shape in = {trng_int(&rng, 1, 40), trng_int(&rng, 1, 9), trng_int(&rng, 1, 9)};
        net_attr a = net_attr_default(NET_REDUCEMEAN);
        int axes = 1 + t % 7;
        a.rm_c = axes & 1, a.rm_h = (axes >> 1) & 1, a.rm_w = (axes >> 2) & 1;
        net *m = build(NET_REDUCEMEAN, &a, in, 0, NULL);
        check_layer(m);
        net_free(m);
        a.rm_c = (axes >> 2) & 1, a.rm_h = axes & 1, a.rm_w = (axes >> 1) & 1; /* another order */
        m = build(NET_REDUCEMAX, &a, in, 0, NULL);
        check_layer(m);
        net_free(m);
        a = net_attr_default(NET_SLICE);
        a.start = trng_int(&rng, 0, in.c - 1);
        a.out_c = trng_int(&rng, 1, in.c - a.start);
        m = build(NET_SLICE, &a, in, 0, NULL);
        check_layer(m);
        net_free(m);
        /* and a crop: a random first row and column, step and count (0:
         * to the end), half the time with the channels whole */
        if (t % 2) a.start = 0, a.out_c = in.c;
        a.sl_top = trng_int(&rng, 0, in.h - 1), a.sh = trng_int(&rng, 1, 3);
        a.sl_left = trng_int(&rng, 0, in.w - 1), a.sw = trng_int(&rng, 1, 3);
        a.sl_rows = t % 3 ? trng_int(&rng, 1, (in.h - 1 - a.sl_top) / a.sh + 1) : 0;
        a.sl_cols = t % 3 ? trng_int(&rng, 1, (in.w - 1 - a.sl_left) / a.sw + 1) : 0;
        m = build(NET_SLICE, &a, in, 0, NULL);
        check_layer(m);
        net_free(m);
        a = net_attr_default(NET_SHUFFLE);
        a.groups = t % 4 + 1;
        m = build(NET_SHUFFLE, &a, (net_shape){a.groups * trng_int(&rng, 1, 6), in.h, in.w}, 0, NULL);
        check_layer(m);
        net_free(m);
        /* split attention: K branches summed; a softmax across K branches
         * in G groups of M channels (ResNeSt's radix softmax) */
        a = net_attr_default(NET_BSUM);
        a.groups = t % 4 + 1;
        m = build(NET_BSUM, &a, (net_shape){a.groups * trng_int(&rng, 1, 6), in.h, in.w}, 0, NULL);
        check_layer(m);
        net_free(m);
        a = net_attr_default(NET_BSOFTMAX);
        a.groups = trng_int(&rng, 2, 4), a.card = trng_int(&rng, 1, 3);
        m = build(NET_BSOFTMAX, &a, (net_shape){a.groups * a.card * trng_int(&rng, 1, 4), in.h, in.w},
                  0, NULL);
        input_scale = 8; /* exponents far apart: the maximum subtracted matters */
        check_layer(m);
        input_scale = 1;
        net_free(m);
        a = net_attr_default(NET_LAYERNORM);
        a.bn_eps = t % 2 ? 1e-6 : 1e-5;
        m = build(NET_LAYERNORM, &a, in, 0, NULL);
        input_scale = 3; /* a mean well away from 0 */
        check_layer(m);
        input_scale = 1;
        net_free(m);
        a = net_attr_default(NET_L2NORM); /* F.normalize's eps, and one the norms fall below */
        a.bn_eps = t % 3 == 2 ? 0.5 * sqrt(in.c) : 1e-12;
        m = build(NET_L2NORM, &a, in, 0, NULL);
        check_layer(m);
        net_free(m);
        a = net_attr_default(NET_GELU);
        a.gelu_tanh = t % 2;
        m = build(NET_GELU, &a, in, 0, NULL);
        input_scale = 6;
        check_layer(m);
        input_scale = 1;
        net_free(m);
        m = build(NET_SCALE, NULL, in, 0, NULL);
        check_layer(m);
        net_free(m);
    }
    /* Detectors' and segmenters' activations (slopes of both signs, both
     * ELU alphas, clips inside and across 0) and nearest upsampling. */
    for (int t = 0; t < COUNT(10, 2); t++) {
        net_shape in = {trng_int(&rng, 1, 9), trng_int(&rng, 1, 7), trng_int(&rng, 1, 7)};
        net_attr a = net_attr_default(NET_LEAKYRELU);
        a.act_alpha = t % 2 ? 0.1 : -0.3;
        net *m = build(NET_LEAKYRELU, &a, in, 0, NULL);
        check_layer(m);
        net_free(m);
        m = build(NET_PRELU, NULL, in, 0, NULL);
        check_layer(m);
        net_free(m);
        a = net_attr_default(NET_ELU);
        if (t % 2) a.act_alpha = 0.7;
        m = build(NET_ELU, &a, in, 0, NULL);
        input_scale = t % 3 ? 4 : 0.02; /* the tails, and the series near 0 */
        check_layer(m);
        net_free(m);
        m = build(NET_TANH, NULL, in, 0, NULL);
        check_layer(m);
        net_free(m);
        m = build(NET_SOFTPLUS, NULL, in, 0, NULL);
        check_layer(m);
        net_free(m);
        m = build(NET_MISH, NULL, in, 0, NULL); /* more than a chunk of the stack, its tails */
        check_layer(m);
        input_scale = 1;
        net_free(m);
        a = net_attr_default(NET_CLIP);
        a.clip_lo = t % 2 ? -0.5 : 0.2, a.clip_hi = t % 2 ? 0.3 : 0.6;
        m = build(NET_CLIP, &a, in, 0, NULL);
        check_layer(m);
        net_free(m);
        a = net_attr_default(NET_UPSAMPLE);
        a.up_h = trng_int(&rng, 1, 3), a.up_w = trng_int(&rng, 1, 3);
        m = build(NET_UPSAMPLE, &a, in, 0, NULL);
        check_layer(m);
        net_free(m);
        a = net_attr_default(NET_NEAREST); /* up, down, to one pixel */
        a.up_h = trng_int(&rng, 1, 3 * in.h), a.up_w = trng_int(&rng, 1, 3 * in.w);
        m = build(NET_NEAREST, &a, in, 0, NULL);
        check_layer(m);
        net_free(m);
        a = net_attr_default(NET_BILINEAR); /* up, down, to one pixel, both corner rules */
        a.up_h = trng_int(&rng, 1, 3 * in.h), a.up_w = trng_int(&rng, 1, 3 * in.w), a.align_corners = t % 2;
        m = build(NET_BILINEAR, &a, in, 0, NULL);
        check_layer(m);
        net_free(m);
        a = net_attr_default(NET_PAD);
        a.pt = trng_int(&rng, 0, 2), a.pl = trng_int(&rng, 0, 2), a.pb = trng_int(&rng, 0, 2),
        a.pr = trng_int(&rng, 0, 2);
        m = build(NET_PAD, &a, in, 0, NULL);
        input_scale = 4; /* pads of 0 beside negative values */
        check_layer(m);
        input_scale = 1;
        net_free(m);
        a.pad_edge = t % 2, a.pad_reflect = !a.pad_edge; /* reflect: pads below the map's sides */
        if (a.pad_reflect) {
            if (a.pt >= in.h) a.pt = in.h - 1;
            if (a.pb >= in.h) a.pb = in.h - 1;
            if (a.pl >= in.w) a.pl = in.w - 1;
            if (a.pr >= in.w) a.pr = in.w - 1;
        }
        m = build(NET_PAD, &a, in, 0, NULL);
        check_layer(m);
        net_free(m);
        a = net_attr_default(NET_SHUFFLEUP);
        a.up_h = a.up_w = t % 3 + 1, a.ps_dcr = t % 2;
        m = build(NET_SHUFFLEUP, &a, (net_shape){a.up_h * a.up_h * trng_int(&rng, 1, 3), in.h, in.w}, 0, NULL);
        check_layer(m);
        net_free(m);
        a.ps_dcr = t / 3 % 2; /* its inverse, both orders, each factor */
        m = build(NET_SHUFFLEDOWN, &a, (net_shape){in.c, a.up_h * in.h, a.up_h * in.w}, 0, NULL);
        check_layer(m);
        net_free(m);
        a = net_attr_default(NET_INSTNORM);
        a.bn_eps = t % 2 ? 1e-5 : 1e-3;
        m = build(NET_INSTNORM, &a, in, 0, NULL);
        input_scale = 3;
        check_layer(m);
        /* GroupNorm: 1 to 4 groups of 1 to 3 channels (one group is a
         * LayerNorm over the map, one channel per group an InstanceNorm);
         * check_layer's slice starts anywhere, inside a group too. */
        a = net_attr_default(NET_GROUPNORM);
        a.groups = trng_int(&rng, 1, 4);
        a.bn_eps = t % 2 ? 1e-5 : 1e-3;
        net_free(m);
        m = build(NET_GROUPNORM, &a, (net_shape){a.groups * trng_int(&rng, 1, 3), in.h, in.w}, 0, NULL);
        check_layer(m);
        input_scale = 1;
        net_free(m);
    }
    /* ConvTranspose: random kernels, strides, dilations, pads that crop,
     * output padding, groups, with and without bias; a random slice of
     * it too (check_layer), against the gathering loop of naive.c. */
    for (int t = 0; t < COUNT(40, 8); t++) {
        int g = trng_int(&rng, 1, 3);
        net_shape in = {g * trng_int(&rng, 1, 5), trng_int(&rng, 1, 7), trng_int(&rng, 1, 7)};
        net_attr a = net_attr_default(NET_DECONV);
        a.groups = g;
        a.out_c = g * trng_int(&rng, 1, 5);
        a.kh = trng_int(&rng, 1, 4), a.kw = trng_int(&rng, 1, 4);
        a.sh = trng_int(&rng, 1, 3), a.sw = trng_int(&rng, 1, 3);
        a.dh = trng_int(&rng, 1, 2), a.dw = trng_int(&rng, 1, 2);
        a.pt = trng_int(&rng, 0, 2), a.pl = trng_int(&rng, 0, 2);
        a.pb = trng_int(&rng, 0, 2), a.pr = trng_int(&rng, 0, 2);
        a.oph = trng_int(&rng, 0, 1), a.opw = trng_int(&rng, 0, 1);
        a.bias = t % 3 != 0;
        net *m = build(NET_DECONV, &a, in, 0, NULL);
        if (!m) continue; /* pads that leave no output: refused, as test_layers checks */
        check_layer(m);
        net_free(m);
    }
    /* Softmax of large logits must not overflow. */
    net *n = build(NET_SOFTMAX, NULL, (net_shape){3, 1, 1}, 0, NULL);
    float x[3] = {1000.0f, 1001.0f, 1002.0f}, y[3], want[3];
    const float *in[1] = {x};
    char err[BASE_ERRLEN];
    double e0 = exp(-2.0), e1 = exp(-1.0), s = e0 + e1 + 1.0;
    want[0] = (float)(e0 / s), want[1] = (float)(e1 / s), want[2] = (float)(1.0 / s);
    CHECK(kern_run(n, 0, 0, 3, in, NULL, y, NULL, err) == 0, "%s", err);
    CHECK(cmp_tol(y, want, 3, 1e-6, 1e-7, NULL) <= 0, "softmax(1000,1001,1002) = %g %g %g", y[0], y[1], y[2]);
    net_free(n);
}

/* Channel-wise kinds on a channel sub-tensor give the matching channels. */
static void channelwise_slices(void)
{
    static const net_kind kinds[] = {NET_RELU,     NET_BN,     NET_MAXPOOL, NET_AVGPOOL,
                                     NET_GAP,      NET_DROPOUT, NET_SIGMOID, NET_HSIGMOID,
                                     NET_HSWISH,   NET_GELU,   NET_SCALE,   NET_LEAKYRELU,
                                     NET_PRELU,    NET_TANH,   NET_ELU,     NET_CLIP,
                                     NET_UPSAMPLE, NET_PAD,    NET_BILINEAR, NET_INSTNORM,
                                     NET_SOFTPLUS, NET_NEAREST, NET_MISH};
    char err[BASE_ERRLEN];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        net_attr a = net_attr_default(kinds[k]);
        a.up_h = 2, a.up_w = 3, a.clip_lo = -0.4, a.clip_hi = 0.5;
        if (kinds[k] == NET_BILINEAR || kinds[k] == NET_NEAREST) a.up_h = 13, a.up_w = 5;
        a.kh = a.kw = 3, a.sh = a.sw = 2, a.pt = a.pl = 1, a.ceil_mode = 1;
        net *n = build(kinds[k], &a, (net_shape){7, 9, 8}, 0, NULL);
        const net_layer *L = &n->layers[0];
        net_shape xs = n->input;
        size_t xhw = (size_t)xs.h * xs.w, hw = (size_t)L->out.h * L->out.w;
        float *x = rnd((size_t)net_shape_numel(xs)), *w = rnd_weights(n, 0);
        float *full = malloc((size_t)net_shape_numel(L->out) * sizeof *full), *part = malloc(7 * hw * sizeof *part);
        const float *in[1] = {x};
        CHECK(kern_run(n, 0, 0, 7, in, w, full, NULL, err) == 0, "%s", err);
        int c0 = 2, nc = 4;
        float sw[16];
        int nv = net_wvecs(net_kind_info(kinds[k])->wlayout); /* BatchNorm 4, Scale 1 */
        for (int q = 0; q < nv; q++) memcpy(sw + q * nc, w + q * 7 + c0, (size_t)nc * sizeof *sw);
        in[0] = x + c0 * xhw;
        CHECK(kern_run(n, 0, c0, nc, in, nv ? sw : NULL, part, NULL, err) == 0, "%s", err);
        CHECK(memcmp(part, full + c0 * hw, nc * hw * sizeof *part) == 0, "%s slice differs",
              net_kind_name(kinds[k]));
        free(x), free(w), free(full), free(part);
        net_free(n);
    }
}

/* A Conv's channel slices equal the whole layer bit for bit under our own
 * product, slices of 2 to 15 channels included (the blocking comes from the
 * layer's shape, never the slice's), and to float rounding under the BLAS,
 * whose order of summation may follow the product's shape (OpenBLAS's
 * Haswell kernels, the path without AVX-512, differ in the last bits for
 * any slice; its SkylakeX kernels agree on the slices here since the bands
 * follow the layer, not on every slice of every shape).  The case is the review's (64 -> 32, 5x5 on
 * 96x96: im2col, bands of several rows). */
static void conv_slices_bitwise(void)
{
    char err[BASE_ERRLEN];
    net_attr a = net_attr_default(NET_CONV);
    a.out_c = 32, a.kh = a.kw = 5, a.pt = a.pl = a.pb = a.pr = 2, a.bias = 1;
    net *n = build(NET_CONV, &a, (net_shape){64, 96, 96}, 0, NULL);
    const net_layer *L = &n->layers[0];
    size_t hw = (size_t)L->out.h * L->out.w, nw;
    float *x = rnd((size_t)net_shape_numel(n->input)), *w = NULL, *sw = NULL;
    CHECK(kern_weights_slice(n, 0, 0, 32, 7, &w, &nw, err) == 0, "%s", err);
    float *full = malloc(32 * hw * sizeof *full), *part = malloc(32 * hw * sizeof *part);
    float *ws = malloc((kern_workspace_floats(n, 0, 32) + 1) * sizeof *ws);
    const float *in[1] = {x};
    static const int cuts[][2] = {{0, 30}, {30, 2}, {5, 3}, {8, 16}, {3, 1}};
    for (int mode = 0; mode <= 2; mode += 2) {
        kern_set_gemm(mode);
        int own = kern_gemm_own();
        if (mode == 2 && !own) continue; /* no AVX-512 here, or switched off */
        CHECK(kern_run(n, 0, 0, 32, in, w, full, ws, err) == 0, "%s", err);
        for (size_t k = 0; k < sizeof cuts / sizeof *cuts; k++) {
            int c0 = cuts[k][0], nc = cuts[k][1];
            CHECK(kern_weights_slice(n, 0, c0, nc, 7, &sw, &nw, err) == 0, "%s", err);
            CHECK(kern_run(n, 0, c0, nc, in, sw, part, ws, err) == 0, "%s", err);
            free(sw);
            size_t len = (size_t)nc * hw;
            if (own)
                CHECK(memcmp(part, full + (size_t)c0 * hw, len * sizeof *part) == 0,
                      "own product: slice [%d, +%d) differs from the whole layer", c0, nc);
            else
                CHECK(cmp_tol(part, full + (size_t)c0 * hw, len, RTOL, ATOL, NULL) <= 0,
                      "BLAS: slice [%d, +%d) differs from the whole layer beyond rounding", c0, nc);
        }
    }
    kern_set_gemm(1);
    free(x), free(w), free(full), free(part), free(ws);
    net_free(n);
}

/* ReLU, BatchNorm, Add (and one that subtracts), L2Norm, Flatten, Dropout...
 * in place (out == inputs[0]). */
static void in_place_tests(void)
{
    static const net_kind kinds[] = {NET_RELU,     NET_BN,     NET_ADD,   NET_FLATTEN,
                                     NET_DROPOUT,  NET_SIGMOID, NET_HSIGMOID, NET_HSWISH,
                                     NET_LAYERNORM, NET_GELU,  NET_SCALE, NET_LEAKYRELU,
                                     NET_PRELU,    NET_TANH,   NET_ELU,   NET_CLIP,
                                     NET_INSTNORM, NET_SOFTPLUS, NET_MISH, NET_L2NORM, NET_ADD};
    char err[BASE_ERRLEN];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int pc[3] = {5, 5, 5};
        int sub = k + 1 == sizeof kinds / sizeof kinds[0]; /* the last Add subtracts */
        net_attr sa = net_attr_default(NET_ADD);
        sa.add_sub = 1;
        net *n = build(kinds[k], sub ? &sa : NULL, (net_shape){5, 6, 7},
                       kinds[k] == NET_ADD ? (sub ? 2 : 3) : 0, pc);
        int li = n->n - 1;
        size_t len = 5 * 6 * 7;
        float *x[3], *ref = malloc(len * sizeof *ref), *w = rnd_weights(n, li);
        for (int q = 0; q < 3; q++) x[q] = rnd(len);
        const float *in[3] = {x[0], x[1], x[2]};
        naive_layer(n, li, in, w, ref);
        CHECK(kern_run(n, li, 0, n->layers[li].out.c, in, w, x[0], NULL, err) == 0, "%s", err);
        CHECK(cmp_tol(x[0], ref, len, RTOL, ATOL, NULL) <= 0, "%s in place differs", net_kind_name(kinds[k]));
        for (int q = 0; q < 3; q++) free(x[q]);
        free(ref), free(w);
        net_free(n);
    }
}

static void error_tests(void)
{
    char err[BASE_ERRLEN] = "";
    float x[5 * 4 * 4], y[5 * 4 * 4];
    const float *in[1] = {x};
    net *n = build(NET_LRN, NULL, (net_shape){5, 4, 4}, 0, NULL);
    CHECK(kern_run(n, 0, 1, 2, in, NULL, y, NULL, err) == -1, "LRN slice accepted");
    CHECK(strstr(err, "L") && strstr(err, "LRN"), "err: %s", err);
    CHECK(kern_run(n, 0, 0, 6, in, NULL, y, NULL, err) == -1, "channels beyond out.c accepted");
    CHECK(kern_run(n, 3, 0, 5, in, NULL, y, NULL, err) == -1, "layer 3 accepted");
    net_free(n);
    net_attr a = net_attr_default(NET_CONV);
    a.out_c = 2, a.kh = a.kw = 3;
    n = build(NET_CONV, &a, (net_shape){5, 4, 4}, 0, NULL);
    CHECK(kern_run(n, 0, 0, 2, in, NULL, y, NULL, err) == -1, "conv without weights accepted");
    CHECK(kern_run(n, 0, 0, 2, in, x, y, NULL, err) == -1, "conv without workspace accepted");
    float *w;
    size_t nw;
    CHECK(kern_weights_slice(n, 0, 1, 2, 1, &w, &nw, err) == -1 && w == NULL, "bad weight slice accepted");
    CHECK(kern_time_slice(n, 0, 0, 2, 1, 3, err) > 0, "timing: %s", err);
    CHECK(kern_time_slice(n, 0, 0, 3, 1, 3, err) < 0, "bad timing slice accepted");
    net_free(n);
}

int main(int argc, char **argv)
{
    small = argc > 1 && !strcmp(argv[1], "--small");
    kern_set_threads(1);
    conv_tests();
    for (int mode = 1; mode <= 4; mode *= 2) { /* by shape, then F(2x2) and F(4x4) forced */
        kern_set_winograd(mode);
        wino_cases();
    }
    kern_set_winograd(1);
    winograd_switch();
    fc_tests();
    pool_tests();
    misc_tests();
    channelwise_slices();
    conv_slices_bitwise();
    in_place_tests();
    error_tests();
    CHECK(vmath_check() == 0, "kernels/vmath.c");
    /* The same with two threads (BLAS and the kernels' own loops). */
    kern_set_threads(2);
    CHECK(kern_get_threads() == 2, "threads");
    conv_tests();
    pool_tests();
    kern_set_threads(1);
    for (int k = 0; k < NET_KIND_COUNT; k++)
        CHECK(ncases[k] > 0, "no test case for %s", net_kind_name((net_kind)k));
    printf("test_kernels: %d failures; cases:", check_failures);
    for (int k = 0; k < NET_KIND_COUNT; k++) printf(" %s=%d", net_kind_name((net_kind)k), ncases[k]);
    printf("\n");
    return check_failures ? 1 : 0;
}

/* test_spatial.c -- row bands (docs/spatial.md): the input-row rule
 * against hand-worked cases and a brute-force scan of the windows; row
 * cuts in mappings and their file format; Plans with row and mixed cuts
 * (plan_check, and the bytes moved recomputed from the mapping alone with
 * the brute-force rule); the cost model on bands; the spatial chromosome
 * (hand-worked decode, decode total on random genomes, hybrid unchanged).
 *
 * `test_spatial N` runs N random mappings per network (default 400).
 */
#include "chrom.h"
#include "cost.h"
#include "mapping.h"
#include "net.h"
#include "plan.h"
#include "platform.h"

#include "check.h"
#include "group_chans.h"
#include "randmap.h"
#include "bandkinds.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nrandom = 400;

/* ---- the rule ---- */

/* A zoo network, or the test network of the kinds that move positions. */
static net *open_net(const char *name, char *err)
{
    return !strcmp(name, "bandkinds") ? bandkinds_net(err) : net_zoo(name, err);
}

/* Kinds whose output position o reads input positions other than o. */
static int moves(net_kind k)
{
    return k == NET_PAD || k == NET_UPSAMPLE || k == NET_SHUFFLEUP || k == NET_BILINEAR ||
           k == NET_INSTNORM || k == NET_GROUPNORM || k == NET_DECONV || k == NET_SLICE ||
           k == NET_SHUFFLEDOWN || k == NET_NEAREST;
}

/* Their input positions, from the kinds' definitions (docs/network-format.md)
 * position by position: Pad mirrors (reflect: -s, 2(H-1) - s), repeats its
 * edge or reads zeros outside the map, and a band that mirrors or repeats
 * at an edge reads from that edge (the kernel indexes its box as the
 * whole map: docs/spatial.md); Upsample and PixelShuffle read o / s;
 * Bilinear its two neighbours of PyTorch's source coordinate;
 * InstanceNorm and GroupNorm every position; ConvTranspose every input position one of
 * whose taps lands on o (h S - P + k D = o), the hull; a Slice the input
 * it keeps as its o-th: counted from its first, every step-th; a
 * PixelUnshuffle the r rows of its block; Nearest PyTorch's floorf(o H / OH). */
static void moved_axis(const net_layer *L, int H, int OH, int cols, int o0, int o1, int *r0, int *r1)
{
    const net_attr *a = &L->a;
    int lo = 1 << 30, hi = -1;
    for (int o = o0; o < o1; o++) {
        int src[2] = {-1, -1};
        if (L->kind == NET_PAD) {
            int s = o - (cols ? a->pl : a->pt);
            if (s >= 0 && s < H) src[0] = s;
            else if (a->pad_reflect) src[0] = s < 0 ? -s : 2 * (H - 1) - s;
            else if (a->pad_edge) src[0] = s < 0 ? 0 : H - 1;
            if ((a->pad_reflect || a->pad_edge) && s < 0) src[1] = 0;
            if ((a->pad_reflect || a->pad_edge) && s >= H) src[1] = H - 1;
        } else if (L->kind == NET_UPSAMPLE || L->kind == NET_SHUFFLEUP) {
            src[0] = o / (L->kind == NET_SHUFFLEUP || !cols ? a->up_h : a->up_w);
        } else if (L->kind == NET_DECONV) {
            int S = cols ? a->sw : a->sh, P = cols ? a->pl : a->pt, K = cols ? a->kw : a->kh;
            int D = cols ? a->dw : a->dh;
            for (int h = 0; h < H; h++)
                for (int t = 0; t < K; t++)
                    if (h * S - P + t * D == o) {
                        if (src[0] < 0 || h < src[0]) src[0] = h;
                        if (h > src[1]) src[1] = h;
                    }
        } else if (L->kind == NET_NEAREST) { /* PyTorch's floorf(o * (float)(H / OH)) */
            float s = (float)H / (float)OH;
            src[0] = H == OH ? o : (int)floorf((float)o * s);
            if (src[0] > H - 1) src[0] = H - 1;
        } else if (L->kind == NET_SHUFFLEDOWN) { /* its r x r block */
            src[0] = o * a->up_h, src[1] = o * a->up_h + a->up_h - 1;
        } else if (L->kind == NET_SLICE) {
            for (int h = cols ? a->sl_left : a->sl_top, j = 0; h < H; h += cols ? a->sw : a->sh, j++)
                if (j == o) src[0] = h;
        } else if (L->kind == NET_BILINEAR) {
            double c = a->align_corners ? (OH > 1 ? (double)o * (H - 1) / (OH - 1) : 0)
                                        : (o + 0.5) * H / OH - 0.5;
            int f = c < 0 ? 0 : (int)floor(c);
            if (f > H - 1) f = H - 1;
            src[0] = f, src[1] = f + 1 < H ? f + 1 : H - 1;
        } else {
            src[0] = 0, src[1] = H - 1;
        }
        for (int t = 0; t < 2; t++) {
            if (src[t] < 0) continue;
            if (src[t] < lo) lo = src[t];
            if (src[t] > hi) hi = src[t];
        }
    }
    /* Nothing read: one row, as a box is never empty -- a Pad's nearest to
     * the band; a ConvTranspose band that no tap reaches (stride gaps, output
     * padding), the row its interval would start at, in the map. */
    if (hi < 0 && L->kind == NET_DECONV) {
        int S = cols ? a->sw : a->sh, P = cols ? a->pl : a->pt, K = cols ? a->kw : a->kh;
        int D = cols ? a->dw : a->dh, lo0 = o0 + P - (K - 1) * D;
        *r0 = lo0 <= 0 ? 0 : (lo0 + S - 1) / S;
        if (*r0 > H - 1) *r0 = H - 1;
        *r1 = *r0 + 1;
    } else if (hi < 0) {
        *r0 = o0 < (cols ? a->pl : a->pt) ? 0 : H - 1, *r1 = *r0 + 1;
    } else {
        *r0 = lo, *r1 = hi + 1;
    }
}

/* The rows a band reads, by enumerating every input row of the (dilated)
 * window span of every output row, or only its taps (taps_only): the same
 * for dilation 1; with dilation the rule names the span, which holds every
 * tap (independent of net_rows_in's closed form). */
static void scan_axis(const net *n, int i, int k, int cols, int o0, int o1, int taps_only,
                      int *r0, int *r1)
{
    const net_layer *L = &n->layers[i];
    const net_attr *a = &L->a;
    net_shape in = net_in_shape(n, i, k);
    int H = cols ? in.w : in.h, OH = cols ? L->out.w : L->out.h, lo = 1 << 30, hi = -1;
    int win = L->kind == NET_CONV || L->kind == NET_MAXPOOL || L->kind == NET_AVGPOOL;
    if (moves(L->kind)) {
        moved_axis(L, H, OH, cols, o0, o1, r0, r1);
        return;
    }
    if (!win) {
        if (H != OH) *r0 = 0, *r1 = H;
        else *r0 = o0, *r1 = o1;
        return;
    }
    int D = L->kind == NET_CONV ? (cols ? a->dw : a->dh) : 1;
    int tK = ((cols ? a->kw : a->kh) - 1) * D + 1, S = cols ? a->sw : a->sh, P = cols ? a->pl : a->pt;
    for (int o = o0; o < o1; o++)
        for (int t = 0; t < tK; t++) {
            if (taps_only && t % D) continue;
            int r = o * S - P + t;
            if (r < 0 || r >= H) continue;
            if (r < lo) lo = r;
            if (r > hi) hi = r;
        }
    if (hi < 0 && taps_only) *r0 = *r1 = 0;
    else if (hi < 0) *r0 = o0 * S - P >= H ? H - 1 : 0, *r1 = *r0 + 1; /* the nearest row */
    else *r0 = lo, *r1 = hi + 1;
}

static void scan_rows(const net *n, int i, int k, int o0, int o1, int taps_only, int *r0, int *r1)
{
    scan_axis(n, i, k, 0, o0, o1, taps_only, r0, r1);
}

static void brute_rows(const net *n, int i, int k, int o0, int o1, int *r0, int *r1)
{
    scan_rows(n, i, k, o0, o1, 0, r0, r1);
}

static void brute_cols(const net *n, int i, int k, int o0, int o1, int *q0, int *q1)
{
    scan_axis(n, i, k, 1, o0, o1, 0, q0, q1);
}

static net *one_layer(net_kind kind, net_attr a, net_shape in, char *err)
{
    net *n = net_new("one", "x", in);
    const char *x[1] = {"x"};
    net_add(n, "l", kind, &a, 1, x, err);
    if (net_finalize(n, "one", err)) {
        net_free(n);
        return NULL;
    }
    return n;
}

static void expect_rows(const net *n, int o0, int o1, int w0, int w1)
{
    int r0, r1, b0, b1;
    net_rows_in(n, 0, 0, o0, o1, &r0, &r1);
    brute_rows(n, 0, 0, o0, o1, &b0, &b1);
    CHECK(r0 == w0 && r1 == w1, "out rows [%d,%d): got [%d,%d), hand-worked [%d,%d)", o0, o1, r0,
          r1, w0, w1);
    CHECK(b0 == w0 && b1 == w1, "brute force [%d,%d) disagrees with the hand-worked [%d,%d)", b0,
          b1, w0, w1);
}

static void expect_cols(const net *n, int o0, int o1, int w0, int w1)
{
    int q0, q1, b0, b1;
    net_cols_in(n, 0, 0, o0, o1, &q0, &q1);
    brute_cols(n, 0, 0, o0, o1, &b0, &b1);
    CHECK(q0 == w0 && q1 == w1, "out columns [%d,%d): got [%d,%d), hand-worked [%d,%d)", o0, o1,
          q0, q1, w0, w1);
    CHECK(b0 == w0 && b1 == w1, "brute force [%d,%d) disagrees with the hand-worked [%d,%d)", b0,
          b1, w0, w1);
}

/* Columns: the width's own stride, left pad, kernel and dilation, never
 * the height's.  Kernel 3x5, stride 1x2, pads top/bottom 1/1, left/right
 * 2/1, W = 11: out.w = (11 + 2 + 1 - 5) / 2 + 1 = 5; output column o reads
 * input columns 2o - 2 .. 2o + 2. */
static void hand_cols(void)
{
    char err[BASE_ERRLEN];
    net_attr a = net_attr_conv(4, 3, 1, 1, 1, 1);
    a.kw = 5, a.sw = 2, a.pl = 2, a.pr = 1;
    net *n = one_layer(NET_CONV, a, (net_shape){2, 6, 11}, err);
    CHECK(n && n->layers[0].out.w == 5 && n->layers[0].out.h == 6, "%s", err);
    if (!n) return;
    expect_cols(n, 0, 2, 0, 5);  /* -2..4, left pad not read */
    expect_cols(n, 2, 5, 2, 11); /* 2..10 */
    expect_cols(n, 4, 5, 6, 11); /* the last window: 6..10, right pad not read */
    expect_cols(n, 1, 2, 0, 5);  /* 0..4 */
    expect_rows(n, 0, 6, 0, 6);  /* rows keep the height's 3x3, stride 1, pad 1 */
    net_free(n);
    /* Dilation 2 in width only (tK = 5), pad 2, W = 8: out.w 8. */
    a = net_attr_conv(4, 3, 1, 2, 1, 1);
    a.dw = 2, a.pt = a.pb = 0;
    n = one_layer(NET_CONV, a, (net_shape){2, 4, 8}, err);
    CHECK(n && n->layers[0].out.w == 8 && n->layers[0].out.h == 2, "%s", err);
    if (!n) return;
    expect_cols(n, 2, 3, 0, 5); /* taps 0, 2, 4 */
    expect_cols(n, 0, 1, 0, 3); /* taps -2, 0, 2 */
    expect_rows(n, 0, 1, 0, 3); /* height undilated: rows 0..2 */
    net_free(n);
    /* The closed form against brute force, height and width unlike. */
    unsigned seed = 11;
    int bad = 0;
    for (int t = 0; t < 2000; t++) {
        seed = seed * 1103515245u + 12345u;
        int k = 1 + (seed >> 8) % 5, s = 1 + (seed >> 12) % 3, d = 1 + (seed >> 16) % 3;
        int p = (seed >> 20) % k, W = (d * (k - 1) + 1) + (seed >> 24) % 12;
        net_attr ca = net_attr_conv(2, 1 + (seed >> 5) % 3, 1, 0, 1, 0);
        ca.kw = k, ca.sw = s, ca.dw = d, ca.pl = p, ca.pr = (seed >> 3) % k;
        net *m = one_layer(NET_CONV, ca, (net_shape){1, 5, W}, err);
        if (!m) continue;
        int ow = m->layers[0].out.w;
        for (int o0 = 0; o0 < ow; o0++)
            for (int o1 = o0 + 1; o1 <= ow; o1++) {
                int q0, q1, b0, b1;
                net_cols_in(m, 0, 0, o0, o1, &q0, &q1);
                brute_cols(m, 0, 0, o0, o1, &b0, &b1);
                if ((q0 != b0 || q1 != b1) && bad++ < 5)
                    CHECK(0, "kw%d sw%d dw%d pl%d W%d columns [%d,%d): [%d,%d) vs brute [%d,%d)", k,
                          s, d, p, W, o0, o1, q0, q1, b0, b1);
            }
        net_free(m);
    }
    CHECK(bad == 0, "%d column band(s) disagree with brute force", bad);
    printf("ok: input columns of bands (hand-worked cases, brute force)\n");
}

static void hand_cases(void)
{
    char err[BASE_ERRLEN];
    /* 3x3, stride 1, pad 1, H = 10 (out 10): unequal bands, both borders. */
    net *n = one_layer(NET_CONV, net_attr_conv(4, 3, 1, 1, 1, 1), (net_shape){2, 10, 6}, err);
    CHECK(n && n->layers[0].out.h == 10, "%s", err);
    expect_rows(n, 0, 4, 0, 5);  /* top border: pad row not read */
    expect_rows(n, 4, 7, 3, 8);  /* one halo row each side */
    expect_rows(n, 7, 10, 6, 10); /* bottom border */
    expect_rows(n, 0, 10, 0, 10);
    net_free(n);
    /* 3x3, stride 2, pad 1, H = 11 (out 6). */
    n = one_layer(NET_CONV, net_attr_conv(4, 3, 2, 1, 1, 1), (net_shape){2, 11, 5}, err);
    CHECK(n && n->layers[0].out.h == 6, "%s", err);
    expect_rows(n, 0, 3, 0, 6);  /* rows 2*2-1+3 = 6 */
    expect_rows(n, 3, 6, 5, 11); /* 2*3-1 = 5 .. min(11, 2*5-1+3 = 12) */
    net_free(n);
    /* 3x3, stride 2, pad 1, H = 10 (out 5): the last window skips the
     * bottom pad; its rows are 7..9, not 7..10. */
    n = one_layer(NET_CONV, net_attr_conv(4, 3, 2, 1, 1, 1), (net_shape){2, 10, 5}, err);
    CHECK(n && n->layers[0].out.h == 5, "%s", err);
    expect_rows(n, 4, 5, 7, 10);
    expect_rows(n, 2, 4, 3, 8);
    net_free(n);
    /* 3x3, dilation 2 (tK = 5), pad 2, H = 8 (out 8). */
    net_attr a = net_attr_conv(4, 3, 1, 2, 1, 1);
    a.dh = a.dw = 2;
    n = one_layer(NET_CONV, a, (net_shape){2, 8, 8}, err);
    CHECK(n && n->layers[0].out.h == 8, "%s", err);
    expect_rows(n, 2, 3, 0, 5); /* taps 0, 2, 4 */
    expect_rows(n, 5, 8, 3, 8); /* taps 3..9 clipped to 7 */
    expect_rows(n, 0, 1, 0, 3); /* taps -2, 0, 2 */
    net_free(n);
    /* A band thinner than the kernel: 5x5, pad 2, one output row. */
    n = one_layer(NET_CONV, net_attr_conv(4, 5, 1, 2, 1, 1), (net_shape){2, 9, 9}, err);
    expect_rows(n, 4, 5, 2, 7);
    expect_rows(n, 8, 9, 6, 9);
    net_free(n);
    /* MaxPool 2x2 stride 2 on 7 rows (out 3); 3x3 stride 2 ceil mode. */
    n = one_layer(NET_MAXPOOL, net_attr_pool(NET_MAXPOOL, 2, 2, 0), (net_shape){2, 7, 7}, err);
    CHECK(n && n->layers[0].out.h == 3, "%s", err);
    expect_rows(n, 1, 3, 2, 6);
    net_free(n);
    net_attr pa = net_attr_pool(NET_MAXPOOL, 3, 2, 0);
    pa.ceil_mode = 1;
    n = one_layer(NET_MAXPOOL, pa, (net_shape){2, 8, 8}, err);
    CHECK(n && n->layers[0].out.h == 4, "%s", err); /* ceil((8-3)/2)+1 */
    expect_rows(n, 3, 4, 6, 8);                    /* window 6..8 clipped */
    net_free(n);
    /* ReLU: the same rows. */
    n = one_layer(NET_RELU, net_attr_default(NET_RELU), (net_shape){2, 7, 7}, err);
    expect_rows(n, 2, 5, 2, 5);
    net_free(n);
    /* Kinds that move rows, worked by hand from their definitions. */
    net_attr ua = net_attr_default(NET_UPSAMPLE);
    ua.up_h = 2, ua.up_w = 3;
    n = one_layer(NET_UPSAMPLE, ua, (net_shape){2, 5, 4}, err); /* 10 x 12 */
    expect_rows(n, 3, 7, 1, 4);                                 /* rows 3..6 of x2: 1..3 */
    expect_cols(n, 4, 9, 1, 3);                                 /* columns 4..8 of x3: 1, 2 */
    net_free(n);
    net_attr ba = net_attr_default(NET_BILINEAR);
    ba.up_h = 13, ba.up_w = 13;
    n = one_layer(NET_BILINEAR, ba, (net_shape){2, 6, 6}, err);
    expect_rows(n, 4, 7, 1, 4); /* s(4) = 4.5*6/13 - 0.5 = 1.58, s(6) = 2.5: rows 1..3 */
    expect_rows(n, 0, 1, 0, 2); /* s(0) = -0.27, clamped to 0: rows 0 and 1 */
    expect_rows(n, 12, 13, 5, 6); /* s(12) = 5.27: row 5 twice */
    net_free(n);
    ba.align_corners = 1;
    n = one_layer(NET_BILINEAR, ba, (net_shape){2, 6, 6}, err);
    expect_rows(n, 5, 8, 2, 4); /* s = o * 5/12: 2.08 .. 2.92 */
    net_free(n);
    net_attr pa2 = net_attr_default(NET_PAD);
    pa2.pt = 2, pa2.pb = 3, pa2.pad_reflect = 1;
    n = one_layer(NET_PAD, pa2, (net_shape){2, 6, 6}, err); /* 11 rows */
    expect_rows(n, 0, 2, 0, 3);                             /* mirrors rows 2, 1 about row 0 */
    expect_rows(n, 3, 6, 1, 4);                             /* inside: rows 1..3 */
    expect_rows(n, 8, 11, 2, 6);                            /* mirrors 4, 3, 2 about row 5 */
    net_free(n);
    pa2.pad_reflect = 0;
    n = one_layer(NET_PAD, pa2, (net_shape){2, 6, 6}, err);
    expect_rows(n, 0, 2, 0, 1);  /* zeros: the nearest row, unused */
    expect_rows(n, 1, 4, 0, 2);  /* a zero row, then rows 0, 1 */
    expect_rows(n, 9, 11, 5, 6); /* zeros below */
    net_free(n);
    net_attr da = net_attr_default(NET_DECONV);
    da.out_c = 2, da.kh = da.kw = 3, da.sh = da.sw = 2, da.pt = da.pb = da.pl = da.pr = 1;
    da.oph = da.opw = 1;
    n = one_layer(NET_DECONV, da, (net_shape){2, 5, 5}, err); /* 10 rows: o = 2h - 1 + k */
    expect_rows(n, 0, 1, 0, 1);  /* o = 0: h = 0 (k = 1) */
    expect_rows(n, 3, 6, 1, 4);  /* o = 3: h = 1, 2; o = 5: h = 2, 3 */
    expect_rows(n, 9, 10, 4, 5); /* o = 9 (output padding): h = 4 (k = 2) */
    net_free(n);
    net_attr ia = net_attr_default(NET_INSTNORM);
    n = one_layer(NET_INSTNORM, ia, (net_shape){2, 6, 6}, err);
    expect_rows(n, 2, 3, 0, 6); /* the whole map: its mean and variance */
    /* 72 ops: a band of half the rows costs 48 (statistics) + 12 */
    CHECK_I64(net_box_ops(n, 0, 0, 2, 0, 3, 0, 6), 60);
    CHECK_I64(net_box_ops(n, 0, 0, 2, 0, 6, 0, 6), 72);
    net_free(n);
    net_attr ga = net_attr_default(NET_GROUPNORM);
    ga.groups = 2;
    n = one_layer(NET_GROUPNORM, ga, (net_shape){4, 6, 6}, err);
    expect_rows(n, 2, 3, 0, 6); /* the whole map: its groups' mean and variance */
    expect_cols(n, 5, 6, 0, 6);
    /* 144 ops: a band of half the rows costs 96 (statistics) + 24 */
    CHECK_I64(net_box_ops(n, 0, 0, 4, 0, 3, 0, 6), 120);
    /* output channels [1, 3) read the input channels of both groups, [0, 4);
     * [2, 4) those of the second, [2, 4) */
    int a0, a1;
    net_chans_in(n, 0, 0, 1, 3, &a0, &a1);
    CHECK(a0 == 0 && a1 == 4, "GroupNorm [1, 3) reads [%d, %d)", a0, a1);
    net_chans_in(n, 0, 0, 2, 4, &a0, &a1);
    CHECK(a0 == 2 && a1 == 4, "GroupNorm [2, 4) reads [%d, %d)", a0, a1);
    /* 36 ops a channel: the slice [1, 3) reads 4 channels twice and writes
     * 2, (2 x 4 + 2) / 3 channels' worth = 120; [2, 4), a whole group, 72 */
    CHECK_I64(net_slice_ops(n, 0, 1, 2), 120);
    CHECK_I64(net_slice_ops(n, 0, 2, 2), 72);
    CHECK_I64(net_slice_ops(n, 0, 0, 4), 144);
    net_free(n);

    /* The closed form against brute force on many shapes and bands. */
    unsigned seed = 7;
    int bad = 0;
    for (int t = 0; t < 3000; t++) {
        seed = seed * 1103515245u + 12345u;
        int k = 1 + (seed >> 8) % 5, s = 1 + (seed >> 12) % 3, d = 1 + (seed >> 16) % 3;
        int p = (seed >> 20) % k, H = (d * (k - 1) + 1) + (seed >> 24) % 12;
        net_attr ca = net_attr_conv(2, k, s, p, 1, 0);
        ca.dh = ca.dw = d;
        net *m = one_layer(NET_CONV, ca, (net_shape){1, H, 3}, err);
        if (!m) continue;
        int oh = m->layers[0].out.h;
        for (int o0 = 0; o0 < oh; o0++)
            for (int o1 = o0 + 1; o1 <= oh; o1++) {
                int r0, r1, b0, b1, t0, t1;
                net_rows_in(m, 0, 0, o0, o1, &r0, &r1);
                brute_rows(m, 0, 0, o0, o1, &b0, &b1);
                scan_rows(m, 0, 0, o0, o1, 1, &t0, &t1);
                int ok = r0 == b0 && r1 == b1 && (t1 <= t0 || (r0 <= t0 && t1 <= r1)) &&
                         (d > 1 || (r0 == t0 && r1 == t1) || t1 <= t0);
                if (!ok && bad++ < 5)
                    CHECK(0, "k%d s%d d%d p%d H%d rows [%d,%d): [%d,%d) vs brute [%d,%d)", k, s, d,
                          p, H, o0, o1, r0, r1, b0, b1);
            }
        net_free(m);
    }
    CHECK(bad == 0, "%d band(s) disagree with brute force", bad);
    /* The kinds that move rows, on random shapes: every band of rows and
     * of columns against moved_axis's enumeration. */
    bad = 0;
    int moved = 0;
    for (int t = 0; t < 1500; t++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = seed >> 8;
        int H = 1 + r % 9, W = 1 + (r >> 4) % 9, kind = (r >> 8) % 4;
        net_attr a;
        net_kind k;
        if (kind == 0) {
            k = NET_PAD, a = net_attr_default(NET_PAD);
            a.pt = (r >> 10) % 4, a.pb = (r >> 12) % 4, a.pl = (r >> 14) % 4, a.pr = (r >> 16) % 4;
            int mode = (r >> 18) % 3;
            a.pad_reflect = mode == 1, a.pad_edge = mode == 2;
            if (a.pad_reflect && (a.pt >= H || a.pb >= H || a.pl >= W || a.pr >= W)) continue;
        } else if (kind == 1) {
            k = NET_UPSAMPLE, a = net_attr_default(NET_UPSAMPLE);
            a.up_h = 1 + (r >> 10) % 4, a.up_w = 1 + (r >> 12) % 4;
        } else if (kind == 2) {
            k = NET_BILINEAR, a = net_attr_default(NET_BILINEAR);
            a.up_h = 1 + (r >> 10) % 17, a.up_w = 1 + (r >> 15) % 17, a.align_corners = (r >> 20) & 1;
        } else {
            k = NET_DECONV, a = net_attr_default(NET_DECONV);
            a.out_c = 2, a.kh = 1 + (r >> 10) % 4, a.kw = 1 + (r >> 12) % 4;
            a.sh = 1 + (r >> 14) % 4, a.sw = 1 + (r >> 16) % 4; /* kernels smaller than strides too */
            a.dh = 1 + (r >> 18) % 2, a.dw = 1 + (r >> 19) % 2;
            a.pt = a.pb = (r >> 20) % a.kh, a.pl = a.pr = (r >> 22) % a.kw;
            a.oph = (r >> 24) % a.sh, a.opw = (r >> 26) % a.sw;
        }
        net *m = one_layer(k, a, (net_shape){2, H, W}, err);
        if (!m) continue;
        for (int cols = 0; cols < 2; cols++) {
            int OH = cols ? m->layers[0].out.w : m->layers[0].out.h;
            for (int o0 = 0; o0 < OH; o0++)
                for (int o1 = o0 + 1; o1 <= OH; o1++) {
                    int r0, r1, b0, b1;
                    if (cols) net_cols_in(m, 0, 0, o0, o1, &r0, &r1);
                    else net_rows_in(m, 0, 0, o0, o1, &r0, &r1);
                    scan_axis(m, 0, 0, cols, o0, o1, 0, &b0, &b1);
                    moved++;
                    if ((r0 != b0 || r1 != b1) && bad++ < 5)
                        CHECK(0, "%s %s [%d,%d) of %d: [%d,%d) vs enumerated [%d,%d)", net_kind_name(k),
                              cols ? "columns" : "rows", o0, o1, OH, r0, r1, b0, b1);
                }
        }
        net_free(m);
    }
    CHECK(bad == 0 && moved > 10000, "%d of %d bands of kinds that move rows disagree", bad, moved);
    printf("ok: input rows of bands (hand-worked cases, brute force; %d bands of Pad, Upsample, "
           "Bilinear and ConvTranspose)\n", moved);
}

/* ---- mappings and their files ---- */

static platform *plat(int nd, char *err)
{
    char text[2048];
    int len = snprintf(text, sizeof text, "{\"format\": \"dse-platform\", \"name\": \"t%d\", "
                       "\"devices\": [", nd);
    for (int d = 0; d < nd; d++)
        len += snprintf(text + len, sizeof text - len,
                        "%s{\"name\": \"d%d\", \"board\": \"b%d\", \"kind\": \"cpu\", \"cores\": 1, "
                        "\"freq_mhz\": 1000, \"memory_mb\": 4000, \"busy_w\": 5, \"idle_w\": 1}",
                        d ? ", " : "", d, d);
    snprintf(text + len, sizeof text - len, "], \"links\": {\"network\": {\"latency_us\": 100, "
             "\"bandwidth_mbs\": 100}}}");
    return platform_from_json(text, "t.json", err);
}

static void files(void)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo("toy6", err);
    platform *p = plat(3, err);
    CHECK(n && p, "%s", err);
    if (!n || !p) return;
    const char *good = "{\"format\": \"dse-mapping\", \"layers\": {"
                       "\"conv\": {\"rows\": [[\"d1\", 5, 9], [\"d0\", 0, 5], [\"d2\", 14, %d]]},"
                       "\"relu\": {\"rows\": [[\"d0\", 0, 10], [\"d1\", 10, %d]]},"
                       "\"pool\": \"d2\", \"flatten\": \"d2\", \"fc\": [[\"d0\", 0, 4], [\"d1\", 4, 6]],"
                       "\"softmax\": \"d0\"}}";
    int H = n->layers[0].out.h;
    char text[1024];
    snprintf(text, sizeof text, good, H - 14, H - 10);
    mapping *m = mapping_from_json(text, "m.json", n, p, err);
    CHECK(m, "%s", err);
    if (m) {
        CHECK(m->cut[0] == 1 && m->cut[1] == 1 && m->cut[4] == 0);
        CHECK(mapping_slices(m, 0)[0].dev == 0 && mapping_slices(m, 0)[1].c0 == 5);
        char *js = mapping_to_json(m, n, p);
        mapping *m2 = mapping_from_json(js, "again", n, p, err);
        CHECK(m2 && mapping_equal(m, m2), "round trip: %s", m2 ? "differs" : err);
        CHECK(strstr(js, "\"rows\"") != NULL);
        /* Distance: same rows on the same devices -> 0; the same shares as
         * channel slices -> still 0 (only amounts count). */
        CHECK(mapping_distance(m, m2, n) == 0);
        mapping_free(m2);
        free(js);
        char *texts[3], warn[BASE_ERRLEN];
        CHECK(mapping_autodice_texts(m, n, p, texts, warn, err) == 1 && strstr(warn, "rows"),
              "AutoDiCE export of a row cut: %s", warn);
        mapping_free(m);
    }
    /* Errors: rows of a layer that cannot be cut so, gaps, overlaps. */
    static const char *bad[][2] = {
        {"{\"format\": \"dse-mapping\", \"layers\": {\"conv\": \"d0\", \"relu\": \"d0\", \"pool\": "
         "\"d0\", \"flatten\": \"d0\", \"fc\": {\"rows\": [[\"d0\", 0, 1]]}, \"softmax\": \"d0\"}}",
         "cannot be cut by rows"},
        {"{\"format\": \"dse-mapping\", \"layers\": {\"conv\": {\"rows\": [[\"d0\", 0, 3], "
         "[\"d1\", 4, 100]]}, \"relu\": \"d0\", \"pool\": \"d0\", \"flatten\": \"d0\", \"fc\": "
         "\"d0\", \"softmax\": \"d0\"}}",
         "outside"},
        {"{\"format\": \"dse-mapping\", \"layers\": {\"conv\": {\"rows\": [[\"d0\", 0, 3], "
         "[\"d1\", 4, 2]]}, \"relu\": \"d0\", \"pool\": \"d0\", \"flatten\": \"d0\", \"fc\": "
         "\"d0\", \"softmax\": \"d0\"}}",
         "rows 3..3 are not computed"},
        {"{\"format\": \"dse-mapping\", \"layers\": {\"conv\": {\"rows\": [[\"d0\", 0, 3]], "
         "\"cols\": 1}, \"relu\": \"d0\", \"pool\": \"d0\", \"flatten\": \"d0\", \"fc\": "
         "\"d0\", \"softmax\": \"d0\"}}",
         "must be {\"rows\""},
        {"{\"format\": \"dse-mapping\", \"layers\": {\"conv\": {\"rows\": [[\"d0\", 0, 3], "
         "[\"d1\", 3, 13]], \"columns\": [[\"d0\", 0, 3], [\"d1\", 3, 13]]}, \"relu\": \"d0\", "
         "\"pool\": \"d0\", \"flatten\": \"d0\", \"fc\": \"d0\", \"softmax\": \"d0\"}}",
         "or {\"columns\""},
        {"{\"format\": \"dse-mapping\", \"layers\": {\"conv\": \"d0\", \"relu\": \"d0\", \"pool\": "
         "\"d0\", \"flatten\": \"d0\", \"fc\": {\"columns\": [[\"d0\", 0, 1]]}, \"softmax\": \"d0\"}}",
         "cannot be cut by columns"},
        {"{\"format\": \"dse-mapping\", \"layers\": {\"conv\": {\"columns\": [[\"d0\", 0, 3], "
         "[\"d1\", 4, 2]]}, \"relu\": \"d0\", \"pool\": \"d0\", \"flatten\": \"d0\", \"fc\": "
         "\"d0\", \"softmax\": \"d0\"}}",
         "columns 3..3 are not computed"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        m = mapping_from_json(bad[k][0], "bad.json", n, p, err);
        CHECK(!m && strstr(err, bad[k][1]) && strstr(err, "bad.json"), "case %zu: %s", k,
              m ? "accepted" : err);
        mapping_free(m);
    }
    /* A single band of every row is the whole layer (rows flag dropped). */
    snprintf(text, sizeof text, "{\"format\": \"dse-mapping\", \"layers\": {\"conv\": {\"rows\": "
             "[[\"d1\", 0, %d]]}, \"relu\": \"d0\", \"pool\": \"d0\", \"flatten\": \"d0\", "
             "\"fc\": \"d0\", \"softmax\": \"d0\"}}", H);
    m = mapping_from_json(text, "one.json", n, p, err);
    CHECK(m && m->cut[0] == 0 && mapping_nslices(m, 0) == 1, "%s", err);
    mapping_free(m);
    /* mapping_validate: a row flag on a layer with one slice; a cut kind
     * that is none of the three. */
    m = mapping_new(n->n, 3);
    mapping_set_single(m, n, 0);
    m->cut[0] = 1;
    CHECK(mapping_validate(m, n, err) != 0 && strstr(err, "one slice"), "%s", err);
    m->cut[0] = MAP_CUT_COUNT;
    CHECK(mapping_validate(m, n, err) != 0 && strstr(err, "not channels, rows or columns"), "%s", err);
    mapping_free(m);
    /* Column cuts: read, kept, written back as "columns"; the same shares
     * as rows are at distance 0; a device's columns moved elsewhere count. */
    int W = n->layers[0].out.w, Wr = n->layers[1].out.w;
    snprintf(text, sizeof text, "{\"format\": \"dse-mapping\", \"layers\": {"
             "\"conv\": {\"columns\": [[\"d2\", 3, %d], [\"d0\", 0, 3]], \"recompute\": true},"
             "\"relu\": {\"columns\": [[\"d0\", 0, 3], [\"d2\", 3, %d]]},"
             "\"pool\": \"d2\", \"flatten\": \"d2\", \"fc\": \"d0\", \"softmax\": \"d0\"}}",
             W - 3, Wr - 3);
    m = mapping_from_json(text, "cols.json", n, p, err);
    CHECK(m, "%s", err);
    if (m) {
        CHECK(m->cut[0] == MAP_CUT_COLS && m->cut[1] == MAP_CUT_COLS && m->recompute[0] &&
              mapping_slices(m, 0)[0].dev == 0 && mapping_slices(m, 0)[1].c0 == 3);
        map_box b = mapping_slice_box(m, n, 0, &mapping_slices(m, 0)[1]);
        CHECK(b.c0 == 0 && b.nc == n->layers[0].out.c && b.h0 == 0 && b.nh == H && b.w0 == 3 &&
              b.nw == W - 3, "box of a column band");
        char *js = mapping_to_json(m, n, p);
        mapping *m2 = mapping_from_json(js, "again", n, p, err);
        CHECK(m2 && mapping_equal(m, m2), "column round trip: %s", m2 ? "differs" : err);
        CHECK(strstr(js, "\"columns\"") && !strstr(js, "\"rows\""), "%s", js);
        mapping_free(m2);
        free(js);
        mapping_free(m);
    }
    platform_free(p);
    net_free(n);
    printf("ok: row and column cuts in mapping files\n");
}

/* ---- plans ---- */

/* Bytes the plan must move, from the mapping and brute_rows, brute_cols
 * alone: device e needs of producer q the hull of the boxes its slices
 * read (every row and column for a channel slice or a whole layer; the
 * output's first-slice device needs all of the output); it receives the
 * part of every piece of q on another device that lies in that box. */
static int64_t expected_bytes(const net *n, const mapping *m, int source)
{
    int64_t total = 0;
    int nd = m->ndev;
    for (int q = -1; q < n->n; q++) {
        net_shape sh = q < 0 ? n->input : n->layers[q].out;
        for (int e = 0; e < nd; e++) {
            int lo = 1 << 30, hi = -1, clo = 1 << 30, chi = -1; /* row and channel hulls on e */
            int wlo = 1 << 30, whi = -1;                          /* and columns */
            for (int c = 0; c < n->n; c++)
                for (int j = 0; j < n->layers[c].nin; j++) {
                    if (n->layers[c].in[j] != q) continue;
                    for (int k = m->first[c]; k < m->first[c + 1]; k++) {
                        if (m->slices[k].dev != e) continue;
                        int r0 = 0, r1 = sh.h, a0 = 0, a1 = sh.c, q0 = 0, q1 = sh.w;
                        int o0 = m->slices[k].c0, o1 = m->slices[k].c0 + m->slices[k].nc;
                        if (m->cut[c] == MAP_CUT_ROWS) brute_rows(n, c, j, o0, o1, &r0, &r1);
                        else if (m->cut[c] == MAP_CUT_COLS) brute_cols(n, c, j, o0, o1, &q0, &q1);
                        else group_chans(n, c, j, m->slices[k].c0, m->slices[k].nc, sh.c, &a0, &a1);
                        if (r1 <= r0 || q1 <= q0) continue;
                        if (r0 < lo) lo = r0;
                        if (r1 > hi) hi = r1;
                        if (q0 < wlo) wlo = q0;
                        if (q1 > whi) whi = q1;
                        if (a0 < clo) clo = a0;
                        if (a1 > chi) chi = a1;
                    }
                }
            if (q == n->n - 1 && m->slices[m->first[q]].dev == e)
                lo = 0, hi = sh.h, clo = 0, chi = sh.c, wlo = 0, whi = sh.w;
            if (hi <= lo) continue;
            if (q < 0) {
                if (e != source) total += (int64_t)(chi - clo) * (hi - lo) * (whi - wlo) * 4;
                continue;
            }
            for (int k = m->first[q]; k < m->first[q + 1]; k++) {
                const map_slice *s = &m->slices[k];
                if (s->dev == e) continue;
                int rc = m->cut[q] == MAP_CUT_ROWS, cc = m->cut[q] == MAP_CUT_COLS, ch = !rc && !cc;
                int c0 = ch ? s->c0 : 0, c1 = ch ? s->c0 + s->nc : sh.c;
                int r0 = rc ? s->c0 : 0, r1 = rc ? s->c0 + s->nc : sh.h;
                int q0 = cc ? s->c0 : 0, q1 = cc ? s->c0 + s->nc : sh.w;
                if (r0 < lo) r0 = lo;
                if (r1 > hi) r1 = hi;
                if (c0 < clo) c0 = clo;
                if (c1 > chi) c1 = chi;
                if (q0 < wlo) q0 = wlo;
                if (q1 > whi) q1 = whi;
                if (r1 > r0 && c1 > c0 && q1 > q0) total += (int64_t)(c1 - c0) * (r1 - r0) * (q1 - q0) * 4;
            }
        }
    }
    return total;
}

static int count(const plan *p, int d, plan_op op, int layer)
{
    int k = 0;
    for (int i = 0; i < plan_nsteps_dev(p, d); i++) {
        const plan_step *s = &plan_steps_dev(p, d)[i];
        if (s->op == op && (layer == -2 || s->layer == layer)) k++;
    }
    return k;
}

/* conv3x3 -> relu -> conv3x3 (pad 1, 8 rows, 5 columns, 3 -> 4 -> 4
 * channels), the network of the halo cases below. */
static net *halo_net(char *err)
{
    net *n = net_new("halo", "x", (net_shape){3, 8, 5});
    const char *x[1] = {"x"}, *c1[1] = {"c1"}, *r1[1] = {"r1"};
    net_attr a = net_attr_conv(4, 3, 1, 1, 1, 1);
    net_add(n, "c1", NET_CONV, &a, 1, x, err);
    net_attr r = net_attr_default(NET_RELU);
    net_add(n, "r1", NET_RELU, &r, 1, c1, err);
    net_add(n, "c2", NET_CONV, &a, 1, r1, err);
    CHECK(!net_finalize(n, "halo", err), "%s", err);
    return n;
}

/* Its three layers cut into rows [0, 4) on d0 and [4, 8) on d1. */
static mapping *halo_bands(void)
{
    mapping *m = mapping_new(3, 2);
    for (int i = 0; i < 3; i++) {
        m->first[i] = 2 * i;
        m->cut[i] = 1;
        m->slices[2 * i] = (map_slice){0, 0, 4};
        m->slices[2 * i + 1] = (map_slice){1, 4, 4};
    }
    m->first[3] = 6;
    return m;
}

/* conv3x3 -> relu -> conv3x3 (pad 1, 8 rows), all cut into rows [0,4) on
 * d0 and [4,8) on d1, input on d0: the halo exchange by hand. */
static void halo_by_hand(void)
{
    char err[BASE_ERRLEN];
    net *n = halo_net(err);
    mapping *m = halo_bands();
    CHECK(!mapping_validate(m, n, err), "%s", err);
    plan *p = plan_new();
    CHECK(!plan_build(p, n, m, 0, err), "%s", err);
    CHECK(!plan_check(p, n, err), "%s", err);
    /* Messages: input rows 3..7 to d1 (3 ch x 5 rows x 5 cols), relu row 4
     * to d0 and row 3 to d1 (4 x 1 x 5 each), c2 rows 4..7 to d0 (output). */
    int64_t want = 4 * (3 * 5 * 5 + 4 * 1 * 5 + 4 * 1 * 5 + 4 * 4 * 5);
    CHECK_I64(p->bytes_moved, want);
    CHECK_I64(p->nmsgs, 4);
    /* relu chains on its device's conv band: no concat for c1; c2 reads
     * its band plus one halo row (one concat per device); the output is
     * assembled on d0. */
    CHECK_I64(count(p, 0, PLAN_CONCAT, 0), 0);
    CHECK_I64(count(p, 1, PLAN_CONCAT, 0), 0);
    CHECK_I64(count(p, 0, PLAN_CONCAT, 1), 1);
    CHECK_I64(count(p, 1, PLAN_CONCAT, 1), 1);
    CHECK_I64(count(p, 0, PLAN_CONCAT, 2), 1);
    CHECK_I64(count(p, 1, PLAN_CONCAT, 2), 0);
    CHECK(plan_has_bands(p, n));
    /* MACs of the bands sum to the layers'. */
    int64_t macs = 0;
    for (int i = 0; i < p->nsteps; i++)
        if (p->steps[i].op == PLAN_COMPUTE)
            macs += net_box_macs(n, p->steps[i].layer, p->steps[i].c0, p->steps[i].nc,
                                 p->steps[i].h0, p->steps[i].nh, p->steps[i].w0, p->steps[i].nw);
    CHECK_I64(macs, n->layers[0].macs + n->layers[2].macs);
    /* The cost model moves the same bytes and charges each device its bands. */
    platform *pl = plat(2, err);
    cost_coeffs *co = coeffs_default(pl);
    char warn[BASE_ERRLEN];
    cost_model *cm = cost_new(n, pl, co, warn, err);
    cost_result res;
    cost_device dev[2];
    CHECK(cm && !cost_eval(cm, p, &res, dev), "%s", cm ? cost_error(cm) : err);
    CHECK_I64(dev[0].bytes_sent + dev[1].bytes_sent, want);
    CHECK_I64(dev[0].bytes_recv + dev[1].bytes_recv, want);
    double c0 = cost_compute_s(cm, 0, 0, 0, 4) + cost_compute_s(cm, 1, 0, 0, 4) + cost_compute_s(cm, 2, 0, 0, 4);
    double ovh = cost_compute_s(cm, 0, 0, 0, 0) + cost_compute_s(cm, 1, 0, 0, 0) + cost_compute_s(cm, 2, 0, 0, 0);
    /* Half the rows: the whole layers' work over two, plus each step's overhead. */
    CHECK_REL(dev[0].compute_s, (c0 - ovh) / 2 + ovh, 1e-9);
    cost_free(cm);
    coeffs_free(co);
    platform_free(pl);
    plan_free(p);
    mapping_free(m);
    net_free(n);
    printf("ok: halo exchange by hand (conv-relu-conv in two bands)\n");
}

/* The same network with recomputed halos (mapping.recompute, docs/spatial.md
 * "Recompute or fetch"), by hand; then the cost model's choice on a slow
 * and on a fast link. */
static int64_t plan_macs(const plan *p, const net *n)
{
    int64_t macs = 0;
    for (int i = 0; i < p->nsteps; i++)
        if (p->steps[i].op == PLAN_COMPUTE)
            macs += net_box_macs(n, p->steps[i].layer, p->steps[i].c0, p->steps[i].nc,
                                 p->steps[i].h0, p->steps[i].nh, p->steps[i].w0, p->steps[i].nw);
    return macs;
}

static int compute_rows(const plan *p, int d, int layer, int *h0)
{
    for (int i = 0; i < plan_nsteps_dev(p, d); i++) {
        const plan_step *s = &plan_steps_dev(p, d)[i];
        if (s->op == PLAN_COMPUTE && s->layer == layer) return *h0 = s->h0, s->nh;
    }
    return *h0 = -1, 0;
}

static void recompute_by_hand(void)
{
    char err[BASE_ERRLEN];
    net *n = halo_net(err);
    mapping *m = halo_bands();
    plan *p = plan_new();
    int h0;
    /* r1 recomputes: d0 computes its rows [0, 5), d1 [3, 8) (what c2's bands
     * read); the halo moves back to c1 (row 4 to d0, row 3 to d1), the same
     * bytes as before; c2 reads r1's band as it is, r1's reads need a
     * concat of c1 on each device. */
    m->recompute[1] = 1;
    CHECK(!mapping_validate(m, n, err), "%s", err);
    CHECK(!plan_build(p, n, m, 0, err) && !plan_check(p, n, err), "%s", err);
    CHECK_I64(compute_rows(p, 0, 1, &h0), 5);
    CHECK_I64(h0, 0);
    CHECK_I64(compute_rows(p, 1, 1, &h0), 5);
    CHECK_I64(h0, 3);
    CHECK_I64(p->bytes_moved, 4 * (3 * 5 * 5 + 4 * 1 * 5 + 4 * 1 * 5 + 4 * 4 * 5));
    CHECK_I64(count(p, 0, PLAN_CONCAT, 0), 1);
    CHECK_I64(count(p, 1, PLAN_CONCAT, 0), 1);
    CHECK_I64(count(p, 0, PLAN_CONCAT, 1), 0);
    CHECK_I64(count(p, 1, PLAN_CONCAT, 1), 0);
    /* c1 too: c1 on d0 computes rows [0, 5) from input rows [0, 6) (held:
     * d0 is the source), on d1 rows [3, 8) from input rows [2, 8); the only
     * messages are the input to d1 (3 x 6 x 5) and c2's band (4 x 4 x 5);
     * c1 and r1 each compute 2 rows twice. */
    m->recompute[0] = 1;
    CHECK(!mapping_validate(m, n, err), "%s", err);
    CHECK(!plan_build(p, n, m, 0, err) && !plan_check(p, n, err), "%s", err);
    CHECK_I64(p->bytes_moved, 4 * (3 * 6 * 5 + 4 * 4 * 5));
    CHECK_I64(p->nmsgs, 2);
    CHECK_I64(compute_rows(p, 1, 0, &h0), 5);
    CHECK_I64(h0, 3);
    CHECK_I64(plan_macs(p, n), n->layers[0].macs * 10 / 8 + n->layers[2].macs);
    for (int d = 0; d < 2; d++)
        for (int l = 0; l < 3; l++) CHECK(count(p, d, PLAN_CONCAT, l) == (d == 0 && l == 2));
    /* The output layer cannot recompute; nor a layer not cut by rows. */
    m->recompute[2] = 1;
    CHECK(mapping_validate(m, n, err) && strstr(err, "output"), "%s", err);
    m->recompute[2] = 0;
    /* The cost model's choice: with a 0.1 s link latency the halos are
     * recomputed (the input goes to d1 in one message either way; r1 is
     * flagged in the first round, c1, whose halo r1 then fetches, in the
     * second), with a free link and a slow convolution they are fetched. */
    platform *pl = plat(2, err);
    m->recompute[0] = m->recompute[1] = 1;
    /* In a mapping file: "recompute": true beside a layer's "rows", read
     * back as written; anything but a boolean, or on the output, refused
     * with one line naming the layer. */
    char *txt = mapping_to_json(m, n, pl);
    mapping *back = txt ? mapping_from_json(txt, "rc.json", n, pl, err) : NULL;
    CHECK(txt && strstr(txt, "\"recompute\":") && back && mapping_equal(back, m), "%s", err);
    mapping_free(back);
    free(txt);
    static const char *bad[] = {
        "{\"format\": \"dse-mapping\", \"layers\": {\"c1\": {\"rows\": [[\"d0\", 0, 4], [\"d1\", 4, 4]], \"recompute\": 1}, "
        "\"r1\": \"d0\", \"c2\": \"d0\"}}",
        "{\"format\": \"dse-mapping\", \"layers\": {\"c1\": \"d0\", \"r1\": \"d0\", \"c2\": {\"rows\": [[\"d0\", 0, 4], "
        "[\"d1\", 4, 4]], \"recompute\": true}}}"};
    for (int b = 0; b < 2; b++) {
        back = mapping_from_json(bad[b], "bad.json", n, pl, err);
        CHECK(!back && strstr(err, "bad.json") && strstr(err, b ? "\"c2\"" : "\"c1\"") &&
                  !strchr(err, '\n'), "%s", err);
        mapping_free(back);
    }
    cost_coeffs *co = coeffs_default(pl);
    co->link[LINK_NETWORK].latency_us = coeffs_given(1e5, COEFFS_ASSUMPTION);
    cost_model *cm = cost_new(n, pl, co, NULL, err);
    CHECK(cm != NULL, "%s", err);
    int k = cm ? cost_pick_halos(cm, m, p, 0, NULL, err) : -1;
    CHECK(k == 2 && m->recompute[0] && m->recompute[1] && p->nmsgs == 2, "%d layers: %s", k, err);
    cost_result slow_rc, slow_f;
    CHECK(cm && !cost_eval(cm, p, &slow_rc, NULL));
    memset(m->recompute, 0, 3);
    CHECK(!plan_build(p, n, m, 0, err) && cm && !cost_eval(cm, p, &slow_f, NULL));
    /* (Both plans wait for two messages in a row, the input to d1 and c2's
     * band back; recomputing saves the halo's assemblies.) */
    CHECK(slow_rc.latency_ms < slow_f.latency_ms, "recompute %.3f ms, fetch %.3f ms",
          slow_rc.latency_ms, slow_f.latency_ms);
    cost_free(cm);
    co->link[LINK_NETWORK].latency_us = coeffs_given(0, COEFFS_ASSUMPTION);
    co->link[LINK_NETWORK].bandwidth_mbs = coeffs_given(1e9, COEFFS_ASSUMPTION);
    co->dev[PLAT_CPU].cls[NET_CONV].per_cycle = coeffs_given(1e-6, COEFFS_ASSUMPTION);
    co->dev[PLAT_CPU].cls[NET_RELU].per_cycle = coeffs_given(1e-6, COEFFS_ASSUMPTION);
    cm = cost_new(n, pl, co, NULL, err);
    m->recompute[0] = m->recompute[1] = 1; /* overwritten */
    k = cm ? cost_pick_halos(cm, m, p, 0, NULL, err) : -1;
    CHECK(k == 0 && !m->recompute[0] && !m->recompute[1] && p->nmsgs == 4, "%d layers: %s", k, err);
    cost_free(cm);
    coeffs_free(co);
    platform_free(pl);
    plan_free(p);
    mapping_free(m);
    net_free(n);
    printf("ok: recomputed halos by hand, and the cost model's choice on a slow and a fast link\n");
}

/* Position of element (c, h, w) of tensor T in its storage (nc, nh, nw). */
static int64_t stored_at(const plan_tensor *T, int c, int h, int w)
{
    return ((int64_t)(c - T->c0) * T->nh + (h - T->h0)) * T->nw + (w - T->w0);
}

/* Where box (c0, nc, h0, nh, w0, nw) of T starts in T's storage when it
 * is one run there, else -1: a box's elements lie in storage order, so
 * they are one run iff its last element's position less its first's is
 * its size less one (the oracle for plan_send_offset). */
static int64_t span_offset(const plan_tensor *T, int c0, int nc, int h0, int nh, int w0, int nw)
{
    int64_t first = stored_at(T, c0, h0, w0), last = stored_at(T, c0 + nc - 1, h0 + nh - 1, w0 + nw - 1);
    return last - first + 1 == (int64_t)nc * nh * nw ? first : -1;
}

/* plan_send_offset of every SEND of p against span_offset.  Counts sends
 * in place and packed. */
static int send_offsets(const plan *p, long *inplace, long *packed)
{
    int bad = 0;
    for (int d = 0; d < p->ndev; d++) {
        const plan_step *st = plan_steps_dev(p, d);
        for (int i = 0; i < plan_nsteps_dev(p, d); i++, st++) {
            if (st->op != PLAN_SEND) continue;
            const plan_tensor *T = plan_tensor_of(p, d, st->tensor);
            int64_t want = span_offset(T, st->c0, st->nc, st->h0, st->nh, st->w0, st->nw);
            int64_t got = plan_send_offset(p, d, st);
            if (got != want) {
                CHECK(0, "device %d step %d: send offset %lld, the box's span says %lld", d, i,
                      (long long)got, (long long)want);
                bad++;
            }
            if (got >= 0) (*inplace)++;
            else (*packed)++;
        }
    }
    return bad;
}

/* plan_send_offset on every box of a 3 x 3 x 4 tensor (channels 2..4, rows
 * 1..3, columns 3..6 of its layer) against the box's span: the random
 * Plans do not meet every shape (a part of one row of one channel). */
static void send_offset_boxes(void)
{
    plan_tensor T = {0, 2, 3, 1, 3, 3, 4, 36 * 4};
    int t0[2] = {0, 1};
    plan p;
    memset(&p, 0, sizeof p);
    p.tensors = &T, p.tensor0 = t0;
    long boxes = 0, inplace = 0, packed = 0;
    int bad = 0;
    for (int c0 = 2; c0 < 5; c0++)
        for (int nc = 1; c0 + nc <= 5; nc++)
            for (int h0 = 1; h0 < 4; h0++)
                for (int nh = 1; h0 + nh <= 4; nh++)
                    for (int w0 = 3; w0 < 7; w0++)
                        for (int nw = 1; w0 + nw <= 7; nw++) {
                            plan_step st = {.op = PLAN_SEND, .c0 = c0, .nc = nc, .h0 = h0, .nh = nh,
                                            .w0 = w0, .nw = nw, .tensor = 0};
                            int64_t want = span_offset(&T, c0, nc, h0, nh, w0, nw);
                            bad += plan_send_offset(&p, 0, &st) != want;
                            boxes++, inplace += want >= 0, packed += want < 0;
                        }
    CHECK(bad == 0, "%d of %ld boxes: plan_send_offset against the span", bad, boxes);
    printf("ok: plan_send_offset on all %ld boxes of a 3x3x4 tensor: %ld one run, %ld packed\n", boxes,
           inplace, packed);
}

static void random_plans(void)
{
    static const char *nets[] = {"toy6", "branchy", "alexnet", "resnet50", "mobilenetv2", "densenet121", "vgg16",
                                 "bandkinds"};
    char err[BASE_ERRLEN];
    unsigned seed = 99;
    long plans = 0, banded = 0, halos = 0, recomp = 0, inplace = 0, packed = 0;
    for (size_t z = 0; z < sizeof nets / sizeof *nets; z++) {
        net *n = open_net(nets[z], err);
        CHECK(n, "%s", err);
        if (!n) continue;
        int runs = z >= 3 ? nrandom / 8 + 1 : nrandom;
        for (int nd = 2; nd <= 5; nd += 3) {
            mapping *m = mapping_new(n->n, nd);
            plan *p = plan_new();
            int bad = 0;
            for (int r = 0; r < runs && bad < 3; r++) {
                randmap_mixed(m, n, nd, &seed);
                int src = (int)(seed >> 3) % nd;
                if (mapping_validate(m, n, err)) {
                    CHECK(0, "%s: random mapping invalid: %s", nets[z], err);
                    bad++;
                    continue;
                }
                if (plan_build(p, n, m, src, err) || plan_check(p, n, err)) {
                    CHECK(0, "%s on %d devices, mapping %d: %s", nets[z], nd, r, err);
                    bad++;
                    continue;
                }
                int64_t want = expected_bytes(n, m, src);
                plans++;
                bad += send_offsets(p, &inplace, &packed);
                banded += plan_has_bands(p, n);
                for (int g = 0; g < p->nmsgs; g++) {
                    const plan_msg *G = &p->msgs[g];
                    halos += G->layer >= 0 && (G->nh < n->layers[G->layer].out.h ||
                                               G->nw < n->layers[G->layer].out.w);
                }
                if (p->bytes_moved != want) {
                    CHECK_I64(p->bytes_moved, want);
                    bad++;
                }
                /* The same mapping with random row-cut layers recomputing
                 * their halos: it plans and checks, no message of such a
                 * layer goes to a device computing a band of it, and its
                 * bands compute at least the layer's rows. */
                for (int i = 0; i + 1 < n->n; i++) {
                    seed = seed * 1103515245u + 12345u;
                    m->recompute[i] = m->cut[i] && (seed >> 12) % 2;
                    recomp += m->recompute[i];
                }
                if (mapping_validate(m, n, err) || plan_build(p, n, m, src, err) ||
                    plan_check(p, n, err)) {
                    CHECK(0, "%s on %d devices, mapping %d, halos recomputed: %s", nets[z], nd, r, err);
                    bad++;
                }
                for (int g = 0; g < p->nmsgs; g++) {
                    int q = p->msgs[g].layer, to_band = 0;
                    for (int k = q >= 0 ? m->first[q] : 0; q >= 0 && k < m->first[q + 1]; k++)
                        to_band |= m->slices[k].dev == p->msgs[g].to;
                    if (q >= 0 && m->recompute[q] && to_band) {
                        CHECK(0, "%s: layer %s recomputes its halo but sends to a band device",
                              nets[z], n->layers[q].name);
                        bad++;
                    }
                }
                for (int i = 0; i < n->n; i++) {
                    int64_t rows = 0;
                    for (int st = 0; st < p->nsteps; st++)
                        if (p->steps[st].op == PLAN_COMPUTE && p->steps[st].layer == i)
                            rows += (int64_t)p->steps[st].nh * p->steps[st].nc * p->steps[st].nw;
                    int64_t whole = net_shape_numel(n->layers[i].out);
                    if (m->recompute[i] ? rows < whole : rows != whole) {
                        CHECK(0, "%s: layer %s computes %lld outputs of %lld", nets[z],
                              n->layers[i].name, (long long)rows, (long long)whole);
                        bad++;
                    }
                }
                memset(m->recompute, 0, (size_t)n->n);
            }
            plan_free(p);
            mapping_free(m);
        }
        net_free(n);
    }
    CHECK(banded > plans / 2 && halos > plans && recomp > plans && inplace > plans && packed > plans,
          "%ld plans, %ld with bands, %ld partial-row messages, %ld recomputing layers, %ld sends "
          "in place, %ld packed", plans, banded, halos, recomp, inplace, packed);
    printf("ok: %ld random row/channel/whole mappings (%ld with bands, %ld partial-row messages) "
           "plan and check, bytes from the mapping alone, every send's offset in its tensor (%ld in "
           "place, %ld packed) as its box's span says; again with %ld layers recomputing their "
           "halos\n", plans, banded, halos, inplace, packed, recomp);
}

/* cost_pick_halos on random mixed mappings, on links from a shared-memory
 * 20 us to a 50 ms network, with device memory small enough that some
 * mappings do not fit: the Plan it leaves is plan_build's of the flags it
 * leaves, its result is cost_eval's of that Plan, and against the Plan
 * that fetches every halo its latency is never higher (lower when it keeps
 * a flag) and its memory violation never larger. */
static void halo_rule_random(void)
{
    static const char *nets[] = {"toy6", "branchy", "alexnet", "resnet50", "bandkinds"};
    static const double lat_us[] = {20, 2000, 50000};
    char err[BASE_ERRLEN];
    unsigned seed = 7;
    long runs = 0, kept = 0, flags = 0;
    for (size_t z = 0; z < sizeof nets / sizeof *nets; z++) {
        net *n = open_net(nets[z], err);
        CHECK(n, "%s", err);
        if (!n) continue;
        for (int nd = 2; nd <= 4; nd += 2)
            for (int li = 0; li < 3; li++) {
                platform *pl = plat(nd, err);
                for (int d = 0; d < nd && pl; d++) pl->dev[d].memory_mb = 30 + 20 * d;
                cost_coeffs *co = pl ? coeffs_default(pl) : NULL;
                if (co) co->link[LINK_NETWORK].latency_us = coeffs_given(lat_us[li], COEFFS_ASSUMPTION);
                cost_model *cm = co ? cost_new(n, pl, co, NULL, err) : NULL;
                CHECK(cm != NULL, "%s", err);
                mapping *m = mapping_new(n->n, nd), *f = mapping_new(n->n, nd);
                plan *p = plan_new(), *q = plan_new();
                for (int r = 0; cm && r < (z < 2 ? 40 : 8); r++) {
                    randmap_mixed(m, n, nd, &seed);
                    int src = (int)(seed >> 3) % nd;
                    cost_result res, again, fetch;
                    int k = cost_pick_halos(cm, m, p, src, &res, err);
                    CHECK(k >= 0, "%s", err);
                    if (k < 0) continue;
                    runs++;
                    int nflags = 0;
                    for (int i = 0; i < n->n; i++) nflags += m->recompute[i];
                    CHECK(nflags == k && !mapping_validate(m, n, err), "%d flags, returned %d: %s", nflags, k, err);
                    /* p is the Plan of the flags left, res its evaluation */
                    CHECK(!plan_build(q, n, m, src, err) && q->nsteps == p->nsteps &&
                          q->nmsgs == p->nmsgs && q->bytes_moved == p->bytes_moved && !plan_check(p, n, err),
                          "%s: the Plan left is not the flags' Plan: %s", nets[z], err);
                    CHECK(!cost_eval(cm, p, &again, NULL) && again.latency_ms == res.latency_ms &&
                          again.energy_j == res.energy_j && again.mem_mb == res.mem_mb &&
                          again.violation_bytes == res.violation_bytes);
                    mapping_copy(f, m);
                    memset(f->recompute, 0, (size_t)n->n);
                    CHECK(!plan_build(q, n, f, src, err) && !cost_eval(cm, q, &fetch, NULL));
                    CHECK(k ? res.latency_ms < fetch.latency_ms : res.latency_ms == fetch.latency_ms,
                          "%s: %d flags, latency %.6f against fetching %.6f ms", nets[z], k,
                          res.latency_ms, fetch.latency_ms);
                    CHECK(res.violation_bytes <= fetch.violation_bytes);
                    kept += k > 0;
                    flags += k;
                }
                plan_free(p);
                plan_free(q);
                mapping_free(m);
                mapping_free(f);
                cost_free(cm);
                coeffs_free(co);
                platform_free(pl);
            }
        net_free(n);
    }
    CHECK(kept > 0 && kept < runs, "%ld of %ld mappings recompute", kept, runs);
    printf("ok: the halo rule on %ld random mappings (%ld recompute, %ld layers): its Plan and "
           "result are the flags', never slower nor less feasible than fetching\n", runs, kept, flags);
}

static void spatial_chromosome(void)
{
    char err[BASE_ERRLEN];
    /* toy6 (conv 20x16x16, relu, pool 20x8x8, flatten, fc, softmax) on 2
     * devices, p = 2: row 1 = d0 conv, d1 fc; row 2 = d1 conv; cuts: conv
     * by rows, fc by channels. */
    net *n = net_zoo("toy6", err);
    chrom *c = chrom_new(n, 2, CHROM_SPATIAL, 2, NET_SPLIT_DEFAULT, err);
    CHECK(c && chrom_length(c) == 2 * 2 + 2, "%s", err);
    int g[6] = {1, 2, 0, 1, 1, 0};
    mapping *m = mapping_new(n->n, 2);
    CHECK(!chrom_decode(c, g, 6, m, err), "%s", err);
    CHECK(!mapping_validate(m, n, err), "%s", err);
    int want[6][5] = {/* rows?, nslices, dev0, first0, count0 */
                      {1, 2, 0, 0, 8}, {1, 2, 0, 0, 8}, {1, 2, 0, 0, 4},
                      {0, 1, 0, 0, 1280}, {0, 1, 1, 0, 10}, {0, 1, 1, 0, 10}};
    for (int i = 0; i < 6; i++) {
        const map_slice *s = mapping_slices(m, i);
        CHECK(m->cut[i] == want[i][0] && mapping_nslices(m, i) == want[i][1] &&
                  s[0].dev == want[i][2] && s[0].c0 == want[i][3] && s[0].nc == want[i][4],
              "layer %s: rows %d, %d slices, first (%d, %d, %d)", n->layers[i].name, m->cut[i],
              mapping_nslices(m, i), s[0].dev, s[0].c0, s[0].nc);
    }
    CHECK(mapping_slices(m, 0)[1].dev == 1 && mapping_slices(m, 0)[1].c0 == 8);
    int g2[6];
    double d = chrom_encode(c, m, g2, err);
    CHECK(d == 0, "encode of a decoded spatial genome: distance %g", d);
    char dump[2048];
    chrom_dump(c, g, dump, sizeof dump);
    CHECK(strstr(dump, "cuts (0 = channels, 1 = bands along the longer side): 1 0") != NULL, "%s", dump);
    /* channels,rows (campaigns stored before columns): the same decode on
     * these square maps; channels,rows,columns: cut gene 2 cuts conv, relu
     * (16 columns) and pool (8) into two column bands, the same devices. */
    CHECK(chrom_get_cut_mode(c) == CHROM_CUTS_BANDS && chrom_cut_values(c) == 2);
    mapping *mr = mapping_new(n->n, 2);
    CHECK(!chrom_set_cut_mode(c, CHROM_CUTS_ROWS) && !chrom_decode(c, g, 6, mr, err) &&
          mapping_equal(m, mr), "channels,rows decodes otherwise: %s", err);
    mapping_free(mr);
    CHECK(!chrom_set_cut_mode(c, CHROM_CUTS_ALL) && chrom_cut_values(c) == 3);
    chrom_dump(c, g, dump, sizeof dump);
    CHECK(strstr(dump, "cuts (0 = channels, 1 = rows, 2 = columns): 1 0") != NULL, "%s", dump);
    g[4] = 2;
    CHECK(!chrom_decode(c, g, 6, m, err) && !mapping_validate(m, n, err), "%s", err);
    for (int i = 0; i < 6; i++) {
        const map_slice *s = mapping_slices(m, i);
        int cut = want[i][0] ? MAP_CUT_COLS : MAP_CUT_CHANNELS;
        CHECK(m->cut[i] == cut && mapping_nslices(m, i) == want[i][1] && s[0].dev == want[i][2] &&
                  s[0].c0 == want[i][3] && s[0].nc == want[i][4],
              "columns: layer %s: cut %d, %d slices, first (%d, %d, %d)", n->layers[i].name,
              m->cut[i], mapping_nslices(m, i), s[0].dev, s[0].c0, s[0].nc);
    }
    CHECK(chrom_encode(c, m, g2, err) == 0 && g2[4] == 2, "encode of a column cut: gene %d", g2[4]);
    /* Two-valued modes: cut genes 0..1; a 2 is out of bounds. */
    int lo6[6], hi6[6];
    CHECK(!chrom_set_cut_mode(c, CHROM_CUTS_ROWS) && chrom_cut_values(c) == 2);
    chrom_bounds(c, lo6, hi6);
    CHECK(hi6[4] == 1 && hi6[5] == 1 && hi6[0] == 2, "legacy bounds %d %d %d", hi6[4], hi6[5], hi6[0]);
    CHECK(chrom_decode(c, g, 6, m, err) == -1 && strstr(err, "gene 4"), "legacy decode of a 2: %s", err);
    CHECK(chrom_set_cut_mode(c, (chrom_cut_mode)7) == -1);
    chrom_cut_mode cm;
    CHECK(!chrom_cut_mode_parse("channels,bands", &cm) && cm == CHROM_CUTS_BANDS &&
          chrom_cut_mode_parse("rows", &cm) == -1 &&
          !strcmp(chrom_cut_mode_name(CHROM_CUTS_ALL), "channels,rows,columns"));
    mapping_free(m);
    chrom_free(c);
    net_free(n);

    /* channels,bands on a map wider than tall: the band runs along the
     * width (columns, halos of its 6 rows), and on through the ReLU;
     * channels,rows cuts the same genome by rows. */
    n = net_new("wide", "x", (net_shape){3, 6, 20});
    const char *x1[1] = {"x"}, *c1[1] = {"c"};
    net_attr ca = net_attr_conv(8, 3, 1, 1, 1, 1);
    net_attr ra = net_attr_default(NET_RELU);
    CHECK(net_add(n, "c", NET_CONV, &ca, 1, x1, err) >= 0 && net_add(n, "r", NET_RELU, &ra, 1, c1, err) >= 0 &&
          !net_finalize(n, "wide", err), "%s", err);
    c = chrom_new(n, 2, CHROM_SPATIAL, 2, NET_SPLIT_DEFAULT, err);
    CHECK(c && chrom_length(c) == 5, "%s", err);
    int gw[5] = {1, 0, 0, 1, 1}; /* split 1: d0 conv; split 2: d1 conv; cut gene 1 */
    m = mapping_new(n->n, 2);
    CHECK(c && !chrom_decode(c, gw, 5, m, err) && !mapping_validate(m, n, err), "%s", err);
    CHECK(m->cut[0] == MAP_CUT_COLS && m->cut[1] == MAP_CUT_COLS && mapping_nslices(m, 0) == 2 &&
          mapping_slices(m, 0)[0].nc + mapping_slices(m, 0)[1].nc == 20,
          "wide map: cut %d %d, %d slices", m->cut[0], m->cut[1], mapping_nslices(m, 0));
    CHECK(c && !chrom_set_cut_mode(c, CHROM_CUTS_ROWS) && !chrom_decode(c, gw, 5, m, err) &&
          m->cut[0] == MAP_CUT_ROWS && m->cut[1] == MAP_CUT_ROWS, "channels,rows on a wide map: %s", err);
    mapping_free(m);
    chrom_free(c);
    net_free(n);

    /* Decode is total; with every cut gene 0 it is hybrid's decode. */
    static const char *nets[] = {"toy6", "branchy", "alexnet", "vgg16", "resnet50", "mobilenetv2", "densenet121",
                                 "bandkinds"};
    unsigned seed = 5;
    long decoded = 0, cut = 0, cols = 0;
    for (size_t z = 0; z < sizeof nets / sizeof *nets; z++) {
        n = open_net(nets[z], err);
        for (int nd = 2; nd <= 16; nd *= 4) {
            int p = nd < 3 ? nd : 3;
            chrom *cs = chrom_new(n, nd, CHROM_SPATIAL, p, NET_SPLIT_DEFAULT, err);
            chrom *ch = chrom_new(n, nd, CHROM_HYBRID, p, NET_SPLIT_DEFAULT, err);
            /* these maps are square: channels,bands cuts rows; columns too on 8 devices */
            if (nd == 8) chrom_set_cut_mode(cs, CHROM_CUTS_ALL);
            int len = chrom_length(cs), hl = chrom_length(ch);
            CHECK(len == hl + chrom_nsplittable(cs));
            int *lo = malloc(len * sizeof(int)), *hi = malloc(len * sizeof(int)), *gg = malloc(len * sizeof(int));
            chrom_bounds(cs, lo, hi);
            mapping *ms = mapping_new(n->n, nd), *mh = mapping_new(n->n, nd);
            plan *pl = plan_new();
            int runs = z < 3 ? nrandom : nrandom / 8 + 1, bad = 0;
            for (int r = 0; r < runs && bad < 3; r++) {
                for (int k = 0; k < len; k++) {
                    seed = seed * 1103515245u + 12345u;
                    /* half the genomes sparse (most split genes 0) */
                    int sparse = r % 2 && k < hl && (seed >> 20) % 4;
                    gg[k] = sparse ? 0 : lo[k] + (int)((seed >> 8) % (unsigned)(hi[k] - lo[k] + 1));
                }
                if (chrom_decode(cs, gg, len, ms, err) || mapping_validate(ms, n, err) ||
                    plan_build(pl, n, ms, 0, err) || plan_check(pl, n, err)) {
                    CHECK(0, "%s on %d devices, genome %d: %s", nets[z], nd, r, err);
                    bad++;
                    continue;
                }
                decoded++;
                for (int i = 0; i < n->n; i++) cut += ms->cut[i] != 0, cols += ms->cut[i] == MAP_CUT_COLS;
                for (int j = hl; j < len; j++) gg[j] = 0;
                CHECK(!chrom_decode(cs, gg, len, ms, err) && !chrom_decode(ch, gg, hl, mh, err) &&
                          mapping_equal(ms, mh),
                      "%s: spatial with no band cut differs from hybrid", nets[z]);
            }
            plan_free(pl);
            mapping_free(ms);
            mapping_free(mh);
            free(lo), free(hi), free(gg);
            chrom_free(cs);
            chrom_free(ch);
        }
        net_free(n);
    }
    CHECK(cut > decoded && cols > decoded / 4 && cols < cut, "%ld band-cut layers (%ld by columns) "
          "in %ld genomes", cut, cols, decoded);
    /* Restricted devices (a DLA running only some kinds): the repair keeps
     * spatial decodes valid (merged bands become a whole layer). */
    platform *acc = platform_open("jetson-nx-4-cpudla", err);
    CHECK(acc, "%s", err);
    static const char *rnets[] = {"toy6", "branchy", "alexnet", "bandkinds"};
    long repaired = 0;
    for (size_t z = 0; acc && z < sizeof rnets / sizeof *rnets; z++) {
        n = open_net(rnets[z], err);
        chrom *cs = chrom_new(n, acc->ndev, CHROM_SPATIAL, 2, NET_SPLIT_DEFAULT, err);
        CHECK(cs && !chrom_restrict(cs, acc, err), "%s", err);
        int len = chrom_length(cs), *lo = malloc(len * sizeof(int)), *hi = malloc(len * sizeof(int));
        int *gg = malloc(len * sizeof(int));
        chrom_bounds(cs, lo, hi);
        mapping *ms = mapping_new(n->n, acc->ndev);
        plan *pr = plan_new();
        for (int r = 0; r < 300; r++) {
            for (int k = 0; k < len; k++) {
                seed = seed * 1103515245u + 12345u;
                gg[k] = lo[k] + (int)((seed >> 8) % (unsigned)(hi[k] - lo[k] + 1));
            }
            int bad = chrom_decode(cs, gg, len, ms, err) || mapping_validate(ms, n, err) ||
                      plan_build(pr, n, ms, 0, err) || plan_check(pr, n, err);
            for (int i = 0; !bad && i < n->n; i++)
                for (int k = 0; k < mapping_nslices(ms, i); k++)
                    bad |= !platform_supports(acc, mapping_slices(ms, i)[k].dev, n->layers[i].kind);
            if (bad) {
                CHECK(0, "%s on %s, genome %d: %s", rnets[z], acc->name, r, err);
                break;
            }
            repaired++;
        }
        plan_free(pr);
        mapping_free(ms);
        free(lo), free(hi), free(gg);
        chrom_free(cs);
        net_free(n);
    }
    platform_free(acc);
    printf("ok: spatial chromosome: hand-worked decode (rows, columns), %ld random genomes decode, "
           "plan and check (%ld band-cut layers, %ld by columns); no cut = hybrid; %ld genomes "
           "repaired for a DLA plan and check\n", decoded, cut, cols, repaired);
}

int main(int argc, char **argv)
{
    if (argc > 1) nrandom = atoi(argv[1]);
    hand_cases();
    hand_cols();
    files();
    halo_by_hand();
    recompute_by_hand();
    send_offset_boxes();
    random_plans();
    halo_rule_random();
    spatial_chromosome();
    return check_done("test_spatial");
}

/* test_bands.c -- a band of rows or of columns equals the same rows
 * (columns) of the whole layer (kernels.h, kern_run_band; docs/spatial.md):
 * every row-splittable kind,
 * convolutions of every algorithm (im2col with stride 2, dilation 2 and
 * asymmetric pads; pointwise; grouped; depthwise direct; Winograd F2 and
 * F4), pools with ceil mode and count_include_pad, multi-input kinds, on
 * bands of every height and width including bands thinner than the
 * kernel and bands whose windows reach into the padding at either border,
 * with strides, kernels, pads and dilations that differ between height
 * and width.  Bit for
 * bit, except Winograd (its tiles start at the band's first row: float
 * rounding, 1e-5 of the output's scale), and except the matrix products
 * of a BLAS (kern_gemm_own() false: ARM boards, or OpenBLAS running
 * AVX-512 kernels of its own), whose order of summation may depend on the
 * matrix's width (OpenBLAS's small-matrix kernels on AVX-512 CPUs: a band
 * is a narrower matrix): rounding, GEMM_TOL of the scale.  The convolution
 * cases run with our product (where the CPU has one) and with the BLAS.
 */
#include "convalgo.h"
#include "kernels.h"
#include "net.h"

#include "check.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned rng = 1;
static float frand(void)
{
    rng = rng * 1103515245u + 12345u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* Check every band [o0, o1) of layer `layer`, of rows and of columns,
 * against the whole layer, for bands of each height (width) from 1 to
 * out.h (out.w) at every start (or a sample of starts when the map is
 * large). */
#define GEMM_TOL 1e-6
#define WINO_TOL 1e-5

/* tol: 0 bit for bit, else the largest difference as a share of the
 * whole layer's largest output. */
static void check_layer(const net *n, int layer, double tol, const char *what)
{
    char err[BASE_ERRLEN];
    const net_layer *L = &n->layers[layer];
    int nin = L->nin, C = L->out.c, H = L->out.h, W = L->out.w;
    float *in[8];
    for (int k = 0; k < nin; k++) {
        size_t len = (size_t)net_shape_numel(net_in_shape(n, layer, k));
        in[k] = malloc(len * sizeof(float));
        for (size_t i = 0; i < len; i++) in[k][i] = frand();
    }
    float *w = NULL;
    size_t nw = 0;
    CHECK(!kern_weights_slice(n, layer, 0, C, 5, &w, &nw, err), "%s", err);
    size_t wsz = kern_workspace_floats(n, layer, C);
    for (int h0 = 0; h0 < H; h0++)
        for (int h1 = h0 + 1; h1 <= H; h1++) {
            size_t b = kern_workspace_band(n, layer, h0, h1 - h0, 0, W);
            if (b > wsz) wsz = b;
        }
    for (int w0 = 0; w0 < W; w0++)
        for (int w1 = w0 + 1; w1 <= W; w1++) {
            size_t b = kern_workspace_band(n, layer, 0, H, w0, w1 - w0);
            if (b > wsz) wsz = b;
        }
    float *ws = wsz ? malloc(wsz * sizeof(float)) : NULL;
    float *whole = malloc((size_t)C * H * W * sizeof(float));
    CHECK(!kern_run(n, layer, 0, C, (const float *const *)in, w, whole, ws, err), "%s", err);
    double scale = 0;
    for (size_t i = 0; i < (size_t)C * H * W; i++)
        if (fabs(whole[i]) > scale) scale = fabs(whole[i]);
    int bands = 0, bad = 0;
    for (int cols = 0; cols < 2; cols++) {
        int P = cols ? W : H, step = P > 24 ? P / 8 : 1;
        for (int o0 = 0; o0 < P; o0 += (o0 + step < P ? step : 1))
            for (int o1 = o0 + 1; o1 <= P; o1 += (o1 - o0 < 3 || o1 + step > P ? 1 : step)) {
                int h0 = cols ? 0 : o0, nh = cols ? H : o1 - o0;
                int w0 = cols ? o0 : 0, nwd = cols ? o1 - o0 : W;
                const float *bin[8];
                float *own[8];
                for (int k = 0; k < nin; k++) {
                    /* The input box the band reads, cut out of the whole input. */
                    net_shape z = net_in_shape(n, layer, k);
                    int r0 = 0, r1 = z.h, q0 = 0, q1 = z.w; /* the uncut axis: all of it */
                    if (nh != H) net_rows_in(n, layer, k, h0, h0 + nh, &r0, &r1);
                    if (nwd != W) net_cols_in(n, layer, k, w0, w0 + nwd, &q0, &q1);
                    own[k] = malloc(((size_t)z.c * (r1 - r0) * (q1 - q0) + 1) * sizeof(float));
                    float *o = own[k];
                    for (int c = 0; c < z.c; c++)
                        for (int r = r0; r < r1; r++, o += q1 - q0)
                            memcpy(o, in[k] + ((size_t)c * z.h + r) * z.w + q0,
                                   (size_t)(q1 - q0) * sizeof(float));
                    bin[k] = own[k];
                }
                float *out = malloc((size_t)C * nh * nwd * sizeof(float));
                int rc = kern_run_band(n, layer, h0, nh, w0, nwd, bin, w, out, ws, err);
                CHECK(rc == 0, "%s: %s", what, err);
                double maxerr = 0;
                for (int c = 0; c < C && !rc; c++)
                    for (int r = 0; r < nh; r++)
                        for (int x = 0; x < nwd; x++) {
                            float g = out[((size_t)c * nh + r) * nwd + x];
                            float e = whole[((size_t)c * H + h0 + r) * W + w0 + x];
                            double d = !tol ? (g != e && !(isnan(g) && isnan(e))) : fabs((double)g - e);
                            if (d > maxerr) maxerr = d;
                        }
                int ok = !tol ? maxerr == 0 : maxerr <= tol * scale;
                if (!ok && bad++ < 3)
                    CHECK(0, "%s: %s [%d,%d) differ from the whole layer's (max %g, scale %g)", what,
                          cols ? "columns" : "rows", o0, o1, maxerr, scale);
                bands++;
                free(out);
                for (int k = 0; k < nin; k++) free(own[k]);
            }
    }
    CHECK(bad == 0, "%s: %d of %d bands differ", what, bad, bands);
    if (!tol)
        printf("ok: %-44s %4d bands bit for bit\n", what, bands);
    else
        printf("ok: %-44s %4d bands within %g\n", what, bands, tol);
    for (int k = 0; k < nin; k++) free(in[k]);
    free(w);
    free(ws);
    free(whole);
}

static net *one(net_kind kind, net_attr a, net_shape in)
{
    char err[BASE_ERRLEN];
    net *n = net_new("one", "x", in);
    const char *x[1] = {"x"};
    net_add(n, "l", kind, &a, 1, x, err);
    CHECK(!net_finalize(n, "one", err), "%s", err);
    return n;
}

/* exact: bit for bit unless a BLAS computes its products (above). */
static void conv_case(net_attr a, net_shape in, int exact, const char *what)
{
    net *n = one(NET_CONV, a, in);
    convalgo alg = (convalgo)convalgo_of(n, 0, NULL);
    int gemm = alg == CONVALGO_IM2COL || alg == CONVALGO_POINTWISE;
    char w2[160];
    const char *how = gemm ? (kern_gemm_own() ? "own product" : "BLAS") : convalgo_name(alg);
    snprintf(w2, sizeof w2, "%s, %s", what, how);
    check_layer(n, 0, !exact ? WINO_TOL : gemm && !kern_gemm_own() ? GEMM_TOL : 0, w2);
    net_free(n);
}

int main(void)
{
    kern_set_threads(1);
    /* Convolutions: out channels, kernel, stride, pad (then asymmetric
     * pads when pt >= 0), groups, bias, dilation, input, exact (0:
     * Winograd, to float rounding). */
    static const struct {
        int oc, k, st, pad, g, bias, dil;
        int pt, pb, pl, pr;
        net_shape in;
        int exact;
        const char *what;
    } convs[] = {
        {5, 3, 1, 1, 1, 1, 1, -1, 0, 0, 0, {3, 11, 7}, 1, "conv 3x3 s1 p1 (im2col)"},
        {4, 3, 2, 1, 1, 1, 1, -1, 0, 0, 0, {3, 11, 9}, 1, "conv 3x3 s2 p1 (im2col)"},
        {4, 3, 2, 1, 1, 0, 1, -1, 0, 0, 0, {3, 10, 6}, 1, "conv 3x3 s2 p1, skips bottom pad"},
        {4, 3, 1, 2, 1, 1, 2, -1, 0, 0, 0, {3, 9, 8}, 1, "conv 3x3 dilation 2 p2"},
        {4, 5, 1, 0, 1, 1, 1, 2, 1, 1, 2, {2, 9, 8}, 1, "conv 5x5 pads 2/1 (bands thinner than K)"},
        {6, 1, 1, 0, 1, 1, 1, -1, 0, 0, 0, {4, 7, 5}, 1, "conv 1x1 (pointwise)"},
        {6, 3, 1, 1, 3, 1, 1, -1, 0, 0, 0, {6, 8, 6}, 1, "conv 3x3 groups 3"},
        {6, 3, 2, 1, 6, 1, 1, -1, 0, 0, 0, {6, 9, 7}, 1, "conv 3x3 s2 depthwise (direct)"},
        {16, 3, 1, 1, 1, 1, 1, -1, 0, 0, 0, {16, 14, 14}, 0, "conv 3x3 16->16 14x14 (Winograd F2)"},
        {16, 3, 1, 1, 1, 1, 1, -1, 0, 0, 0, {16, 52, 52}, 0, "conv 3x3 16->16 52x52 (Winograd F4)"},
        {4, 3, 1, 1, 1, 1, 1, 0, 2, 1, 0, {3, 7, 10}, 1, "conv 3x3 pads 0/2 1/0, wide input"},
        {4, 1, 1, 2, 1, 1, 1, 3, 2, 2, 3, {3, 4, 5}, 1, "conv 1x1 pads 3/2 2/3 (bands in padding)"},
    };
    /* Height and width unlike: kernel 3x5, stride 1x2, dilation 2x1. */
    {
        net_attr a = net_attr_conv(4, 3, 1, 1, 1, 1);
        a.kw = 5, a.sw = 2, a.dh = 2, a.pt = 2, a.pb = 1, a.pl = 2, a.pr = 3;
        for (int mode = 2; mode >= 0; mode -= 2) {
            kern_set_gemm(mode);
            conv_case(a, (net_shape){3, 9, 13}, 1, "conv 3x5 s1x2 d2x1 pads 2/1 2/3");
        }
    }
    for (int mode = 2; mode >= 0; mode -= 2) { /* our product where the CPU allows, then the BLAS */
        kern_set_gemm(mode);
        for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++) {
            net_attr a = net_attr_conv(convs[i].oc, convs[i].k, convs[i].st, convs[i].pad,
                                       convs[i].g, convs[i].bias);
            a.dh = a.dw = convs[i].dil;
            if (convs[i].pt >= 0) {
                a.pt = convs[i].pt, a.pb = convs[i].pb;
                a.pl = convs[i].pl, a.pr = convs[i].pr;
            }
            conv_case(a, convs[i].in, convs[i].exact, convs[i].what);
        }
    }
    kern_set_gemm(1);

    net_attr p = net_attr_pool(NET_MAXPOOL, 3, 2, 1);
    p.ceil_mode = 1;
    net *n = one(NET_MAXPOOL, p, (net_shape){3, 10, 9});
    check_layer(n, 0, 0, "maxpool 3x3 s2 p1 ceil");
    net_free(n);
    p = net_attr_pool(NET_AVGPOOL, 3, 2, 1);
    p.count_include_pad = 1;
    p.ceil_mode = 1;
    n = one(NET_AVGPOOL, p, (net_shape){3, 10, 9});
    check_layer(n, 0, 0, "avgpool 3x3 s2 p1 ceil count_include_pad");
    net_free(n);
    p = net_attr_pool(NET_AVGPOOL, 2, 2, 0);
    n = one(NET_AVGPOOL, p, (net_shape){3, 9, 8});
    check_layer(n, 0, 0, "avgpool 2x2 s2");
    net_free(n);
    net_attr l = net_attr_default(NET_LRN);
    l.lrn_size = 5, l.lrn_alpha = 1e-4, l.lrn_beta = 0.75, l.lrn_k = 2;
    n = one(NET_LRN, l, (net_shape){7, 6, 5});
    check_layer(n, 0, 0, "LRN size 5");
    net_free(n);
    static const net_kind unary[] = {NET_RELU,      NET_BN,    NET_SIGMOID, NET_HSIGMOID,
                                     NET_HSWISH,    NET_DROPOUT, NET_LEAKYRELU, NET_PRELU,
                                     NET_TANH,      NET_ELU,   NET_CLIP,  NET_SOFTPLUS};
    for (size_t k = 0; k < sizeof unary / sizeof *unary; k++) {
        net_attr u = net_attr_default(unary[k]);
        u.hs_alpha = 0.2, u.hs_beta = 0.5, u.bn_eps = 1e-5, u.clip_lo = -0.3, u.clip_hi = 0.4;
        n = one(unary[k], u, (net_shape){3, 6, 4});
        check_layer(n, 0, 0, net_kind_name(unary[k]));
        net_free(n);
    }
    /* Kinds that keep positions but read other channels or all of a
     * pixel's channels (bands carry every channel). */
    static const net_kind pixel[] = {NET_GELU, NET_SCALE, NET_LAYERNORM, NET_SLICE, NET_SHUFFLE};
    for (size_t k = 0; k < sizeof pixel / sizeof *pixel; k++) {
        net_attr u = net_attr_default(pixel[k]);
        u.bn_eps = 1e-5, u.start = 1, u.out_c = 3, u.groups = 2;
        n = one(pixel[k], u, (net_shape){4, 7, 5});
        check_layer(n, 0, 0, net_kind_name(pixel[k]));
        net_free(n);
    }
    net_attr g = net_attr_default(NET_GELU);
    g.gelu_tanh = 1;
    n = one(NET_GELU, g, (net_shape){2, 5, 6});
    check_layer(n, 0, 0, "GELU tanh");
    net_free(n);
    /* Kinds that move positions or read the whole map: each band indexes
     * the whole layer's geometry from its origin (kern_args oy, iy). */
    static const struct { int pt, pl, pb, pr, reflect, edge; const char *what; } pads[] = {
        {2, 1, 3, 0, 0, 0, "Pad zeros 2/1/3/0"},
        {0, 3, 1, 2, 0, 0, "Pad zeros 0/3/1/2"},
        {3, 2, 1, 4, 1, 0, "Pad reflect 3/2/1/4"},
        {1, 4, 3, 1, 0, 1, "Pad edge 1/4/3/1"},
        {4, 0, 4, 3, 1, 0, "Pad reflect 4/0/4/3"},
        {3, 2, 0, 1, 2, 0, "Pad 0.75 3/2/0/1"}, /* reflect 2: constant padding with 0.75 */
    };
    for (size_t k = 0; k < sizeof pads / sizeof *pads; k++) {
        net_attr u = net_attr_default(NET_PAD);
        u.pt = pads[k].pt, u.pl = pads[k].pl, u.pb = pads[k].pb, u.pr = pads[k].pr;
        u.pad_reflect = pads[k].reflect == 1, u.pad_edge = pads[k].edge;
        if (pads[k].reflect == 2) u.pad_value = 0.75;
        n = one(NET_PAD, u, (net_shape){2, 6, 5});
        check_layer(n, 0, 0, pads[k].what);
        net_free(n);
    }
    static const int ups[][2] = {{2, 2}, {3, 2}, {1, 4}};
    for (size_t k = 0; k < sizeof ups / sizeof *ups; k++) {
        net_attr u = net_attr_default(NET_UPSAMPLE);
        u.up_h = ups[k][0], u.up_w = ups[k][1];
        char what[64];
        snprintf(what, sizeof what, "Upsample %dx%d", ups[k][0], ups[k][1]);
        n = one(NET_UPSAMPLE, u, (net_shape){2, 5, 4});
        check_layer(n, 0, 0, what);
        net_free(n);
    }
    static const int bil[][3] = {{13, 9, 0}, {13, 9, 1}, {3, 11, 0}, {3, 11, 1}, {16, 1, 0}};
    for (size_t k = 0; k < sizeof bil / sizeof *bil; k++) {
        net_attr u = net_attr_default(NET_BILINEAR);
        u.up_h = bil[k][0], u.up_w = bil[k][1], u.align_corners = bil[k][2];
        char what[64];
        snprintf(what, sizeof what, "Bilinear 6x5 to %dx%d%s", bil[k][0], bil[k][1],
                 bil[k][2] ? " align_corners" : "");
        n = one(NET_BILINEAR, u, (net_shape){2, 6, 5});
        check_layer(n, 0, 0, what);
        net_free(n);
    }
    for (int dcr = 0; dcr < 2; dcr++) {
        net_attr u = net_attr_default(NET_SHUFFLEUP);
        u.up_h = 3, u.ps_dcr = dcr;
        n = one(NET_SHUFFLEUP, u, (net_shape){18, 3, 2});
        check_layer(n, 0, 0, dcr ? "PixelShuffle 3 DCR" : "PixelShuffle 3 CRD");
        net_free(n);
    }
    /* ConvTranspose: a band gathers the input rows whose taps land in it
     * (net_rows_in) and starts its products at the whole layer's rows. */
    static const struct { int k, s, p, d, g, op, pl, pr; const char *what; } dc[] = {
        {3, 2, 1, 1, 1, 1, 1, 1, "ConvTranspose 3x3 s2 p1 output_padding 1"},
        {4, 2, 1, 1, 1, 0, 1, 1, "ConvTranspose 4x4 s2 p1"},
        {3, 1, 0, 2, 2, 0, 0, 2, "ConvTranspose 3x3 dilation 2 groups 2, pads 0/2"},
        {2, 3, 0, 1, 1, 2, 0, 0, "ConvTranspose 2x2 s3 output_padding 2"},
    };
    for (size_t k = 0; k < sizeof dc / sizeof *dc; k++) {
        net_attr u = net_attr_default(NET_DECONV);
        u.out_c = 4, u.kh = u.kw = dc[k].k, u.sh = u.sw = dc[k].s, u.dh = u.dw = dc[k].d;
        u.pt = u.pb = dc[k].p, u.pl = dc[k].pl, u.pr = dc[k].pr, u.groups = dc[k].g, u.bias = 1;
        u.oph = u.opw = dc[k].op;
        for (int mode = 2; mode >= 0; mode -= 2) { /* our product where the CPU allows, then the BLAS */
            kern_set_gemm(mode);
            n = one(NET_DECONV, u, (net_shape){4, 5, 6});
            char what[96];
            snprintf(what, sizeof what, "%s, %s", dc[k].what, kern_gemm_own() ? "own product" : "BLAS");
            check_layer(n, 0, kern_gemm_own() ? 0 : GEMM_TOL, what);
            net_free(n);
        }
    }
    { /* several products (16 input rows each): bands start theirs at the whole layer's */
        net_attr u = net_attr_default(NET_DECONV);
        u.out_c = 32, u.kh = u.kw = 4, u.sh = u.sw = 2, u.pt = u.pb = u.pl = u.pr = 1, u.bias = 1;
        kern_set_gemm(2);
        n = one(NET_DECONV, u, (net_shape){2, 40, 128});
        net_shape x = net_in_shape(n, 0, 0);
        CHECK(convalgo_deconv_band_rows(&n->layers[0], x) == 16, "%d rows per product",
              convalgo_deconv_band_rows(&n->layers[0], x));
        check_layer(n, 0, kern_gemm_own() ? 0 : GEMM_TOL, "ConvTranspose 4x4 s2, 3 products");
        net_free(n);
    }
    kern_set_gemm(1);
    net_attr in = net_attr_default(NET_INSTNORM);
    in.bn_eps = 1e-5;
    n = one(NET_INSTNORM, in, (net_shape){3, 7, 6});
    check_layer(n, 0, 0, "InstanceNorm");
    net_free(n);
    net_attr gn = net_attr_default(NET_GROUPNORM);
    gn.groups = 2, gn.bn_eps = 1e-5;
    n = one(NET_GROUPNORM, gn, (net_shape){6, 7, 6});
    check_layer(n, 0, 0, "GroupNorm");
    net_free(n);
    /* Add, Concat, Mul (elementwise, the C x 1 x 1 scale of
     * squeeze-excitation: its second input stays whole, and the 1 x H x W
     * gate of CBAM's spatial attention: its band's rows). */
    char err[BASE_ERRLEN];
    n = net_new("multi", "x", (net_shape){3, 8, 5});
    const char *x[1] = {"x"}, *ab[2] = {"a", "b"}, *ag[2] = {"a", "g"};
    net_attr c = net_attr_conv(4, 3, 1, 1, 1, 1);
    net_add(n, "a", NET_CONV, &c, 1, x, err);
    net_add(n, "b", NET_CONV, &c, 1, x, err);
    net_attr none = net_attr_default(NET_ADD);
    net_add(n, "add", NET_ADD, &none, 2, ab, err);
    none = net_attr_default(NET_CONCAT);
    net_add(n, "cat", NET_CONCAT, &none, 2, ab, err);
    none = net_attr_default(NET_MUL);
    net_add(n, "mul", NET_MUL, &none, 2, ab, err);
    none = net_attr_default(NET_GAP);
    const char *a1[1] = {"a"};
    net_add(n, "g", NET_GAP, &none, 1, a1, err);
    none = net_attr_default(NET_MUL);
    net_add(n, "scale", NET_MUL, &none, 2, ag, err);
    net_attr rm = net_attr_default(NET_REDUCEMAX);
    rm.rm_c = 1;
    net_add(n, "gmax", NET_REDUCEMAX, &rm, 1, a1, err);
    const char *ap[2] = {"a", "gmax"}, *gate[2] = {"scale", "gate"};
    net_add(n, "gate", NET_MUL, &none, 2, ap, err);
    const char *fin[4] = {"add", "cat", "mul", "scale"};
    (void)fin;
    const char *c2[2] = {"add", "mul"};
    none = net_attr_default(NET_ADD);
    net_add(n, "s1", NET_ADD, &none, 2, c2, err);
    const char *c3[2] = {"s1", "scale"};
    net_add(n, "s1g", NET_ADD, &none, 2, gate, err);
    c3[1] = "s1g";
    net_add(n, "s2", NET_ADD, &none, 2, c3, err);
    const char *c4[2] = {"s2", "s2"};
    none = net_attr_default(NET_CONCAT);
    net_add(n, "out", NET_CONCAT, &none, 2, c4, err);
    const char *c5[2] = {"out", "cat"};
    net_add(n, "out2", NET_CONCAT, &none, 2, c5, err);
    CHECK(!net_finalize(n, "multi", err), "%s", err);
    check_layer(n, net_find(n, "add"), 0, "Add");
    check_layer(n, net_find(n, "cat"), 0, "Concat");
    check_layer(n, net_find(n, "mul"), 0, "Mul");
    check_layer(n, net_find(n, "scale"), 0, "Mul by a C x 1 x 1 scale");
    check_layer(n, net_find(n, "gate"), 0, "Mul by a 1 x H x W gate");
    net_free(n);
    return check_done("test_bands");
}

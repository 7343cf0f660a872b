/* convalgo.c -- the convolution algorithm rule and its scratch sizes
 * (convalgo.h).
 *
 * Invariant: the choice reads the layer's attributes and shapes only, so
 * every slice of a layer, on every device, in the model and in the
 * runtime, gets the same algorithm; the workspace of a slice never
 * exceeds the whole layer's.
 */
#include "convalgo.h"

/* Target im2col band: about 1 Mi floats (4 MiB).  Bands bound the scratch
 * memory (a whole-layer im2col of vgg16's conv1_2 would be 115 MB) and are
 * packed by the product while still in cache; much smaller bands starve it
 * of columns (a 3x3 conv on a 14x14 map then gets N < 100 and loses ~25%). */
#define IM2COL_BAND_FLOATS (1024 * 1024)
/* ... except for a product of fewer than 16 rows (a layer whose groups have
 * few output channels: the last 3x3 convolution of an image-to-image
 * network; not a narrow slice of a wide layer, convalgo.h says why), which
 * is bound by reading the columns, not
 * by its multiply-adds: there the band stays in a core's L2 from im2col to
 * the product, 128 Ki floats (512 KiB), but at least 128 pixels wide.
 * Measured (bench/README.md, "Narrow convolutions"): 32 -> 1, 4, 8
 * channels, 3x3 on 128x128, 2982 -> 1000, 3337 -> 1129, 3587 -> 1385 us;
 * 16 and more channels unchanged. */
#define IM2COL_NARROW_ROWS 16
#define IM2COL_NARROW_FLOATS (128 * 1024)
#define IM2COL_NARROW_MIN_PIXELS 128
/* Winograd: about 2 Mi floats of transformed input per band keeps the
 * products' N in the hundreds while bounding the scratch. */
#define WINO_BAND_FLOATS (2 * 1024 * 1024)
/* Transformed weights per block of output channels: 128 Ki floats stay in
 * the core's L2 between the block's transform and its products.  With
 * many tiles per band the input operands dominate instead: one block. */
#define WINO_U_BLOCK_FLOATS (128 * 1024)
/* Where one block holds a group's part of the slice's U (made once per
 * group and call), V's
 * bands are smaller: 256 Ki floats (1 MiB) stay in a core's L2 from their
 * transform to their products.  With 2 Mi floats, a slice whose V was
 * cold (a rank that waited while the other core streamed the network
 * through the shared L3) took 40% longer than its hot time; with 1 MiB
 * bands 5-10%, and the hot time is unchanged or shorter (bench/README.md,
 * "A waiting rank's cold workspace").  Bands still make the products'
 * N smaller, so the bands stay large where that U exceeds
 * WINO_U_BLOCK_FLOATS (kern_wino still makes a single block's U once). */
#define WINO_BAND_SMALL_FLOATS (256 * 1024)
#define WINO_BLOCK_MAX_TILES 256

static int is_pointwise(const net_attr *a)
{
    return a->kh == 1 && a->kw == 1 && a->sh == 1 && a->sw == 1 && a->pt == 0 && a->pl == 0 &&
           a->pb == 0 && a->pr == 0;
}

convalgo convalgo_pick(const net_layer *L, net_shape x, const convalgo_rule *r)
{
    const convalgo_rule def = CONVALGO_RULE_DEFAULT;
    if (!r) r = &def;
    const net_attr *a = &L->a;
    int cin_g = x.c / a->groups, cout_g = a->out_c / a->groups;
    int wino_shape = a->kh == 3 && a->kw == 3 && a->sh == 1 && a->sw == 1 && a->dh == 1 &&
                     a->dw == 1 && cin_g >= 16 && cout_g >= 16;
    if (r->wino_force >= 0 && wino_shape) {
        if (r->wino_force == 2) return CONVALGO_WINO2;
        if (r->wino_force == 4) return CONVALGO_WINO4;
        /* F(4x4) pays from 50x50 maps on and, from 20x20 on, with many
         * channel pairs (its products do 4x less work, its transforms cost
         * more per pair and tile); F(2x2) elsewhere down to 13x13 up to
         * the machine's limit on channel pairs (convalgo.h); on 7x7 maps
         * neither beats im2col. */
        int pixels = L->out.h * L->out.w;
        long pairs = (long)cin_g * cout_g;
        if (pixels >= 2500 || (pixels >= 400 && pairs >= 32768)) return CONVALGO_WINO4;
        if (pixels >= 169 && (r->wino2_max_pairs <= 0 || pairs < r->wino2_max_pairs))
            return CONVALGO_WINO2;
    }
    if (a->groups > 1 && cin_g == 1) return CONVALGO_DIRECT;
    if (L->out.h == 1 && L->out.w == 1) return CONVALGO_GEMV;
    if (is_pointwise(a)) return CONVALGO_POINTWISE;
    return CONVALGO_IM2COL;
}

int convalgo_of(const net *n, int layer, const convalgo_rule *r)
{
    const net_layer *L = &n->layers[layer];
    if (L->kind != NET_CONV) return -1;
    return (int)convalgo_pick(L, net_in_shape(n, layer, 0), r);
}

const char *convalgo_name(convalgo a)
{
    static const char *names[CONVALGO_COUNT] = {"im2col", "pointwise", "direct", "winograd2",
                                                "winograd4", "gemv"};
    return a < CONVALGO_COUNT ? names[a] : "?";
}

int convalgo_im2col_band_rows(int K, int m, int oh, int ow)
{
    long r = IM2COL_BAND_FLOATS / ((long)K * ow);
    if (r < 1) r = 1;
    if (m < IM2COL_NARROW_ROWS) { /* never more rows than a wide product's band */
        long n = IM2COL_NARROW_FLOATS / ((long)K * ow), q = (IM2COL_NARROW_MIN_PIXELS + ow - 1) / ow;
        if (n < q) n = q;
        if (n < r) r = n;
    }
    return r > oh ? oh : (int)r;
}

convalgo_wino convalgo_wino_geometry(const net_layer *L, net_shape x, int nc, int m)
{
    convalgo_wino g;
    const net_attr *a = &L->a;
    int cin_g = x.c / a->groups, cout_g = a->out_c / a->groups;
    g.m = m;
    g.alpha = m + 2;
    g.tx = (L->out.w + m - 1) / m;
    g.ty = (L->out.h + m - 1) / m;
    int mc = nc < cout_g ? nc : cout_g;
    long a2 = (long)g.alpha * g.alpha;
    if (a2 * mc * cin_g <= WINO_U_BLOCK_FLOATS) {
        /* the group's part of the slice's U fits one block: made once per
         * group, and V
         * comes in small bands that the core's cache keeps between their
         * transform and their products */
        long rows = WINO_BAND_SMALL_FLOATS / (a2 * cin_g * g.tx);
        if (rows < 1) rows = 1;
        g.band_tiles = (int)(rows > g.ty ? g.ty : rows) * g.tx;
        g.block_rows = mc;
        return g;
    }
    long rows = WINO_BAND_FLOATS / (a2 * cin_g * g.tx);
    if (rows < 1) rows = 1;
    g.band_tiles = (int)(rows > g.ty ? g.ty : rows) * g.tx;
    if (g.band_tiles >= WINO_BLOCK_MAX_TILES) {
        g.block_rows = mc;
    } else {
        long br = WINO_U_BLOCK_FLOATS / ((long)g.alpha * g.alpha * cin_g);
        if (br < 16) br = 16;
        g.block_rows = (int)(br > mc ? mc : br);
    }
    return g;
}

int convalgo_gemv_gathers(const net_layer *L, net_shape x)
{
    const net_attr *a = &L->a;
    return !(a->kh == 1 && a->kw == 1 && x.h == 1 && x.w == 1 && a->pt == 0 && a->pl == 0);
}

size_t convalgo_workspace(const net_layer *L, net_shape x, int nc, convalgo alg)
{
    const net_attr *a = &L->a;
    int cin_g = x.c / a->groups;
    switch (alg) {
    case CONVALGO_DIRECT:
    case CONVALGO_POINTWISE:
    case CONVALGO_COUNT:
        return 0;
    case CONVALGO_GEMV: /* the one input column, unless it is the input itself */
        return convalgo_gemv_gathers(L, x) ? (size_t)cin_g * a->kh * a->kw : 0;
    case CONVALGO_WINO2:
    case CONVALGO_WINO4: {
        /* U and M for one block of output channels, V for one band. */
        convalgo_wino g = convalgo_wino_geometry(L, x, nc, alg == CONVALGO_WINO4 ? 4 : 2);
        size_t a2 = (size_t)g.alpha * g.alpha;
        return a2 * ((size_t)g.block_rows * cin_g + (size_t)cin_g * g.band_tiles +
                     (size_t)g.block_rows * g.band_tiles);
    }
    case CONVALGO_IM2COL:
    default: {
        /* every group's band has the same size; one band is reused */
        int K = cin_g * a->kh * a->kw, cout_g = a->out_c / a->groups;
        return (size_t)K * convalgo_im2col_band_rows(K, cout_g, L->out.h,
                                                     L->out.w) * L->out.w;
    }
    }
}

int convalgo_deconv_band_rows(const net_layer *L, net_shape x)
{
    const net_attr *a = &L->a;
    long M = (long)(a->out_c / a->groups) * a->kh * a->kw; /* a whole group's rows */
    long r = IM2COL_BAND_FLOATS / (M * x.w);
    if (r < 1) r = 1;
    return r > x.h ? x.h : (int)r;
}

size_t convalgo_deconv_workspace(const net_layer *L, net_shape x, int nc)
{
    const net_attr *a = &L->a;
    int cout_g = a->out_c / a->groups, m = nc < cout_g ? nc : cout_g; /* one group at a time */
    return (size_t)m * a->kh * a->kw * convalgo_deconv_band_rows(L, x) * x.w;
}

size_t convalgo_workspace_of(const net *n, int layer, int nc, const convalgo_rule *r)
{
    const net_layer *L = &n->layers[layer];
    if (L->kind == NET_DECONV) return convalgo_deconv_workspace(L, net_in_shape(n, layer, 0), nc);
    if (L->kind != NET_CONV) return 0;
    net_shape x = net_in_shape(n, layer, 0);
    return convalgo_workspace(L, x, nc, convalgo_pick(L, x, r));
}

size_t convalgo_workspace_band(const net *n, int layer, int h0, int nh, int w0, int nw,
                               const convalgo_rule *r)
{
    const net_layer *L = &n->layers[layer];
    if (L->kind != NET_CONV && L->kind != NET_DECONV) return 0;
    net_layer band;
    net_shape bx;
    net_band_layer(n, layer, h0, h0 + nh, w0, w0 + nw, &band, &bx, NULL, NULL);
    if (L->kind == NET_DECONV) { /* the whole layer's products, cut to the box's rows */
        int rows = convalgo_deconv_band_rows(L, net_in_shape(n, layer, 0));
        if (rows > bx.h) rows = bx.h;
        int cout_g = L->a.out_c / L->a.groups;
        return (size_t)cout_g * L->a.kh * L->a.kw * rows * bx.w;
    }
    return convalgo_workspace(&band, bx, L->out.c,
                              convalgo_pick(L, net_in_shape(n, layer, 0), r));
}

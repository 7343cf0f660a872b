/* rows.c -- what a slice reads: which input rows and columns a band of
 * output rows or columns reads (spatial slices, docs/spatial.md), a band
 * as a layer of its own, and which input channels a channel slice reads.
 *
 * Invariant: the one place that knows the input box of a slice.  The Plan
 * (what to send and assemble), its checker, the cost model and the
 * kernels all ask here, so a slice computed from the rows, columns and
 * channels named here equals the same part of the whole layer's output.
 * Rows and columns follow one rule per kind (axis_in: window_in for
 * Conv and the pools, scatter_in for ConvTranspose, pad_in for Pad, a
 * Slice's first + step * o, ...),
 * each axis with its own stride, padding, kernel and dilation.
 */
#include "net.h"

int net_kind_rowsplit(net_kind k)
{
    const net_kind_info_t *K = net_kind_info(k);
    return K && (K->flags & NET_KF_ROWS);
}

int net_layer_rowsplit(const net *n, int i)
{
    return net_kind_rowsplit(n->layers[i].kind) && n->layers[i].out.h >= 2;
}

int net_layer_colsplit(const net *n, int i)
{
    return net_kind_rowsplit(n->layers[i].kind) && n->layers[i].out.w >= 2;
}

/* Sliding-window kinds read a window of rows and columns; the others read
 * the same ones (or everything, for an input of another size), except the
 * kinds below that move positions (Pad, Upsample, Nearest, Bilinear, PixelShuffle,
 * PixelUnshuffle, a cropping Slice)
 * or read the whole map (InstanceNorm, GroupNorm). */
static int windowed(net_kind k) { return k == NET_CONV || k == NET_MAXPOOL || k == NET_AVGPOOL; }

/* Floor and ceiling of a / b for b > 0, a of either sign. */
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

/* ConvTranspose: input position h reaches outputs h S - P + k D (k <
 * K), so tap k brings outputs [o0, o1) inputs [ceil((o0 + P - k D) / S),
 * floor((o1 - 1 + P - k D) / S)] of the map: the hull over the taps that
 * reach the band (exact: with a stride or dilation the span from the
 * last tap's first input to the first tap's last may hold inputs that
 * reach none of it at its ends).  When no tap reaches the band (stride
 * gaps, output padding), empty at the row the span would start at. */
static void scatter_in(int S, int P, int K, int D, int IN, int o0, int o1, int *i0, int *i1)
{
    int64_t lo = IN, hi = 0;
    for (int k = 0; k < K; k++) {
        int64_t c = (int64_t)P - (int64_t)k * D;
        int64_t a = ceil_div(o0 + c, S), b = floor_div(o1 - 1 + c, S) + 1;
        if (a < 0) a = 0;
        if (b > IN) b = IN;
        if (a >= b) continue;
        if (a < lo) lo = a;
        if (b > hi) hi = b;
    }
    if (hi <= lo) {
        lo = ceil_div((int64_t)o0 + P - (int64_t)(K - 1) * D, S);
        lo = lo < 0 ? 0 : lo > IN ? IN : lo;
        hi = lo;
    }
    *i0 = (int)lo, *i1 = (int)hi;
}

/* Input positions [*i0, *i1) (of IN) that output positions [o0, o1) read
 * along one axis: stride S, leading pad P, kernel K, dilation D. */
static void window_in(int S, int P, int K, int D, int IN, int o0, int o1, int *i0, int *i1)
{
    int64_t tK = (int64_t)(K - 1) * D + 1;
    int64_t lo = (int64_t)S * o0 - P, hi = (int64_t)S * (o1 - 1) - P + tK;
    if (lo < 0) lo = 0;
    if (hi > IN) hi = IN;
    if (hi < lo) hi = lo;
    *i0 = (int)lo;
    *i1 = (int)hi;
}

int net_pad_src(int o, int before, int n, int reflect, int edge)
{
    int s = o - before;
    if (s >= 0 && s < n) return s;
    if (reflect) {
        if (s < 0) s = -s;
        if (s >= n) s = 2 * (n - 1) - s;
        return s;
    }
    if (edge) return s < 0 ? 0 : n - 1;
    return -1;
}


/* Pad: the hull of the sources of [o0, o1) (what net_pad_src gives each
 * position, in closed form: empty when the band lies in zero padding),
 * reaching the edge a band mirrors or repeats at: its kernel indexes the
 * box as the whole layer indexes the map, with the pads moved by the box's
 * start, which mirrors about the box's edge.  The interior reads rows
 * o - P; a reflected top row o < P reads P - o (at most P - o0, and P < IN
 * is checked when the layer is read), a reflected bottom row o >= P + IN
 * reads 2 (IN - 1) - (o - P), least at o = o1 - 1; edge rows read 0 and
 * IN - 1. */
static void pad_in(int P, int IN, int reflect, int edge, int o0, int o1, int *i0, int *i1)
{
    int lo = o0 - P > 0 ? o0 - P : 0, hi = o1 - P < IN ? o1 - P : IN;
    if (!reflect && !edge) {
        if (hi <= lo) lo = hi = o0 < P ? 0 : IN; /* all padding: nothing read */
        *i0 = lo, *i1 = hi;
        return;
    }
    if (o0 < P) {
        int top = reflect ? P - o0 + 1 : 1;
        lo = 0;
        if (hi < top) hi = top;
    }
    if (o1 > P + IN) {
        int bottom = edge ? IN - 1 : 2 * (IN - 1) - (o1 - 1 - P);
        hi = IN;
        if (lo > bottom) lo = bottom;
    }
    *i0 = lo, *i1 = hi;
}

/* Input positions [*i0, *i1) of an input of layer i, IN positions long,
 * that output positions [o0, o1) read along rows (cols 0) or columns
 * (cols 1): the one rule. */
static void axis_in(const net *n, int i, int cols, int IN, int o0, int o1, int *i0, int *i1)
{
    const net_layer *L = &n->layers[i];
    const net_attr *a = &L->a;
    int OUT = cols ? L->out.w : L->out.h;
    switch (L->kind) {
    case NET_CONV:
    case NET_MAXPOOL:
    case NET_AVGPOOL:
        window_in(cols ? a->sw : a->sh, cols ? a->pl : a->pt, cols ? a->kw : a->kh,
                  L->kind == NET_CONV ? (cols ? a->dw : a->dh) : 1, IN, o0, o1, i0, i1);
        return;
    case NET_DECONV:
        scatter_in(cols ? a->sw : a->sh, cols ? a->pl : a->pt, cols ? a->kw : a->kh,
                   cols ? a->dw : a->dh, IN, o0, o1, i0, i1);
        return;
    case NET_PAD:
        pad_in(cols ? a->pl : a->pt, IN, a->pad_reflect, a->pad_edge, o0, o1, i0, i1);
        return;
    case NET_UPSAMPLE:
    case NET_SHUFFLEUP: { /* output o is input o / s */
        int s = L->kind == NET_SHUFFLEUP || !cols ? a->up_h : a->up_w;
        *i0 = o0 / s, *i1 = (o1 - 1) / s + 1;
        return;
    }
    case NET_NEAREST: /* net_nearest_src, growing with o */
        *i0 = net_nearest_src(IN, OUT, o0), *i1 = net_nearest_src(IN, OUT, o1 - 1) + 1;
        return;
    case NET_SHUFFLEDOWN: /* output o gathers inputs [o r, o r + r) */
        *i0 = o0 * a->up_h, *i1 = o1 * a->up_h;
        return;
    case NET_BILINEAR: { /* the source coordinate grows with o */
        int lo, hi, t;
        float l;
        net_bilinear_src(IN, OUT, a->align_corners, o0, &lo, &t, &l);
        net_bilinear_src(IN, OUT, a->align_corners, o1 - 1, &t, &hi, &l);
        *i0 = lo, *i1 = hi + 1;
        return;
    }
    case NET_SLICE: { /* output o is input first + o step */
        int64_t first = cols ? a->sl_left : a->sl_top, step = cols ? a->sw : a->sh;
        *i0 = (int)(first + o0 * step), *i1 = (int)(first + (o1 - 1) * step + 1);
        return;
    }
    case NET_INSTNORM: /* every position: the map's mean and variance */
    case NET_GROUPNORM:
        *i0 = 0, *i1 = IN;
        return;
    default:
        if (IN == OUT) *i0 = o0, *i1 = o1;
        else *i0 = 0, *i1 = IN;
    }
}

/* Never empty: a band that reads nothing (in padding, or reached by no
 * tap of a ConvTranspose) reads one row, unused, its interval's start
 * clamped into the map, because the Plan moves boxes and a box has at
 * least one row. */
static void axis_in_nonempty(const net *n, int i, int k, int cols, int o0, int o1, int *i0,
                             int *i1)
{
    net_shape x = net_in_shape(n, i, k);
    int IN = cols ? x.w : x.h;
    axis_in(n, i, cols, IN, o0, o1, i0, i1);
    if (*i1 > *i0) return;
    if (*i0 >= IN) *i0 = IN - 1;
    *i1 = *i0 + 1;
}

void net_rows_in(const net *n, int i, int k, int o0, int o1, int *i0, int *i1)
{
    axis_in_nonempty(n, i, k, 0, o0, o1, i0, i1);
}

void net_cols_in(const net *n, int i, int k, int o0, int o1, int *i0, int *i1)
{
    axis_in_nonempty(n, i, k, 1, o0, o1, i0, i1);
}

void net_chans_in(const net *n, int i, int k, int c0, int c1, int *a0, int *a1)
{
    const net_layer *L = &n->layers[i];
    int C = net_in_shape(n, i, k).c;
    if ((L->kind == NET_CONV || L->kind == NET_DECONV || L->kind == NET_GROUPNORM) && k == 0 &&
        L->a.groups > 1) {
        int cin_g = C / L->a.groups, cout_g = L->out.c / L->a.groups;
        *a0 = c0 / cout_g * cin_g;
        *a1 = ((c1 - 1) / cout_g + 1) * cin_g;
    } else if (net_kind_channelwise(L->kind) && C == L->out.c) {
        *a0 = c0, *a1 = c1;
    } else {
        *a0 = 0, *a1 = C;
    }
}

void net_band_layer(const net *n, int i, int h0, int h1, int w0, int w1, net_layer *band,
                    net_shape *x, int *r0p, int *q0p)
{
    const net_layer *L = &n->layers[i];
    *band = *L;
    *x = net_in_shape(n, i, 0);
    int H = x->h, W = x->w, r0 = 0, r1 = H, q0 = 0, q1 = W;
    /* An axis the band does not cut reads all of the input along it, as
     * the Plan sends it (plan.c, reads_box). */
    if (h1 - h0 != L->out.h) net_rows_in(n, i, 0, h0, h1, &r0, &r1);
    if (w1 - w0 != L->out.w) net_cols_in(n, i, 0, w0, w1, &q0, &q1);
    x->h = r1 - r0;
    x->w = q1 - q0;
    band->out.h = h1 - h0;
    band->out.w = w1 - w0;
    if (windowed(L->kind)) {
        /* Global input row r = S*o - P + k*D is local row r - r0 for local
         * output o - h0: the local top pad is P - S*h0 + r0 (columns alike). */
        band->a.pt = L->a.pt - L->a.sh * h0 + r0;
        band->a.pb = H + L->a.pb - r1;
        band->a.pl = L->a.pl - L->a.sw * w0 + q0;
        band->a.pr = W + L->a.pr - q1;
    } else if (L->kind == NET_DECONV) {
        /* Local input row r - r0 reaches S*r - P + k*D - h0: the local top
         * pad is P + h0 - S*r0 (may be negative); outputs outside the band
         * are dropped, as the whole layer drops those outside its map. */
        band->a.pt = L->a.pt + h0 - L->a.sh * r0;
        band->a.pl = L->a.pl + w0 - L->a.sw * q0;
    } else if (L->kind == NET_SLICE) {
        /* Output o reads input first + S*o: local row first + S*h0 - r0 for
         * the band's first, and the band's count (0 would run to the end). */
        band->a.sl_top = L->a.sl_top + L->a.sh * h0 - r0;
        band->a.sl_left = L->a.sl_left + L->a.sw * w0 - q0;
        band->a.sl_rows = band->out.h;
        band->a.sl_cols = band->out.w;
    } else if (L->kind == NET_PAD) {
        /* The same with stride 1 (may be negative: a band below the top
         * padding starts inside the map); the far pads close the band. */
        band->a.pt = L->a.pt - h0 + r0;
        band->a.pl = L->a.pl - w0 + q0;
        band->a.pb = band->out.h - band->a.pt - x->h;
        band->a.pr = band->out.w - band->a.pl - x->w;
    }
    if (r0p) *r0p = r0;
    if (q0p) *q0p = q0;
    band->macs = net_box_macs(n, i, 0, L->out.c, h0, h1 - h0, w0, w1 - w0);
    band->ops = net_box_ops(n, i, 0, L->out.c, h0, h1 - h0, w0, w1 - w0);
}

/* count (of the whole output's rows and columns) scaled to nh x nw of
 * them: every output position of a layer costs the same. */
static int64_t scale_box(int64_t count, const net_layer *L, int nh, int nw)
{
    if (nh != L->out.h) count = count / L->out.h * nh;
    if (nw != L->out.w) count = count / L->out.w * nw;
    return count;
}

int64_t net_box_macs(const net *n, int i, int c0, int nc, int h0, int nh, int w0, int nw)
{
    const net_layer *L = &n->layers[i];
    int64_t whole = net_slice_macs(n, i, c0, nc);
    if (L->kind == NET_DECONV && (nh != L->out.h || nw != L->out.w)) {
        /* A ConvTranspose band multiplies every tap of the input box it
         * reads (then drops what lands outside it): its share of the
         * input, not of the output. */
        net_shape x = net_in_shape(n, i, 0);
        int r0 = 0, r1 = x.h, q0 = 0, q1 = x.w;
        if (nh != L->out.h) net_rows_in(n, i, 0, h0, h0 + nh, &r0, &r1);
        if (nw != L->out.w) net_cols_in(n, i, 0, w0, w0 + nw, &q0, &q1);
        return whole * (r1 - r0) / x.h * (q1 - q0) / x.w;
    }
    return scale_box(whole, L, nh, nw);
}

int64_t net_box_ops(const net *n, int i, int c0, int nc, int h0, int nh, int w0, int nw)
{
    (void)h0, (void)w0;
    const net_layer *L = &n->layers[i];
    int64_t whole = net_slice_ops(n, i, c0, nc);
    /* An InstanceNorm or GroupNorm band reads the whole map twice (its
     * mean, then its variance) before writing its own positions: two of
     * the kernel's three passes do not shrink with the band. */
    if ((L->kind == NET_INSTNORM || L->kind == NET_GROUPNORM) && (nh != L->out.h || nw != L->out.w))
        return whole / 3 * 2 + scale_box(whole, L, nh, nw) / 3;
    return scale_box(whole, L, nh, nw);
}

/* rows.c -- what a slice reads: which input rows and columns a band of
 * output rows or columns reads (spatial slices, docs/spatial.md), a band
 * as a layer of its own, and which input channels a channel slice reads.
 *
 * Invariant: the one place that knows the input box of a slice.  The Plan
 * (what to send and assemble), its checker, the cost model and the
 * kernels all ask here, so a slice computed from the rows, columns and
 * channels named here equals the same part of the whole layer's output.
 * Rows and columns follow one rule (window_in), each with its own
 * stride, padding, kernel and dilation.
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
 * the same ones (or everything, for an input of another size). */
static int windowed(net_kind k) { return k == NET_CONV || k == NET_MAXPOOL || k == NET_AVGPOOL; }

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

void net_rows_in(const net *n, int i, int k, int o0, int o1, int *i0, int *i1)
{
    const net_layer *L = &n->layers[i];
    int H = net_in_shape(n, i, k).h;
    if (!windowed(L->kind)) {
        if (H == L->out.h) *i0 = o0, *i1 = o1;
        else *i0 = 0, *i1 = H;
        return;
    }
    const net_attr *a = &L->a;
    window_in(a->sh, a->pt, a->kh, L->kind == NET_CONV ? a->dh : 1, H, o0, o1, i0, i1);
}

void net_cols_in(const net *n, int i, int k, int o0, int o1, int *i0, int *i1)
{
    const net_layer *L = &n->layers[i];
    int W = net_in_shape(n, i, k).w;
    if (!windowed(L->kind)) {
        if (W == L->out.w) *i0 = o0, *i1 = o1;
        else *i0 = 0, *i1 = W;
        return;
    }
    const net_attr *a = &L->a;
    window_in(a->sw, a->pl, a->kw, L->kind == NET_CONV ? a->dw : 1, W, o0, o1, i0, i1);
}

void net_chans_in(const net *n, int i, int k, int c0, int c1, int *a0, int *a1)
{
    const net_layer *L = &n->layers[i];
    int C = net_in_shape(n, i, k).c;
    if ((L->kind == NET_CONV || L->kind == NET_DECONV) && k == 0 && L->a.groups > 1) {
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
                    net_shape *x)
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
    }
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
    (void)h0, (void)w0;
    return scale_box(net_slice_macs(n, i, c0, nc), &n->layers[i], nh, nw);
}

int64_t net_box_ops(const net *n, int i, int c0, int nc, int h0, int nh, int w0, int nw)
{
    (void)h0, (void)w0;
    return scale_box(net_slice_ops(n, i, c0, nc), &n->layers[i], nh, nw);
}

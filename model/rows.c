/* rows.c -- what a slice reads: which input rows a band of output rows
 * reads (spatial slices, docs/spatial.md), a band as a layer of its own,
 * and which input channels a channel slice reads.
 *
 * Invariant: the one place that knows the input box of a slice.  The Plan
 * (what to send and assemble), its checker, the cost model and the
 * kernels all ask here, so a slice computed from the rows and channels
 * named here equals the same part of the whole layer's output.
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

/* Sliding-window kinds read a window of rows; the others read the same
 * rows (or everything, for an input of another height). */
static int windowed(net_kind k) { return k == NET_CONV || k == NET_MAXPOOL || k == NET_AVGPOOL; }

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
    int64_t D = L->kind == NET_CONV ? a->dh : 1, tK = (int64_t)(a->kh - 1) * D + 1;
    int64_t lo = (int64_t)a->sh * o0 - a->pt, hi = (int64_t)a->sh * (o1 - 1) - a->pt + tK;
    if (lo < 0) lo = 0;
    if (hi > H) hi = H;
    if (hi < lo) hi = lo;
    *i0 = (int)lo;
    *i1 = (int)hi;
}

void net_chans_in(const net *n, int i, int k, int c0, int c1, int *a0, int *a1)
{
    const net_layer *L = &n->layers[i];
    int C = net_in_shape(n, i, k).c;
    if (L->kind == NET_CONV && k == 0 && L->a.groups > 1) {
        int cin_g = C / L->a.groups, cout_g = L->out.c / L->a.groups;
        *a0 = c0 / cout_g * cin_g;
        *a1 = ((c1 - 1) / cout_g + 1) * cin_g;
    } else if (net_kind_channelwise(L->kind) && C == L->out.c) {
        *a0 = c0, *a1 = c1;
    } else {
        *a0 = 0, *a1 = C;
    }
}

void net_band_layer(const net *n, int i, int o0, int o1, net_layer *band, net_shape *x)
{
    const net_layer *L = &n->layers[i];
    int i0, i1;
    net_rows_in(n, i, 0, o0, o1, &i0, &i1);
    *band = *L;
    *x = net_in_shape(n, i, 0);
    int H = x->h;
    x->h = i1 - i0;
    band->out.h = o1 - o0;
    if (windowed(L->kind)) {
        /* Global input row r = S*o - P + k*D is local row r - i0 for local
         * output o - o0: the local top pad is P - S*o0 + i0. */
        band->a.pt = L->a.pt - L->a.sh * o0 + i0;
        band->a.pb = H + L->a.pb - i1;
    }
    band->macs = L->macs / L->out.h * (o1 - o0);
    band->ops = L->ops / L->out.h * (o1 - o0);
}

int64_t net_box_macs(const net *n, int i, int c0, int nc, int h0, int nh)
{
    (void)h0;
    return net_slice_macs(n, i, c0, nc) / n->layers[i].out.h * nh;
}

int64_t net_box_ops(const net *n, int i, int c0, int nc, int h0, int nh)
{
    (void)h0;
    return net_slice_ops(n, i, c0, nc) / n->layers[i].out.h * nh;
}

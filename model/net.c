/* net.c -- layer semantics: shape inference, MAC/op/parameter counting,
 * topological ordering and validation of a network.
 *
 * This file is the single source of truth for what each layer kind does to
 * shapes and what it costs; the JSON and ONNX readers only fill attributes
 * and call net_finalize().
 */
#include "net.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int net_split_mask_parse(const char *s)
{
    int mask = 0;
    const char *p = s;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 4 && strncasecmp(p, "conv", 4) == 0) mask |= 1 << NET_CONV;
        else if (len == 2 && strncasecmp(p, "fc", 2) == 0) mask |= 1 << NET_FC;
        else return -1;
        p += len;
        if (*p == ',') p++;
    }
    return mask ? mask : -1;
}

int net_split_bit(net_kind k) { return k == NET_DECONV ? NET_CONV : (int)k; }

int net_split_has(int mask, net_kind k)
{
    int b = net_split_bit(k);
    return b >= 0 && b < 31 && (mask >> b & 1) && net_kind_splittable(k);
}

net_attr net_attr_default(net_kind k)
{
    net_attr a;
    memset(&a, 0, sizeof a);
    a.kh = a.kw = 1;
    a.sh = a.sw = 1;
    a.dh = a.dw = 1;
    a.groups = 1;
    a.card = 1;
    a.bias = 1;
    a.lrn_size = 5;
    a.lrn_alpha = 1e-4;
    a.lrn_beta = 0.75;
    a.lrn_k = 1.0;
    a.bn_eps = 1e-5;
    a.hs_alpha = 0.2; /* ONNX's defaults; PyTorch's hardsigmoid is 1/6, 0.5 */
    a.hs_beta = 0.5;
    a.act_alpha = k == NET_ELU ? 1.0 : 0.01; /* ONNX's and PyTorch's defaults */
    if (k == NET_L2NORM) a.bn_eps = 1e-12; /* F.normalize's */
    a.clip_lo = -FLT_MAX;
    a.clip_hi = FLT_MAX;
    a.up_h = a.up_w = 1;
    if (k == NET_MAXPOOL || k == NET_AVGPOOL) a.bias = 0;
    return a;
}

net_attr net_attr_conv(int out_c, int k, int s, int p, int groups, int bias)
{
    net_attr a = net_attr_default(NET_CONV);
    a.out_c = out_c;
    a.kh = a.kw = k;
    a.sh = a.sw = s;
    a.pt = a.pl = a.pb = a.pr = p;
    a.groups = groups;
    a.bias = bias;
    return a;
}

net_attr net_attr_pool(net_kind kind, int k, int s, int p)
{
    net_attr a = net_attr_default(kind);
    a.kh = a.kw = k;
    a.sh = a.sw = s;
    a.pt = a.pl = a.pb = a.pr = p;
    return a;
}

net *net_new(const char *name, const char *input_name, net_shape input)
{
    net *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->name = base_strdup(name ? name : "net");
    n->input_name = base_strdup(input_name ? input_name : "data");
    n->input = input;
    return n;
}

void net_free(net *n)
{
    if (!n) return;
    for (int i = 0; i < n->n; i++) {
        free(n->layers[i].name);
        free(n->layers[i].in);
    }
    free(n->layers);
    free(n->name);
    free(n->input_name);
    free(n->weights_path);
    free(n->cons_first);
    free(n->cons);
    if (n->pending)
        for (int i = 0; i < n->n; i++) free(n->pending[i]);
    free(n->pending);
    free(n);
}

int net_add(net *n, const char *name, net_kind kind, const net_attr *a, int nin,
            const char *const *inputs, char *err)
{
    if (n->cons_first) {
        base_seterr(err, "net %s: cannot add layer %s after finalize", n->name, name);
        return -1;
    }
    if (n->n == n->cap) {
        int cap = n->cap ? n->cap * 2 : 32;
        net_layer *l = realloc(n->layers, (size_t)cap * sizeof *l);
        char **pn = realloc(n->pending, (size_t)cap * sizeof(char *));
        if (!l || !pn) {
            if (l) n->layers = l;
            if (pn) n->pending = pn;
            base_seterr(err, "out of memory");
            return -1;
        }
        n->layers = l;
        n->pending = pn;
        n->cap = cap;
    }
    net_layer *L = &n->layers[n->n];
    memset(L, 0, sizeof *L);
    L->name = base_strdup(name);
    L->kind = kind;
    L->a = a ? *a : net_attr_default(kind);
    L->nin = nin;
    L->in = calloc((size_t)(nin > 0 ? nin : 1), sizeof(int));
    /* Names joined with '\0' into one block, resolved in finalize. */
    size_t len = 1;
    for (int i = 0; i < nin; i++) len += strlen(inputs[i]) + 1;
    char *blk = malloc(len), *p = blk;
    if (!L->name || !L->in || !blk) {
        free(blk);
        base_seterr(err, "out of memory");
        return -1;
    }
    for (int i = 0; i < nin; i++) {
        size_t k = strlen(inputs[i]) + 1;
        memcpy(p, inputs[i], k);
        p += k;
    }
    *p = 0;
    (n->pending)[n->n] = blk;
    return n->n++;
}

int net_find(const net *n, const char *name)
{
    for (int i = 0; i < n->n; i++)
        if (strcmp(n->layers[i].name, name) == 0) return i;
    return -1;
}

net_shape net_in_shape(const net *n, int layer, int k)
{
    int p = n->layers[layer].in[k];
    return p == NET_INPUT ? n->input : n->layers[p].out;
}

int net_output(const net *n) { return n->n - 1; }

/* Output size of a sliding window along one axis; -1 if it does not fit.
 * 64-bit arithmetic: attributes come from files and may be absurd; a size
 * beyond INT_MAX is clamped there and rejected by the tensor-size check. */
static int window_out(int in, int k, int s, int d, int p0, int p1, int ceil_mode)
{
    int64_t eff = (int64_t)d * (k - 1) + 1;
    int64_t span = (int64_t)in + p0 + p1 - eff;
    if (span < 0 || s <= 0) return -1;
    int64_t o = ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
    /* PyTorch/ONNX: the last window must start inside the input or left pad. */
    if (ceil_mode && (o - 1) * s >= (int64_t)in + p0) o--;
    return o > INT_MAX ? INT_MAX : (int)o;
}

/* The kernels' matrix products take int sides: a group's input channels
 * times the kernel's taps (Conv's column height, im2col's K), and its output
 * channels times the taps (ConvTranspose's product rows) must stay below
 * 2^30, far beyond any real layer (vgg16's widest: 4608). */
/* A Slice along one axis of IN positions: positions first + step k, count
 * of them (0: as many as fit); -1 when the first or the last is outside. */
static int slice_axis(int IN, int first, int count, int step, int *out)
{
    if (first < 0 || first >= IN || step < 1 || count < 0) return -1;
    int n = count ? count : (IN - 1 - first) / step + 1;
    if ((int64_t)first + (int64_t)(n - 1) * step >= IN) return -1;
    *out = n;
    return 0;
}

static int window_too_large(const net_layer *L, net_shape x, const char *what, char *err)
{
    const net_attr *a = &L->a;
    double taps = (double)a->kh * a->kw;
    if (taps * (x.c / a->groups) <= (1 << 30) && taps * (a->out_c / a->groups) <= (1 << 30))
        return 0;
    base_seterr(err, "%s: layer %s: %s window too large (%d channels per group x %dx%d taps "
                "over 2^30)", what, L->name, net_kind_name(L->kind),
                x.c / a->groups > a->out_c / a->groups ? x.c / a->groups : a->out_c / a->groups,
                a->kh, a->kw);
    return -1;
}

/* Largest count a layer may have (net.h): each count is at most 2^53, so
 * a sum of two cannot overflow int64 and the totals are checked as they
 * are summed (net_finalize). */
#define COUNT_MAX ((double)NET_COUNT_MAX)

int net_layer_infer(net_layer *L, const net_shape *ins, const char *what, char *err)
{
    net_attr *a = &L->a;
    net_shape x = ins[0], y = x;
    const char *kn = net_kind_name(L->kind);
    int64_t numel_in = net_shape_numel(x);

    const net_kind_info_t *K = net_kind_info(L->kind);
    if (!K) {
        base_seterr(err, "%s: layer %s: unknown layer kind", what, L->name);
        return -1;
    }
    if (L->nin > NET_MAX_IN) {
        base_seterr(err, "%s: layer %s: %d inputs; dse handles at most %d", what, L->name, L->nin,
                    NET_MAX_IN);
        return -1;
    }
    if (L->nin < K->min_in || (K->max_in && L->nin > K->max_in)) {
        static const char *num[] = {"no", "one", "two", "three", "four"};
        if (K->min_in == K->max_in)
            base_seterr(err, "%s: layer %s: %s takes %s input%s, got %d", what, L->name, kn,
                   num[K->min_in], K->min_in == 1 ? "" : "s", L->nin);
        else
            base_seterr(err, "%s: layer %s: %s takes at least %s inputs, got %d", what, L->name, kn,
                   num[K->min_in], L->nin);
        return -1;
    }
    L->macs = L->ops = L->params = L->weights = 0;
    switch (L->kind) {
    case NET_CONV: {
        if (a->out_c <= 0 || a->kh <= 0 || a->kw <= 0 || a->sh <= 0 || a->sw <= 0 ||
            a->dh <= 0 || a->dw <= 0 || a->groups <= 0 || a->pt < 0 || a->pl < 0 ||
            a->pb < 0 || a->pr < 0) {
            base_seterr(err, "%s: layer %s: Conv needs positive out_channels, kernel, stride, "
                   "dilation, groups and non-negative pads", what, L->name);
            return -1;
        }
        if (x.c % a->groups || a->out_c % a->groups) {
            base_seterr(err, "%s: layer %s: groups %d does not divide input channels %d and "
                   "output channels %d", what, L->name, a->groups, x.c, a->out_c);
            return -1;
        }
        int oh = window_out(x.h, a->kh, a->sh, a->dh, a->pt, a->pb, 0);
        int ow = window_out(x.w, a->kw, a->sw, a->dw, a->pl, a->pr, 0);
        if (oh < 1 || ow < 1) {
            base_seterr(err, "%s: layer %s: kernel %dx%d larger than its padded input %lldx%lld",
                   what, L->name, a->kh, a->kw, (long long)x.h + a->pt + a->pb,
                   (long long)x.w + a->pl + a->pr);
            return -1;
        }
        y = (net_shape){a->out_c, oh, ow};
        if ((double)a->out_c * oh * ow * (x.c / a->groups) * a->kh * a->kw > COUNT_MAX ||
            (double)a->out_c * (x.c / a->groups) * a->kh * a->kw > COUNT_MAX) {
            base_seterr(err, "%s: layer %s: Conv too large (more than 2^53 MACs or parameters)",
                   what, L->name);
            return -1;
        }
        if (window_too_large(L, x, what, err)) return -1;
        int64_t per_out = (int64_t)(x.c / a->groups) * a->kh * a->kw;
        L->macs = (int64_t)a->out_c * oh * ow * per_out;
        L->params = (int64_t)a->out_c * per_out + (a->bias ? a->out_c : 0);
        L->weights = L->params;
        break;
    }
    case NET_DECONV: {
        /* Input pixel (iy, ix) adds W[.., ky, kx] times itself to output
         * pixel (iy sh - pt + ky dh, ix sw - pl + kx dw): the transpose of
         * Conv's window (ONNX ConvTranspose, PyTorch ConvTranspose2d). */
        if (a->out_c <= 0 || a->kh <= 0 || a->kw <= 0 || a->sh <= 0 || a->sw <= 0 ||
            a->dh <= 0 || a->dw <= 0 || a->groups <= 0 || a->pt < 0 || a->pl < 0 ||
            a->pb < 0 || a->pr < 0 || a->oph < 0 || a->opw < 0) {
            base_seterr(err, "%s: layer %s: ConvTranspose needs positive out_channels, kernel, "
                   "stride, dilation, groups and non-negative pads and output_padding", what, L->name);
            return -1;
        }
        if (x.c % a->groups || a->out_c % a->groups) {
            base_seterr(err, "%s: layer %s: groups %d does not divide input channels %d and "
                   "output channels %d", what, L->name, a->groups, x.c, a->out_c);
            return -1;
        }
        int64_t fh = (int64_t)a->sh * (x.h - 1) + (int64_t)a->dh * (a->kh - 1) + 1 + a->oph;
        int64_t fw = (int64_t)a->sw * (x.w - 1) + (int64_t)a->dw * (a->kw - 1) + 1 + a->opw;
        int64_t oh = fh - a->pt - a->pb, ow = fw - a->pl - a->pr;
        if (oh < 1 || ow < 1 || fh > INT_MAX || fw > INT_MAX) {
            base_seterr(err, "%s: layer %s: pads %d, %d, %d, %d leave no output of the %lldx%lld "
                   "transposed convolution", what, L->name, a->pt, a->pl, a->pb, a->pr,
                   (long long)fh, (long long)fw);
            return -1;
        }
        if (window_too_large(L, x, what, err)) return -1;
        int64_t per_out = (int64_t)(x.c / a->groups) * a->kh * a->kw;
        if ((double)a->out_c * per_out * x.h * x.w > COUNT_MAX ||
            (double)a->out_c * per_out > COUNT_MAX || (double)a->out_c * oh * ow > INT_MAX) {
            base_seterr(err, "%s: layer %s: ConvTranspose too large (more than 2^53 MACs or "
                   "parameters, or 2^31 outputs)", what, L->name);
            return -1;
        }
        y = (net_shape){a->out_c, (int)oh, (int)ow};
        /* Every input pixel times every weight: the product the kernel
         * runs, cropped pads included. */
        L->macs = (int64_t)a->out_c * per_out * x.h * x.w;
        L->params = (int64_t)a->out_c * per_out + (a->bias ? a->out_c : 0);
        L->weights = L->params;
        break;
    }
    case NET_FC:
        if (a->out_c <= 0) {
            base_seterr(err, "%s: layer %s: FC needs positive out_features", what, L->name);
            return -1;
        }
        if ((double)numel_in * a->out_c > COUNT_MAX) {
            base_seterr(err, "%s: layer %s: FC too large (more than 2^53 MACs)", what, L->name);
            return -1;
        }
        y = (net_shape){a->out_c, 1, 1};
        L->macs = numel_in * a->out_c;
        L->params = numel_in * a->out_c + (a->bias ? a->out_c : 0);
        L->weights = L->params;
        break;
    case NET_MAXPOOL:
    case NET_AVGPOOL: {
        if (a->kh <= 0 || a->kw <= 0 || a->sh <= 0 || a->sw <= 0 || a->pt < 0 || a->pl < 0 ||
            a->pb < 0 || a->pr < 0) {
            base_seterr(err, "%s: layer %s: %s needs positive kernel and stride, non-negative pads",
                   what, L->name, kn);
            return -1;
        }
        if (a->pt >= a->kh || a->pb >= a->kh || a->pl >= a->kw || a->pr >= a->kw) {
            base_seterr(err, "%s: layer %s: %s pads must be smaller than the kernel", what,
                   L->name, kn);
            return -1;
        }
        int oh = window_out(x.h, a->kh, a->sh, 1, a->pt, a->pb, a->ceil_mode);
        int ow = window_out(x.w, a->kw, a->sw, 1, a->pl, a->pr, a->ceil_mode);
        if (oh < 1 || ow < 1) {
            base_seterr(err, "%s: layer %s: kernel %dx%d larger than its padded input %lldx%lld",
                   what, L->name, a->kh, a->kw, (long long)x.h + a->pt + a->pb,
                   (long long)x.w + a->pl + a->pr);
            return -1;
        }
        y = (net_shape){x.c, oh, ow};
        break;
    }
    case NET_GAP:
        y = (net_shape){x.c, 1, 1};
        break;
    case NET_LRN:
        if (a->lrn_size <= 0) {
            base_seterr(err, "%s: layer %s: LRN size must be positive", what, L->name);
            return -1;
        }
        break;
    case NET_MUL: { /* elementwise, by one value per channel (C x 1 x 1) or per pixel (1 x H x W) */
        net_shape z = ins[1];
        int same = z.h == x.h && z.w == x.w;
        if (!(z.c == x.c && (same || (z.h == 1 && z.w == 1))) && !(z.c == 1 && same)) {
            base_seterr(err, "%s: layer %s: Mul of %dx%dx%d by %dx%dx%d: the second input must have "
                   "the first's shape, one value per channel (%dx1x1) or one per pixel (1x%dx%d)",
                   what, L->name, x.c, x.h, x.w, z.c, z.h, z.w, x.c, x.h, x.w);
            return -1;
        }
        break;
    }
    case NET_FLATTEN:
        y = (net_shape){(int)numel_in, 1, 1}; /* fits: every tensor has <= INT_MAX elements */
        break;
    case NET_REDUCEMEAN:
    case NET_REDUCEMAX:
        if (!a->rm_c && !a->rm_h && !a->rm_w) {
            base_seterr(err, "%s: layer %s: %s over no axis (set over_channels, over_height "
                   "or over_width)", what, L->name, net_kind_name(L->kind));
            return -1;
        }
        y = (net_shape){a->rm_c ? 1 : x.c, a->rm_h ? 1 : x.h, a->rm_w ? 1 : x.w};
        break;
    case NET_SLICE:
        if (a->start < 0 || a->out_c < 1 || (int64_t)a->start + a->out_c > x.c) {
            base_seterr(err, "%s: layer %s: Slice of channels [%d, %lld) of an input of %d channels",
                   what, L->name, a->start, (long long)a->start + a->out_c, x.c);
            return -1;
        }
        y.c = a->out_c;
        if (slice_axis(x.h, a->sl_top, a->sl_rows, a->sh, &y.h) ||
            slice_axis(x.w, a->sl_left, a->sl_cols, a->sw, &y.w)) {
            base_seterr(err, "%s: layer %s: Slice of rows %d+%d*k (%d of them) and columns "
                   "%d+%d*k (%d) of a %dx%d map", what, L->name, a->sl_top, a->sh, a->sl_rows,
                   a->sl_left, a->sw, a->sl_cols, x.h, x.w);
            return -1;
        }
        break;
    case NET_SHUFFLE:
    case NET_GROUPNORM:
        if (a->groups < 1 || x.c % a->groups) {
            base_seterr(err, "%s: layer %s: %s groups %d does not divide %d channels", what,
                   L->name, net_kind_name(L->kind), a->groups, x.c);
            return -1;
        }
        break;
    case NET_BSUM: /* output channel c = sum over k of input channel k C + c */
    case NET_BSOFTMAX:
        if (a->groups < 1 || a->card < 1 || x.c % ((int64_t)a->groups * a->card)) {
            base_seterr(err, "%s: layer %s: %s of %d branches (cardinality %d) needs a multiple of "
                        "%lld channels, got %d", what, L->name, net_kind_name(L->kind), a->groups,
                        a->card, (long long)a->groups * a->card, x.c);
            return -1;
        }
        if (L->kind == NET_BSUM) y.c = x.c / a->groups;
        if (L->kind == NET_BSOFTMAX && a->groups < 2) {
            base_seterr(err, "%s: layer %s: BranchSoftmax of %d branch: a softmax needs at least 2 "
                        "(of one it is all ones)", what, L->name, a->groups);
            return -1;
        }
        break;
    case NET_UPSAMPLE:
        if (a->up_h < 1 || a->up_w < 1) {
            base_seterr(err, "%s: layer %s: Upsample needs scale factors of at least 1 (got %d, %d)",
                   what, L->name, a->up_h, a->up_w);
            return -1;
        }
        if ((double)x.h * a->up_h > INT_MAX || (double)x.w * a->up_w > INT_MAX) {
            base_seterr(err, "%s: layer %s: Upsample of %dx%d by %d, %d is too large", what, L->name,
                   x.h, x.w, a->up_h, a->up_w);
            return -1;
        }
        y.h = x.h * a->up_h;
        y.w = x.w * a->up_w;
        break;
    case NET_SHUFFLEUP: { /* output (c, h r + i, w r + j) from input channel c r^2 + i r + j */
        int r = a->up_h;
        if (r < 1 || (double)r * r > x.c || x.c % (r * r)) {
            base_seterr(err, "%s: layer %s: PixelShuffle by %d needs a multiple of %lld channels, "
                        "got %d", what, L->name, r, (long long)r * r, x.c);
            return -1;
        }
        if ((double)x.h * r > INT_MAX || (double)x.w * r > INT_MAX) {
            base_seterr(err, "%s: layer %s: PixelShuffle of %dx%d by %d is too large", what,
                        L->name, x.h, x.w, r);
            return -1;
        }
        y = (net_shape){x.c / (r * r), x.h * r, x.w * r};
        break;
    }
    case NET_SHUFFLEDOWN: { /* its inverse: output channel c r^2 + i r + j from (c, h r + i, w r + j) */
        int r = a->up_h;
        if (r < 1 || x.h % r || x.w % r || (double)x.c * r * r > INT_MAX) {
            base_seterr(err, "%s: layer %s: PixelUnshuffle by %d of a %dx%dx%d map (its height "
                        "and width must be multiples of %d)", what, L->name, r, x.c, x.h, x.w, r);
            return -1;
        }
        y = (net_shape){x.c * r * r, x.h / r, x.w / r};
        break;
    }
    case NET_BILINEAR:
    case NET_NEAREST:
        if (a->up_h < 1 || a->up_w < 1) {
            base_seterr(err, "%s: layer %s: %s needs an output size of at least 1x1", what,
                   L->name, net_kind_name(L->kind));
            return -1;
        }
        y.h = a->up_h;
        y.w = a->up_w;
        break;
    case NET_PAD:
        if (a->pt < 0 || a->pl < 0 || a->pb < 0 || a->pr < 0) {
            base_seterr(err, "%s: layer %s: Pad needs non-negative pads", what, L->name);
            return -1;
        }
        if (a->pad_reflect && a->pad_edge) {
            base_seterr(err, "%s: layer %s: Pad cannot both reflect and repeat the edge", what,
                        L->name);
            return -1;
        }
        if (a->pad_value != 0 && (a->pad_reflect || a->pad_edge || !isfinite(a->pad_value))) {
            base_seterr(err, "%s: layer %s: Pad's value %g is for constant padding (a finite "
                        "number, neither reflect nor edge)", what, L->name, a->pad_value);
            return -1;
        }
        if (a->pad_reflect && (a->pt >= x.h || a->pb >= x.h || a->pl >= x.w || a->pr >= x.w)) {
            base_seterr(err, "%s: layer %s: reflecting pads %d, %d, %d, %d of a %dx%d map must be "
                        "smaller than the map", what, L->name, a->pt, a->pl, a->pb, a->pr, x.h, x.w);
            return -1;
        }
        if ((double)x.h + a->pt + a->pb > INT_MAX || (double)x.w + a->pl + a->pr > INT_MAX) {
            base_seterr(err, "%s: layer %s: Pad of %dx%d is too large", what, L->name, x.h, x.w);
            return -1;
        }
        y.h = x.h + a->pt + a->pb;
        y.w = x.w + a->pl + a->pr;
        break;
    case NET_CLIP:
        if (!(a->clip_lo <= a->clip_hi)) {
            base_seterr(err, "%s: layer %s: Clip with min %g above max %g", what, L->name,
                   a->clip_lo, a->clip_hi);
            return -1;
        }
        break;
    case NET_ADD:
        if (a->add_sub && L->nin != 2) {
            base_seterr(err, "%s: layer %s: Add with subtract needs two inputs, got %d", what,
                        L->name, L->nin);
            return -1;
        }
        for (int k = 1; k < L->nin; k++) {
            net_shape z = ins[k];
            if (z.c != x.c || z.h != x.h || z.w != x.w) {
                base_seterr(err, "%s: layer %s: Add of different shapes %dx%dx%d and %dx%dx%d",
                       what, L->name, x.c, x.h, x.w, z.c, z.h, z.w);
                return -1;
            }
        }
        break;
    case NET_CONCAT: {
        int64_t c = 0;
        for (int k = 0; k < L->nin; k++) {
            net_shape z = ins[k];
            if (z.h != x.h || z.w != x.w) {
                base_seterr(err, "%s: layer %s: Concat of different spatial sizes %dx%d and %dx%d",
                       what, L->name, x.h, x.w, z.h, z.w);
                return -1;
            }
            c += z.c;
        }
        y.c = c > INT_MAX ? INT_MAX : (int)c; /* too large: caught below */
        break;
    }
    default: /* every other kind: the shape of its first input (per-channel
              * weights are counted below) */
        break;
    }
    if ((double)y.c * y.h * y.w > INT_MAX) {
        base_seterr(err, "%s: layer %s: output %dx%dx%d has more than 2^31-1 elements", what,
               L->name, y.c, y.h, y.w);
        return -1;
    }
    L->out = y;
    if (K->wlayout > 0) { /* k vectors of one value per channel, p of them learnable */
        L->params = net_wparams(K->wlayout) * (int64_t)y.c;
        L->weights = net_wvecs(K->wlayout) * (int64_t)y.c;
    }
    if (!(K->flags & NET_KF_MACS)) L->ops = net_shape_numel(y);
    /* A reduction's work is what it reads, not the little it writes. */
    if (L->kind == NET_REDUCEMEAN || L->kind == NET_REDUCEMAX || L->kind == NET_GAP ||
        L->kind == NET_BSUM)
        L->ops = numel_in;
    return 0;
}

/* Infer layer i's shape and counts from its (already inferred) inputs. */
static int infer(net *n, int i, const char *what, char *err)
{
    const net_layer *L = &n->layers[i];
    net_shape few[8], *ins = L->nin <= 8 ? few : malloc((size_t)L->nin * sizeof *ins);
    if (!ins) {
        base_seterr(err, "out of memory");
        return -1;
    }
    for (int k = 0; k < L->nin; k++) ins[k] = net_in_shape(n, i, k);
    int rc = net_layer_infer(&n->layers[i], ins, what, err);
    if (ins != few) free(ins);
    return rc;
}

/* Move layers into the stable topological order perm[] and remap inputs. */
static void apply_order(net *n, const int *perm, char **pend)
{
    net_layer *nl = malloc((size_t)n->cap * sizeof *nl);
    char **np = malloc((size_t)n->cap * sizeof *np);
    int *where = malloc((size_t)n->n * sizeof *where);
    for (int k = 0; k < n->n; k++) {
        nl[k] = n->layers[perm[k]];
        np[k] = pend[perm[k]];
        where[perm[k]] = k;
    }
    for (int k = 0; k < n->n; k++)
        for (int j = 0; j < nl[k].nin; j++)
            if (nl[k].in[j] != NET_INPUT) nl[k].in[j] = where[nl[k].in[j]];
    memcpy(n->layers, nl, (size_t)n->n * sizeof *nl);
    memcpy(pend, np, (size_t)n->n * sizeof *np);
    free(nl);
    free(np);
    free(where);
}

int net_finalize(net *n, const char *what, char *err)
{
    char **pend = n->pending;
    int rc = -1, nn = n->n;
    int *perm = NULL, *done = NULL;
    if (!what) what = n->name;
    if (n->cons_first) return 0;
    if (nn == 0) {
        base_seterr(err, "%s: network has no layers", what);
        goto out;
    }
    if (n->input.c <= 0 || n->input.h <= 0 || n->input.w <= 0) {
        base_seterr(err, "%s: input %s has a non-positive dimension %dx%dx%d", what,
               n->input_name, n->input.c, n->input.h, n->input.w);
        goto out;
    }
    if ((double)n->input.c * n->input.h * n->input.w > INT_MAX) {
        base_seterr(err, "%s: input %s %dx%dx%d has more than 2^31-1 elements", what,
               n->input_name, n->input.c, n->input.h, n->input.w);
        goto out;
    }
    /* Names unique and distinct from the input's. */
    for (int i = 0; i < nn; i++) {
        if (!n->layers[i].name[0]) {
            base_seterr(err, "%s: layer %d has an empty name", what, i);
            goto out;
        }
        if (strcmp(n->layers[i].name, n->input_name) == 0) {
            base_seterr(err, "%s: layer %s has the same name as the network input", what,
                   n->layers[i].name);
            goto out;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(n->layers[i].name, n->layers[j].name) == 0) {
                base_seterr(err, "%s: duplicate layer name %s", what, n->layers[i].name);
                goto out;
            }
    }
    /* Resolve input names. */
    for (int i = 0; i < nn; i++) {
        const char *p = pend[i];
        net_layer *L = &n->layers[i];
        if (L->nin < 1) {
            base_seterr(err, "%s: layer %s has no inputs", what, L->name);
            goto out;
        }
        for (int k = 0; k < L->nin; k++, p += strlen(p) + 1) {
            if (strcmp(p, n->input_name) == 0) {
                L->in[k] = NET_INPUT;
                continue;
            }
            int j = net_find(n, p);
            if (j < 0) {
                base_seterr(err, "%s: layer %s: input %s is not a layer or the network input",
                       what, L->name, p);
                goto out;
            }
            if (j == i) {
                base_seterr(err, "%s: layer %s: input is itself (cycle)", what, L->name);
                goto out;
            }
            L->in[k] = j;
        }
    }
    /* Stable topological order: repeatedly take the first ready layer. */
    perm = malloc((size_t)(unsigned)nn * sizeof *perm);
    done = calloc((size_t)(unsigned)nn, sizeof *done);
    if (!perm || !done) {
        base_seterr(err, "out of memory");
        goto out;
    }
    for (int k = 0; k < nn; k++) {
        int pick = -1;
        for (int i = 0; i < nn && pick < 0; i++) {
            if (done[i]) continue;
            int ready = 1;
            for (int j = 0; j < n->layers[i].nin && ready; j++) {
                int p = n->layers[i].in[j];
                if (p != NET_INPUT && !done[p]) ready = 0;
            }
            if (ready) pick = i;
        }
        if (pick < 0) {
            /* Every layer left has an input left: walking back along such
             * inputs nn times from any of them ends on a cycle. */
            int c = 0;
            while (done[c]) c++;
            for (int step = 0; step < nn; step++) {
                const net_layer *L = &n->layers[c];
                for (int j = 0; j < L->nin; j++)
                    if (L->in[j] != NET_INPUT && !done[L->in[j]]) {
                        c = L->in[j];
                        break;
                    }
            }
            base_seterr(err, "%s: layer %s is part of a cycle", what, n->layers[c].name);
            goto out;
        }
        done[pick] = 1;
        perm[k] = pick;
    }
    apply_order(n, perm, pend);
    /* Shapes and counts. */
    for (int i = 0; i < nn; i++)
        if (infer(n, i, what, err)) goto out;
    /* Totals within NET_COUNT_MAX: every later sum (net_total, the cost
     * model, the weights file's size in bytes) stays exact and finite. */
    int64_t tot[4] = {0, 0, 0, 0};
    static const char *const tname[4] = {"MACs", "elementwise ops", "parameters", "weights"};
    for (int i = 0; i < nn; i++) {
        const net_layer *L = &n->layers[i];
        int64_t v[4] = {L->macs, L->ops, L->params, L->weights};
        for (int k = 0; k < 4; k++)
            if ((tot[k] += v[k]) > NET_COUNT_MAX) {
                base_seterr(err, "%s: network has more than 2^53 %s in all (at layer %s)", what,
                            tname[k], L->name);
                goto out;
            }
    }
    /* Consumers (CSR, slot 0 = network input) and the single-output rule. */
    int *cf = calloc((size_t)nn + 2, sizeof *cf);
    int total = 0;
    for (int i = 0; i < nn; i++) total += n->layers[i].nin;
    int *cs = malloc((size_t)(total ? total : 1) * sizeof *cs);
    if (!cf || !cs) {
        free(cf);
        free(cs);
        base_seterr(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < nn; i++)
        for (int k = 0; k < n->layers[i].nin; k++) cf[n->layers[i].in[k] + 2]++;
    for (int i = 1; i < nn + 2; i++) cf[i] += cf[i - 1];
    int *fill = calloc((size_t)nn + 1, sizeof *fill);
    for (int i = 0; i < nn; i++)
        for (int k = 0; k < n->layers[i].nin; k++) {
            int p = n->layers[i].in[k] + 1;
            /* A layer reading the same tensor twice (Add(x, x)) is one consumer. */
            int dup = 0;
            for (int q = cf[p]; q < cf[p] + fill[p]; q++)
                if (cs[q] == i) dup = 1;
            if (!dup) cs[cf[p] + fill[p]++] = i;
        }
    /* Compact away duplicate slots. */
    int w = 0;
    for (int p = 0; p < nn + 1; p++) {
        int start = cf[p];
        cf[p] = w;
        for (int q = 0; q < fill[p]; q++) cs[w++] = cs[start + q];
    }
    cf[nn + 1] = w;
    free(fill);
    n->cons_first = cf;
    n->cons = cs;
    int sinks = 0, first_sink = -1;
    for (int i = 0; i < nn; i++)
        if (net_ncons(n, i) == 0) {
            sinks++;
            if (first_sink < 0) first_sink = i;
        }
    if (sinks != 1) {
        base_seterr(err, "%s: network has %d outputs (layers without consumers, first %s); "
               "dse needs exactly one", what, sinks, n->layers[first_sink].name);
        free(n->cons_first);
        free(n->cons);
        n->cons_first = NULL;
        n->cons = NULL;
        goto out;
    }
    for (int i = 0; i < nn; i++) free(pend[i]);
    free(pend);
    n->pending = NULL;
    rc = 0;
out:
    free(perm);
    free(done);
    return rc;
}

net_totals net_total(const net *n, int split_mask)
{
    net_totals t = {0, 0, 0, 0, 0};
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        t.macs += L->macs;
        t.ops += L->ops;
        t.params += L->params;
        t.weights += L->weights;
        if (net_split_has(split_mask, L->kind)) t.nsplittable++;
    }
    return t;
}

int64_t net_slice_macs(const net *n, int i, int c0, int nc)
{
    const net_layer *L = &n->layers[i];
    (void)c0;
    return L->out.c ? L->macs / L->out.c * nc : 0;
}

int64_t net_slice_ops(const net *n, int i, int c0, int nc)
{
    const net_layer *L = &n->layers[i];
    if (!L->out.c) return 0;
    /* A GroupNorm slice makes two of its kernel's three passes (mean,
     * variance) over every channel of the groups it touches, inside a
     * group too (net_chans_in), and the third over its own channels. */
    if (L->kind == NET_GROUPNORM && nc < L->out.c) {
        int a0, a1;
        net_chans_in(n, i, 0, c0, c0 + nc, &a0, &a1);
        return L->ops / L->out.c * (2 * (int64_t)(a1 - a0) + nc) / 3;
    }
    return L->ops / L->out.c * nc;
}

int64_t net_slice_weights(const net *n, int i, int c0, int nc)
{
    const net_layer *L = &n->layers[i];
    (void)c0;
    return L->out.c ? L->weights / L->out.c * nc : 0;
}

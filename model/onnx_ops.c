/* onnx_ops.c -- one handler per ONNX operator: each reads the current
 * node (I->nd) through the helpers of onnx_impl.h and either defines its
 * output as a new layer spec, as an alias of an existing tensor, or as a
 * constant; ox_import_node dispatches on the operator type.
 *
 * Invariant: a handler accepts a node only if every attribute is one it
 * understands and every input is what dse computes (float32 activations
 * of rank 2 or 4, constant weights); anything else is one error line
 * (ox_fail) naming the node and the reason.  docs/onnx.md is the table.
 */
#include "onnx_impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An int attribute of node nd, or def. */
static int64_t node_int(const Onnx__NodeProto *nd, const char *name, int64_t def)
{
    const Onnx__AttributeProto *a = ox_att(nd, name);
    return a ? a->i : def;
}

/* Whether every node that reads tensor `name` is a Conv or an AveragePool
 * that takes a Pad's zeros into its own padding (fold_pad): no auto_pad,
 * and for AveragePool no ceil_mode and no uncounted pads of its own (what
 * op_pool refuses to fold). */
static int read_by_windows_only(ox_imp *I, const char *name)
{
    for (size_t i = 0; i < I->g->n_node; i++) {
        const Onnx__NodeProto *nd = I->g->node[i];
        for (size_t k = 0; k < nd->n_input; k++) {
            if (!nd->input[k] || strcmp(nd->input[k], name)) continue;
            int conv = nd->op_type && !strcmp(nd->op_type, "Conv");
            int avg = nd->op_type && !strcmp(nd->op_type, "AveragePool");
            if (!conv && !avg) return 0;
            const Onnx__AttributeProto *ap = ox_att(nd, "auto_pad"), *pads = ox_att(nd, "pads");
            if (ap && !(ap->s.len == 6 && !memcmp(ap->s.data, "NOTSET", 6))) return 0;
            int own = 0;
            for (size_t q = 0; pads && q < pads->n_ints; q++) own |= pads->ints[q] != 0;
            if (avg && (node_int(nd, "ceil_mode", 0) || (own && !node_int(nd, "count_include_pad", 0))))
                return 0;
        }
    }
    for (size_t k = 0; k < I->g->n_output; k++)
        if (I->g->output[k]->name && !strcmp(I->g->output[k]->name, name)) return 0;
    return 1;
}

static int channel_slice(ox_imp *I, int out, int x, int64_t c0, int64_t nc, const int64_t *box,
                         int single);

/* Pad with zeros on H and W only.  Read only by Conv or AveragePool: no
 * layer, the padding travels with the tensor into theirs (fold_pad); read
 * by anything else (a MaxPool, which pads with -inf: YOLO's ZeroPad2d): a
 * Pad layer.  Negative pads on H and W alone crop: a Slice. */
static int op_pad(ox_imp *I)
{
    int old = I->opset < 11;
    if (ox_check_attrs(I, old ? "mode pads value" : "mode")) return -1;
    int x = ox_in_act(I, 0), mode, n = 0;
    if (x < 0) return -1;
    if (ox_att_choice(I, "mode", "constant reflect edge wrap", &mode)) return -1;
    if (mode == 3) return ox_fail(I, "wrap padding is unsupported (constant, reflect and edge are)");
    int64_t v[8];
    double value = 0;
    if (old) {
        const Onnx__AttributeProto *a = ox_att(I->nd, "pads");
        if (!a || a->n_ints > 8) return ox_fail(I, "attribute pads is required (at most 8 values)");
        n = (int)a->n_ints;
        for (int k = 0; k < n; k++) v[k] = a->ints[k];
        if (ox_att_float(I, "value", 0, &value)) return -1;
    } else {
        int bad, has;
        const Onnx__TensorProto *pt = ox_in_const(I, 1, 1, &bad);
        if (bad || ox_tp_ints(ox_dc(I, "pads", ox_in_name(I, 1)), pt, v, 8, &n)) return -1;
        if (ox_const_scalar(I, 2, "constant_value", &has, &value)) return -1;
        if (ox_in_count(I) > 3) return ox_fail(I, "the axes input is unsupported");
    }
    int r = I->t[x].rank;
    if (n != 2 * r) return ox_fail(I, "%d pads for a %d-D tensor", n, r);
    if (value != 0 && mode == 0 && !isfinite(value))
        return ox_fail(I, "padding with %g: dse pads with finite values", value);
    int crop = 0, grow = 0;
    for (int k = 0; k < n; k++) {
        if (v[k] < -OX_ATTR_MAX || v[k] > OX_ATTR_MAX)
            return ox_fail(I, "pad %lld out of range", (long long)v[k]);
        crop |= v[k] < 0, grow |= v[k] > 0;
    }
    if (crop) { /* negative pads remove rows and columns (F.pad's crop): a Slice */
        net_shape xs = I->t[x].shape;
        if (grow || r != 4 || v[0] || v[1] || v[4] || v[5])
            return ox_fail(I, "pads [%lld, %lld, %lld, %lld] both crop and pad, or crop the batch "
                           "or channel axis: dse crops only rows and columns, and only with pads <= 0",
                           (long long)v[2], (long long)v[3], (long long)v[6], (long long)v[7]);
        int64_t box[6] = {-v[2], xs.h + v[2] + v[6], 1, -v[3], xs.w + v[3] + v[7], 1};
        if (box[1] < 1 || box[4] < 1)
            return ox_fail(I, "pads [%lld, %lld, %lld, %lld] crop all of a %dx%d map", (long long)v[2],
                           (long long)v[3], (long long)v[6], (long long)v[7], xs.h, xs.w);
        return channel_slice(I, 0, x, 0, xs.c, box, 1);
    }
    int spatial = r == 4 ? (int)(v[2] | v[3] | v[6] | v[7]) : 0;
    if (v[0] || v[1] || v[r] || v[r + 1])
        return ox_fail(I, "padding the batch or channel axis is unsupported");
    if (I->nd->n_output < 1 || !I->nd->output[0] || !I->nd->output[0][0])
        return ox_fail(I, "has no output 0");
    if (spatial && (mode || (value != 0 && mode == 0) || !read_by_windows_only(I, I->nd->output[0]))) {
        /* reflect, edge and non-zero padding are never a window's zeros: a layer */
        net_attr a = net_attr_default(NET_PAD);
        a.pt = (int)v[2], a.pl = (int)v[3], a.pb = (int)v[6], a.pr = (int)v[7];
        a.pad_reflect = mode == 1, a.pad_edge = mode == 2;
        a.pad_value = mode == 0 ? value : 0;
        return ox_new_spec(I, NET_PAD, &a, 1, &x, 4) ? 0 : -1;
    }
    if (ox_alias(I, x, 0, 0)) return -1;
    if (spatial) {
        int *p = I->t[ox_smap_get(&I->tmap, I->nd->output[0])].pad;
        int64_t sum[4] = {p[0] + v[2], p[1] + v[3], p[2] + v[6], p[3] + v[7]};
        for (int k = 0; k < 4; k++)
            if (sum[k] > OX_ATTR_MAX) return ox_fail(I, "padding out of range");
        p[0] = (int)sum[0], p[1] = (int)sum[1], p[2] = (int)sum[2], p[3] = (int)sum[3];
    }
    return 0;
}

/* Conv's and ConvTranspose's 4-D weight: every dimension a positive int,
 * its last two the kernel (which kernel_shape, when given, must equal). */
static int conv_kernel(ox_imp *I, const Onnx__TensorProto *W, net_attr *a)
{
    for (int i = 0; i < 4; i++)
        if (W->dims[i] < 1 || W->dims[i] > INT32_MAX)
            return ox_fail(I, "weight %.100s has dimension %lld", ox_in_name(I, 1), (long long)W->dims[i]);
    if (ox_att(I->nd, "kernel_shape") && (a->kh != W->dims[2] || a->kw != W->dims[3]))
        return ox_fail(I, "kernel_shape %dx%d but weight %.100s is %lldx%lld", a->kh, a->kw,
                       ox_in_name(I, 1), (long long)W->dims[2], (long long)W->dims[3]);
    a->kh = (int)W->dims[2], a->kw = (int)W->dims[3];
    return 0;
}

/* Their bias, input 2: one value per output channel, after the weights. */
static int conv_bias(ox_imp *I, ox_spec *s, const Onnx__TensorProto *B, int out_c)
{
    int64_t n;
    int bad;
    float *w = ox_const_floats(I, B, "bias", 2, I->keep, &n, &bad);
    if (bad) return -1;
    if (B->n_dims != 1 || n != out_c) {
        free(w);
        if (B->n_dims != 1)
            return ox_fail(I, "bias %.100s has %d dimensions, not 1", ox_in_name(I, 2),
                           (int)B->n_dims);
        return ox_fail(I, "bias %.100s has %lld values, the weight has %d output channels",
                       ox_in_name(I, 2), (long long)n, out_c);
    }
    int rc = ox_spec_append(I, s, w, n);
    free(w);
    return rc;
}

static int op_conv(ox_imp *I)
{
    if (ox_check_attrs(I, "auto_pad dilations group kernel_shape pads strides")) return -1;
    int x = ox_in_act(I, 0), bad;
    if (x < 0 || ox_act_rank(I, x, 4, "input")) return -1;
    const Onnx__TensorProto *W = ox_in_const(I, 1, 1, &bad), *B;
    if (bad) return -1;
    B = ox_in_const(I, 2, 0, &bad);
    if (bad) return -1;
    if (W->n_dims != 4)
        return ox_fail(I, "weight %.100s is %zu-D; a 2-D convolution has a 4-D weight", ox_in_name(I, 1),
                     W->n_dims);
    net_attr a = net_attr_default(NET_CONV);
    int64_t g;
    int autopad;
    if (ox_window_attrs(I, &a, &autopad, 0) || ox_att_int(I, "group", 1, &g)) return -1;
    if (g < 1 || g > OX_ATTR_MAX) return ox_fail(I, "group %lld out of range", (long long)g);
    a.groups = (int)g;
    if (conv_kernel(I, W, &a)) return -1;
    a.out_c = (int)W->dims[0];
    if (autopad) ox_same_guess(&a, autopad);
    if (ox_fold_pad(I, x, &a, autopad)) return -1;
    a.bias = B != NULL;
    ox_spec *s = ox_new_spec(I, NET_CONV, &a, 1, &x, 4);
    if (!s) return -1;
    s->autopad = autopad;
    s->bias_open = B == NULL; /* a constant added or subtracted next is its bias */
    int64_t n;
    float *w = ox_const_floats(I, W, "weight", 1, I->keep, &n, &bad);
    if (bad || ox_spec_append(I, s, w, n)) return free(w), -1;
    free(w);
    return B ? conv_bias(I, s, B, a.out_c) : 0;
}

/* ConvTranspose: a ConvTranspose layer.  ONNX's weight [in_c][out_c/group]
 * [kh][kw] becomes ours, w[out_c][kh][kw][in_c/group] (kernels.h);
 * output_shape, where given, sets the pads by ONNX's rule (and, when it
 * asks for more than the whole transposed convolution, output padding). */
static int op_deconv(ox_imp *I)
{
    if (ox_check_attrs(I, "auto_pad dilations group kernel_shape output_padding output_shape "
                          "pads strides"))
        return -1;
    int x = ox_in_act(I, 0), bad;
    if (x < 0 || ox_act_rank(I, x, 4, "input")) return -1;
    const Onnx__TensorProto *W = ox_in_const(I, 1, 1, &bad), *B;
    if (bad) return -1;
    B = ox_in_const(I, 2, 0, &bad);
    if (bad) return -1;
    if (W->n_dims != 4)
        return ox_fail(I, "weight %.100s is %zu-D; a 2-D transposed convolution has a 4-D weight",
                       ox_in_name(I, 1), W->n_dims);

    net_attr a = net_attr_default(NET_DECONV);
    int64_t g;
    int autopad, op[2], os[2], has_op, has_os;
    if (ox_window_attrs(I, &a, &autopad, 0) || ox_att_int(I, "group", 1, &g) ||
        ox_att_ints(I, "output_padding", 2, 0, op, &has_op))
        return -1;
    /* output_shape is spatial ([H, W]); some converters write [N, C, H, W]. */
    const Onnx__AttributeProto *aos = ox_att(I->nd, "output_shape");
    int64_t os_c = -1; /* [N, C, H, W]'s C, checked against the weight below */
    if (aos && aos->n_ints == 4) {
        has_os = 1;
        if (aos->ints[0] != 1)
            return ox_fail(I, "output_shape's batch %lld is not 1", (long long)aos->ints[0]);
        if (aos->ints[1] < 1 || aos->ints[1] > OX_ATTR_MAX)
            return ox_fail(I, "output_shape's channels %lld out of range", (long long)aos->ints[1]);
        os_c = aos->ints[1];
        for (int i = 0; i < 2; i++) {
            if (aos->ints[2 + i] < 1 || aos->ints[2 + i] > OX_ATTR_MAX)
                return ox_fail(I, "attribute output_shape value %lld out of range",
                               (long long)aos->ints[2 + i]);
            os[i] = (int)aos->ints[2 + i];
        }
    } else if (ox_att_ints(I, "output_shape", 2, 1, os, &has_os)) {
        return -1;
    }
    const Onnx__AttributeProto *apa = ox_att(I->nd, "auto_pad");
    int valid = apa && apa->s.len == 5 && !memcmp(apa->s.data, "VALID", 5);
    if (g < 1 || g > OX_ATTR_MAX) return ox_fail(I, "group %lld out of range", (long long)g);
    a.groups = (int)g;
    net_shape xs = I->t[x].shape;
    if (conv_kernel(I, W, &a)) return -1;
    if (W->dims[0] != xs.c)
        return ox_fail(I, "weight %.100s has %lld input channels, the input has %d",
                       ox_in_name(I, 1), (long long)W->dims[0], xs.c);
    if (xs.c % a.groups || (int64_t)W->dims[1] * a.groups > OX_ATTR_MAX)
        return ox_fail(I, "group %d does not divide the input's %d channels, or too many outputs",
                       a.groups, xs.c);
    a.out_c = (int)W->dims[1] * a.groups;
    if (os_c >= 0 && os_c != a.out_c)
        return ox_fail(I, "output_shape has %lld channels, the weight gives %d", (long long)os_c,
                       a.out_c);
    if (has_op) a.oph = op[0], a.opw = op[1];
    if (autopad || has_os) {
        /* The pads that give the output shape asked for: SAME's is the input
         * times the stride; ONNX splits the total with the odd one at the
         * end under SAME_UPPER, at the start otherwise. */
        if (valid) return ox_fail(I, "auto_pad VALID with output_shape");
        int64_t in[2] = {xs.h, xs.w}, st[2] = {a.sh, a.sw}, k[2] = {a.kh, a.kw},
                d[2] = {a.dh, a.dw}, opd[2] = {a.oph, a.opw}, beg[2], end[2];
        for (int i = 0; i < 2; i++) {
            int64_t want = has_os ? os[i] : in[i] * st[i];
            int64_t total = st[i] * (in[i] - 1) + opd[i] + (k[i] - 1) * d[i] + 1 - want;
            if (total < 0) { /* more than the whole: rows only the bias reaches, at the end */
                beg[i] = 0, end[i] = 0, opd[i] -= total;
            } else {
                beg[i] = autopad == 1 ? total / 2 : total - total / 2;
                end[i] = total - beg[i];
            }
            if (opd[i] > OX_ATTR_MAX) return ox_fail(I, "output_shape out of range");
        }
        a.pt = (int)beg[0], a.pb = (int)end[0], a.pl = (int)beg[1], a.pr = (int)end[1];
        a.oph = (int)opd[0], a.opw = (int)opd[1];
    }
    a.bias = B != NULL;
    ox_spec *s = ox_new_spec(I, NET_DECONV, &a, 1, &x, 4);
    if (!s) return -1;
    int64_t n;
    float *w = ox_const_floats(I, W, "weight", 1, I->keep, &n, &bad);
    if (bad) return -1;
    if (I->keep) {
        int cin_g = xs.c / a.groups, cout_g = a.out_c / a.groups, kk = a.kh * a.kw;
        float *t = malloc((size_t)n * sizeof *t + 1);
        if (!t) return free(w), ox_fail(I, "out of memory");
        for (int o = 0; o < a.out_c; o++) {
            int gi = o / cout_g, j = o % cout_g;
            for (int q = 0; q < kk; q++)
                for (int c = 0; c < cin_g; c++)
                    t[((size_t)o * kk + q) * cin_g + c] =
                        w[(((size_t)gi * cin_g + c) * cout_g + j) * kk + q];
        }
        free(w);
        w = t;
    }
    if (ox_spec_append(I, s, w, n)) return free(w), -1;
    free(w);
    return B ? conv_bias(I, s, B, a.out_c) : 0;
}

/* InstanceNormalization: an InstanceNorm layer; scale and B one value per
 * channel (1-D [C], as the operator defines them). */
static int op_instnorm(ox_imp *I)
{
    int handled, rc = ox_op_instnorm_grouped(I, &handled);
    if (rc || handled) return rc;
    if (ox_check_attrs(I, "epsilon")) return -1;
    int x = ox_in_act(I, 0), bad;
    if (x < 0 || ox_act_rank(I, x, 4, "input")) return -1;
    double eps;
    if (ox_att_float(I, "epsilon", 1e-5, &eps)) return -1;
    if (!(eps >= 0)) return ox_fail(I, "epsilon must be non-negative");
    int C = I->t[x].shape.c;
    const Onnx__TensorProto *tp[2];
    for (int k = 0; k < 2; k++) {
        tp[k] = ox_in_const(I, (size_t)k + 1, 1, &bad);
        if (bad) return -1;
        if (tp[k]->n_dims != 1 || tp[k]->dims[0] != C)
            return ox_fail(I, "%s %.100s must be one value per channel ([%d])", k ? "B" : "scale",
                           ox_in_name(I, (size_t)k + 1), C);
    }
    net_attr a = net_attr_default(NET_INSTNORM);
    a.bn_eps = eps;
    ox_spec *s = ox_new_spec(I, NET_INSTNORM, &a, 1, &x, 4);
    if (!s) return -1;
    for (int k = 0; k < 2; k++) {
        int64_t n;
        float *w = ox_const_floats(I, tp[k], k ? "B" : "scale", (size_t)k + 1, I->keep, &n, &bad);
        if (bad || ox_spec_append(I, s, w, n)) return free(w), -1;
        free(w);
    }
    return 0;
}

/* SpaceToDepth: a PixelUnshuffle layer in its order, output channel
 * (i r + j) C + c (DCR; torch.onnx writes pixel_unshuffle as a 6-D Reshape,
 * Transpose, Reshape: onnx_fuse.c). */
static int op_spacetodepth(ox_imp *I)
{
    if (ox_check_attrs(I, "blocksize")) return -1;
    int x = ox_in_act(I, 0);
    if (x < 0 || ox_act_rank(I, x, 4, "input")) return -1;
    int64_t bs;
    if (!ox_att(I->nd, "blocksize")) return ox_fail(I, "attribute blocksize is required");
    if (ox_att_int(I, "blocksize", 1, &bs)) return -1;
    net_shape s = I->t[x].shape;
    if (bs < 1 || bs > 4096 || s.h % bs || s.w % bs)
        return ox_fail(I, "blocksize %lld of a %dx%d map (it must divide both)", (long long)bs, s.h, s.w);
    net_attr a = net_attr_default(NET_SHUFFLEDOWN);
    a.up_h = (int)bs;
    a.ps_dcr = bs > 1; /* by 1 both orders are the identity: PyTorch's, as a network file leaves it */
    return ox_new_spec(I, NET_SHUFFLEDOWN, &a, 1, &x, 4) ? 0 : -1;
}

/* DepthToSpace: a PixelShuffle layer (mode DCR, the default, or CRD,
 * which torch.onnx writes for pixel_shuffle). */
static int op_depthtospace(ox_imp *I)
{
    if (ox_check_attrs(I, "blocksize mode")) return -1;
    int x = ox_in_act(I, 0), mode;
    if (x < 0 || ox_act_rank(I, x, 4, "input")) return -1;
    int64_t bs;
    if (!ox_att(I->nd, "blocksize")) return ox_fail(I, "attribute blocksize is required");
    if (ox_att_int(I, "blocksize", 1, &bs) || ox_att_choice(I, "mode", "DCR CRD", &mode)) return -1;
    if (bs < 1 || bs > 4096) return ox_fail(I, "blocksize %lld out of range", (long long)bs);
    net_attr a = net_attr_default(NET_SHUFFLEUP);
    a.up_h = (int)bs; /* the factor, both ways (up_w stays 1, as a network file leaves it) */
    a.ps_dcr = mode == 0;
    return ox_new_spec(I, NET_SHUFFLEUP, &a, 1, &x, 4) ? 0 : -1;
}

static int op_pool(ox_imp *I, net_kind kind)
{
    int mp = kind == NET_MAXPOOL;
    if (ox_check_attrs(I, mp ? "auto_pad ceil_mode dilations kernel_shape pads storage_order strides"
                          : "auto_pad ceil_mode count_include_pad kernel_shape pads strides"))
        return -1;
    int x = ox_in_act(I, 0);
    if (x < 0 || ox_act_rank(I, x, 4, "input")) return -1;
    net_attr a = net_attr_default(kind);
    int autopad;
    int64_t ceil, cip = 0;
    if (ox_window_attrs(I, &a, &autopad, 1) || ox_att_int(I, "ceil_mode", 0, &ceil) ||
        (!mp && ox_att_int(I, "count_include_pad", 0, &cip)))
        return -1;
    if ((ceil != 0 && ceil != 1) || (cip != 0 && cip != 1))
        return ox_fail(I, "ceil_mode and count_include_pad must be 0 or 1");
    if (autopad) ox_same_guess(&a, autopad);
    a.ceil_mode = autopad ? 0 : (int)ceil;
    a.count_include_pad = (int)cip;
    const int *zp = I->t[x].pad;
    if (zp[0] | zp[1] | zp[2] | zp[3]) {
        /* Zeros padded in, then averaged over the whole window: that is
         * count_include_pad, provided the pool adds no padding of its own
         * that it would not count. */
        if (ceil || (!cip && (a.pt | a.pl | a.pb | a.pr)))
            return ox_fail(I, "a Pad before an AveragePool with ceil_mode or uncounted pads of "
                         "its own is unsupported");
        a.count_include_pad = 1;
    }
    if (ox_fold_pad(I, x, &a, autopad)) return -1;
    ox_spec *s = ox_new_spec(I, kind, &a, 1, &x, 4);
    if (!s) return -1;
    s->autopad = autopad;
    return 0;
}

static int op_simple(ox_imp *I, net_kind kind, const char *attrs, int rank4)
{
    if (ox_check_attrs(I, attrs)) return -1;
    int x = ox_in_act(I, 0);
    if (x < 0 || (rank4 && ox_act_rank(I, x, 4, "input"))) return -1;
    return ox_new_spec(I, kind, NULL, 1, &x, I->t[x].rank) ? 0 : -1;
}

static int op_lrn(ox_imp *I)
{
    if (ox_check_attrs(I, "alpha beta bias size")) return -1;
    int x = ox_in_act(I, 0);
    if (x < 0 || ox_act_rank(I, x, 4, "input")) return -1;
    net_attr a = net_attr_default(NET_LRN);
    int64_t size;
    if (!ox_att(I->nd, "size")) return ox_fail(I, "attribute size is required");
    if (ox_att_int(I, "size", 0, &size) || ox_att_float(I, "alpha", 1e-4, &a.lrn_alpha) ||
        ox_att_float(I, "beta", 0.75, &a.lrn_beta) || ox_att_float(I, "bias", 1.0, &a.lrn_k))
        return -1;
    if (size < 1 || size > OX_ATTR_MAX) return ox_fail(I, "size %lld out of range", (long long)size);
    a.lrn_size = (int)size;
    return ox_new_spec(I, NET_LRN, &a, 1, &x, 4) ? 0 : -1;
}

static int op_bn(ox_imp *I)
{
    if (ox_check_attrs(I, "epsilon momentum training_mode spatial is_test consumed_inputs")) return -1;
    int64_t tm, spatial;
    net_attr a = net_attr_default(NET_BN);
    if (ox_att_int(I, "training_mode", 0, &tm) || ox_att_int(I, "spatial", 1, &spatial) ||
        ox_att_float(I, "epsilon", 1e-5, &a.bn_eps))
        return -1;
    if (tm) return ox_fail(I, "training_mode=1: dse imports inference graphs only");
    if (spatial != 1) return ox_fail(I, "spatial=0 (per-activation statistics) is unsupported");
    if (!(a.bn_eps >= 0)) return ox_fail(I, "epsilon must be non-negative");
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    static const char *role[4] = {"scale", "shift", "mean", "variance"};
    const Onnx__TensorProto *p[4];
    for (int k = 0; k < 4; k++) {
        int bad;
        p[k] = ox_in_const(I, (size_t)k + 1, 1, &bad);
        if (bad) return -1;
    }
    ox_spec *s = ox_new_spec(I, NET_BN, &a, 1, &x, I->t[x].rank);
    if (!s) return -1;
    int64_t c0 = -1;
    for (int k = 0; k < 4; k++) {
        int64_t n;
        int bad;
        float *v = ox_const_floats(I, p[k], role[k], (size_t)k + 1, I->keep, &n, &bad);
        if (bad) return -1;
        if (p[k]->n_dims != 1 || (c0 >= 0 && n != c0)) {
            free(v);
            return ox_fail(I, "%s %.100s must be a vector of one value per channel", role[k],
                         ox_in_name(I, (size_t)k + 1));
        }
        c0 = n;
        if (ox_spec_append(I, s, v, n)) return free(v), -1;
        free(v);
    }
    return 0;
}

static int op_clip(ox_imp *I)
{
    int handled, rc = ox_op_clip_norm(I, &handled);
    if (handled) return rc;
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    double lo = -INFINITY, hi = INFINITY;
    if (I->opset < 11) {
        if (ox_check_attrs(I, "min max consumed_inputs") || ox_att_float(I, "min", -FLT_MAX, &lo) ||
            ox_att_float(I, "max", FLT_MAX, &hi))
            return -1;
        if (ox_in_count(I) > 1) return ox_fail(I, "min/max inputs need opset 11 or later");
    } else {
        int has;
        if (ox_check_attrs(I, "") || ox_const_scalar(I, 1, "min", &has, &lo)) return -1;
        if (!has) lo = -INFINITY;
        if (ox_const_scalar(I, 2, "max", &has, &hi)) return -1;
        if (!has) hi = INFINITY;
    }
    if (!(lo <= hi)) return ox_fail(I, "Clip with min %g above max %g", lo, hi);
    if (lo == 0 && hi > 0) { /* a ReLU (ReLU6 with max 6), as every reader of ReLU expects */
        net_attr a = net_attr_default(NET_RELU);
        a.relu_max = hi >= FLT_MAX ? 0 : hi;
        return ox_new_spec(I, NET_RELU, &a, 1, &x, I->t[x].rank) ? 0 : -1;
    }
    net_attr a = net_attr_default(NET_CLIP);
    a.clip_lo = lo < -FLT_MAX ? -FLT_MAX : lo;
    a.clip_hi = hi > FLT_MAX ? FLT_MAX : hi;
    return ox_new_spec(I, NET_CLIP, &a, 1, &x, I->t[x].rank) ? 0 : -1;
}

/* LeakyRelu and Elu: one attribute, alpha (ONNX's defaults 0.01 and 1). */
static int op_alpha(ox_imp *I, net_kind kind)
{
    net_attr a = net_attr_default(kind);
    if (ox_check_attrs(I, "alpha consumed_inputs") || ox_att_float(I, "alpha", a.act_alpha, &a.act_alpha))
        return -1;
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    return ox_new_spec(I, kind, &a, 1, &x, I->t[x].rank) ? 0 : -1;
}

/* PRelu: the slope a constant of one value, or one per channel broadcast
 * over the rest ([C], [C,1,1], [1,C,1,1]; [C] for a flat [1,C] input). */
static int op_prelu(ox_imp *I)
{
    if (ox_check_attrs(I, "")) return -1;
    int x = ox_in_act(I, 0), bad;
    if (x < 0) return -1;
    const Onnx__TensorProto *p = ox_in_const(I, 1, 1, &bad);
    if (!p) return -1;
    int64_t C = I->t[x].shape.c, per = 1;
    if (I->t[x].rank == 2) C = net_shape_numel(I->t[x].shape);
    int chan = -1; /* the axis of p that holds the channels, by ONNX's right-aligned broadcast */
    int r = I->t[x].rank, pr = (int)p->n_dims;
    /* Before opset 7 a slope of C values is per channel whatever its rank
     * (PyTorch's old exports write [C] for an NCHW input). */
    int legacy = I->opset < 7 && pr == 1 && p->dims[0] == C;
    if (legacy) per = C;
    for (int k = 0; k < pr && !legacy; k++) {
        int axis = r - pr + k; /* of the input */
        if (p->dims[k] == 1) continue;
        if (axis == 1 && p->dims[k] == C && chan < 0) chan = k, per = C;
        else return ox_fail(I, "slope %.100s has a shape dse does not broadcast (one value, or one "
                            "per channel)", ox_in_name(I, 1));
    }
    if (pr > r) return ox_fail(I, "slope %.100s has more axes than the input", ox_in_name(I, 1));
    int64_t n;
    float *v = ox_const_floats(I, p, "slope", 1, I->keep, &n, &bad);
    if (bad) return -1;
    if (n != per) {
        free(v);
        return ox_fail(I, "slope %.100s has %lld values, %lld expected", ox_in_name(I, 1),
                       (long long)n, (long long)per);
    }
    ox_spec *s = ox_new_spec(I, NET_PRELU, NULL, 1, &x, I->t[x].rank);
    if (!s) return free(v), -1;
    if (!I->keep) {
        s->nw = C;
        return 0;
    }
    float *w = malloc((size_t)C * sizeof *w + 1);
    if (!w) return free(v), ox_fail(I, "out of memory");
    for (int64_t c = 0; c < C; c++) w[c] = v[per == 1 ? 0 : c];
    free(v);
    int rc = ox_spec_append(I, s, w, C);
    free(w);
    return rc;
}

/* Resize (opset 10+) and Upsample (opset 7-9) of height and width, to an
 * output size given by constant sizes, or by scales that give whole rows
 * and columns.  Nearest: an Upsample layer, by integer factors, in the
 * coordinate modes where output index i reads input floor(i / s)
 * (asymmetric with floor, half_pixel or pytorch_half_pixel with
 * round_prefer_floor or round_prefer_ceil, asymmetric with
 * round_prefer_floor for factors up to 2): what torch.onnx (nearest),
 * Keras' UpSampling2D and ONNX's defaults write; to other sizes, in the
 * mode where it reads input floor(i H / h) (PyTorch's nearest to a size),
 * a Nearest layer.  Linear: a Bilinear
 * layer, in half_pixel or pytorch_half_pixel (PyTorch's bilinear with
 * align_corners=False) or align_corners: torchvision's segmentation heads. */
static int op_resize(ox_imp *I)
{
    int upsample = !strcmp(I->nd->op_type, "Upsample"), mode, ctm = 1, nm = 0;
    if (ox_check_attrs(I, upsample ? "mode scales"
                                   : "mode coordinate_transformation_mode nearest_mode "
                                     "cubic_coeff_a exclude_outside extrapolation_value antialias"))
        return -1;
    if (ox_att_choice(I, "mode", "nearest linear bilinear cubic", &mode)) return -1;
    if (mode == 3) return ox_fail(I, "mode cubic: dse imports nearest and linear (bilinear) resizing");
    if (mode && (upsample || I->opset < 11))
        return ox_fail(I, "%s in mode %s below opset 11 (asymmetric coordinates): dse imports it "
                       "nearest only; export with opset 11 or later", upsample ? "Upsample" : "Resize",
                       mode == 1 ? "linear" : "bilinear");
    int64_t aa;
    if (ox_att_int(I, "antialias", 0, &aa)) return -1;
    if (aa) return ox_fail(I, "antialias=1 is unsupported");
    if (!upsample) { /* absent: index 0, ONNX's defaults half_pixel and round_prefer_floor */
        if (ox_att_choice(I, "coordinate_transformation_mode",
                          "half_pixel asymmetric pytorch_half_pixel align_corners tf_half_pixel_for_nn "
                          "tf_crop_and_resize half_pixel_symmetric", &ctm) ||
            ox_att_choice(I, "nearest_mode", "round_prefer_floor round_prefer_ceil floor ceil", &nm))
            return -1;
    }
    int x = ox_in_act(I, 0);
    if (x < 0 || ox_act_rank(I, x, 4, "input")) return -1;
    net_shape in = I->t[x].shape;
    double f[4] = {1, 1, 1, 1};
    int64_t out[2] = {-1, -1};
    int bad, n = 0;
    if (upsample && I->opset < 9) {
        const Onnx__AttributeProto *a = ox_att(I->nd, "scales");
        if (!a || a->n_floats != 4) return ox_fail(I, "attribute scales of 4 values is required");
        for (int k = 0; k < 4; k++) f[k] = a->floats[k];
    } else {
        size_t ks = upsample ? 1 : I->opset < 11 ? 1 : 2; /* scales' input */
        const Onnx__TensorProto *sc = ox_in_const(I, ks, 0, &bad);
        if (bad) return -1;
        const Onnx__TensorProto *sz = !upsample && I->opset >= 11 ? ox_in_const(I, 3, 0, &bad) : NULL;
        if (bad) return -1;
        int64_t cnt = 0;
        if (sc && ox_tp_numel(ox_dc(I, "scales", ox_in_name(I, ks)), sc) > 0) {
            float *v = ox_const_floats(I, sc, "scales", ks, 1, &cnt, &bad);
            if (bad) return -1;
            if (cnt != 4) return free(v), ox_fail(I, "scales has %lld values; dse needs 4 (N, C, H, W)",
                                                  (long long)cnt);
            for (int k = 0; k < 4; k++) f[k] = v[k];
            free(v);
        } else if (sz) {
            int64_t v[4];
            if (ox_tp_ints(ox_dc(I, "sizes", ox_in_name(I, 3)), sz, v, 4, &n)) return -1;
            if (n != 4) return ox_fail(I, "sizes has %d values; dse needs 4 (N, C, H, W)", n);
            if (v[0] != 1 || v[1] != in.c)
                return ox_fail(I, "sizes %lld x %lld resizes the batch or channel axis", (long long)v[0],
                               (long long)v[1]);
            out[0] = v[2], out[1] = v[3];
            f[2] = (double)v[2] / in.h, f[3] = (double)v[3] / in.w;
        } else {
            return ox_fail(I, "needs constant scales or sizes");
        }
    }
    if (f[0] != 1 || f[1] != 1) return ox_fail(I, "scales the batch or channel axis (%g, %g)", f[0], f[1]);
    for (int k = 0; k < 2; k++) {
        int64_t len = k ? in.w : in.h;
        if (!(f[2 + k] > 0 && f[2 + k] * len <= OX_ATTR_MAX))
            return ox_fail(I, "scale %g out of range", f[2 + k]);
        if (out[k] < 0) { /* from a scale: only a whole number of rows (columns) */
            double o = f[2 + k] * len;
            if (o != floor(o) || o < 1)
                return ox_fail(I, "scale %g of %lld %s is not a whole number of them", f[2 + k],
                               (long long)len, k ? "columns" : "rows");
            out[k] = (int64_t)o;
        }
        if (out[k] < 1 || out[k] > OX_ATTR_MAX) return ox_fail(I, "output size %lld out of range", (long long)out[k]);
    }
    if (mode) { /* linear */
        if (ctm != 0 && ctm != 2 && ctm != 3)
            return ox_fail(I, "linear resize with coordinate mode other than half_pixel, "
                           "pytorch_half_pixel or align_corners");
        if (ctm == 2 && ((out[0] == 1 && in.h > 1) || (out[1] == 1 && in.w > 1)))
            return ox_fail(I, "pytorch_half_pixel to one row or column (it reads the first, dse's "
                           "Bilinear the middle: half_pixel)");
        net_attr a = net_attr_default(NET_BILINEAR);
        a.up_h = (int)out[0], a.up_w = (int)out[1], a.align_corners = ctm == 3;
        return ox_new_spec(I, NET_BILINEAR, &a, 1, &x, 4) ? 0 : -1;
    }
    if (out[0] % in.h || out[1] % in.w) {
        /* Any size, where output o reads input floor(o H / h): asymmetric
         * with floor (PyTorch's "nearest"), to sizes, or by scales that are
         * h / H exactly (1.5 of 38 rows; not 4/3, which a float rounds). */
        int exact = f[2] == (double)out[0] / in.h && f[3] == (double)out[1] / in.w;
        if (upsample || ctm != 1 || nm != 2 || !exact)
            return ox_fail(I, "nearest resize from %dx%d to %lldx%lld: dse resizes by integer factors, "
                           "or to any size reading input floor(o H / h) (coordinate mode asymmetric, "
                           "nearest_mode floor, by sizes or exact scales)", in.h, in.w,
                           (long long)out[0], (long long)out[1]);
        net_attr a = net_attr_default(NET_NEAREST);
        a.up_h = (int)out[0], a.up_w = (int)out[1];
        return ox_new_spec(I, NET_NEAREST, &a, 1, &x, 4) ? 0 : -1;
    }
    int sh = (int)(out[0] / in.h), sw = (int)(out[1] / in.w);
    /* Which coordinate modes read input floor(i / s) for every integer s. */
    int smax = sh > sw ? sh : sw;
    int ok = upsample || (ctm == 1 && (nm == 2 || (nm == 0 && smax <= 2))) ||
             ((ctm == 0 || ctm == 2) && nm < 2) || (smax == 1 && ctm <= 3);
    if (!ok)
        return ox_fail(I, "coordinate mode and nearest_mode that do not read input floor(i / scale) "
                       "(dse imports asymmetric with floor, or half_pixel with round_prefer_*)");
    net_attr a = net_attr_default(NET_UPSAMPLE);
    a.up_h = sh, a.up_w = sw;
    return ox_new_spec(I, NET_UPSAMPLE, &a, 1, &x, 4) ? 0 : -1;
}

static int op_dropout(ox_imp *I)
{
    if (ox_check_attrs(I, "ratio seed is_test consumed_inputs")) return -1;
    int x = ox_in_act(I, 0), bad;
    if (x < 0) return -1;
    ox_in_const(I, 1, 0, &bad); /* ratio: irrelevant at inference */
    if (bad) return -1;
    const Onnx__TensorProto *tm = ox_in_const(I, 2, 0, &bad);
    if (bad) return -1;
    if (tm) {
        /* training_mode is a bool scalar: stored as int32 data or one raw byte. */
        int on = (tm->n_int32_data > 0 && tm->int32_data[0]) ||
                 (tm->has_raw_data && tm->raw_data.len > 0 && tm->raw_data.data[0]);
        if (on) return ox_fail(I, "training_mode=true: dse imports inference graphs only");
    }
    return ox_new_spec(I, NET_DROPOUT, NULL, 1, &x, I->t[x].rank) ? 0 : -1;
}

static int op_softmax(ox_imp *I)
{
    if (ox_check_attrs(I, "axis")) return -1;
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    int r = I->t[x].rank;
    int64_t axis;
    if (ox_att_int(I, "axis", I->opset < 13 ? 1 : -1, &axis)) return -1;
    if (axis < 0) axis += r;
    if (axis != 1)
        return ox_fail(I, "Softmax over axis %lld of a %d-D tensor; dse's is over the channels "
                     "(axis 1)", (long long)axis, r);
    ox_spec *s = ox_new_spec(I, NET_SOFTMAX, NULL, 1, &x, r);
    if (!s) return -1;
    s->flat_softmax = I->opset < 13 && r == 4;
    return 0;
}

static int op_flatten(ox_imp *I)
{
    if (ox_check_attrs(I, "axis")) return -1;
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    int r = I->t[x].rank;
    int64_t axis;
    if (ox_att_int(I, "axis", 1, &axis)) return -1;
    if (axis < 0) axis += r;
    /* With batch 1, axis 0 gives [1, N] too. */
    if (axis != 1 && axis != 0)
        return ox_fail(I, "Flatten at axis %lld of a %d-D tensor; dse flattens at axis 1",
                     (long long)axis, r);
    if (I->nd->doc_string && !strcmp(I->nd->doc_string, OX_IMPLICIT)) return ox_alias(I, x, 2, r == 4);
    return ox_new_spec(I, NET_FLATTEN, NULL, 1, &x, 2) ? 0 : -1;
}

static int op_reshape(ox_imp *I)
{
    if (ox_check_attrs(I, "allowzero")) return -1;
    int x = ox_in_act(I, 0), bad, n = 0;
    if (x < 0) return -1;
    const Onnx__TensorProto *sh = ox_in_const(I, 1, 1, &bad);
    if (bad) return -1;
    int64_t v[8], allowzero;
    if (ox_att_int(I, "allowzero", 0, &allowzero) || ox_tp_ints(ox_dc(I, "shape", ox_in_name(I, 1)), sh, v, 8, &n))
        return -1;
    int r = I->t[x].rank;
    if (I->nd->doc_string && !strcmp(I->nd->doc_string, OX_IMPLICIT)) {
        /* The exporter's [1, C, 1, 1] view of a [1, C] tensor. */
        if (r != 2 || n != 4 || v[0] != 1 || v[2] != 1 || v[3] != 1 || v[1] < 1)
            return ox_fail(I, OX_IMPLICIT " Reshape must view [1, C] as [1, C, 1, 1]");
        return ox_alias(I, x, 4, 0);
    }
    if (n != 2)
        return ox_fail(I, "Reshape to %d-D: dse supports only flattening Reshapes to [1, N]", n);
    if (allowzero && (v[0] == 0 || v[1] == 0))
        return ox_fail(I, "Reshape with allowzero to an empty tensor");
    int64_t flat = 0;
    if (v[0] == 1 || v[0] == 0) {
        if (v[1] > 0) flat = v[1];
        else if (v[1] == 0) flat = -2; /* copies dim 1: channels */
        else if (v[1] != -1) flat = -3;
    } else if (v[0] == -1 && v[1] > 0) {
        flat = v[1]; /* batch = numel / N must be 1 */
    } else {
        flat = -3;
    }
    if (flat == -3)
        return ox_fail(I, "Reshape to [%lld, %lld]: dse supports only [1, -1] or [1, N] (batch 1)",
                     (long long)v[0], (long long)v[1]);
    ox_spec *s = ox_new_spec(I, NET_FLATTEN, NULL, 1, &x, 2);
    if (!s) return -1;
    s->flat_n = flat;
    return 0;
}

/* An FC's bias: N values, or one broadcast, times beta; appended in one
 * go (per-value appends would copy the weights N times). */
static int append_bias(ox_imp *I, ox_spec *s, const float *c, int64_t n, int64_t N, double beta)
{
    if (!I->keep) {
        s->nw += N;
        return 0;
    }
    float *b = malloc((size_t)N * sizeof *b + 1);
    if (!b) return ox_fail(I, "out of memory");
    for (int64_t o = 0; o < N; o++) b[o] = (float)(beta * c[n == 1 ? 0 : o]);
    int rc = ox_spec_append(I, s, b, N);
    free(b);
    return rc;
}

/* Gemm and MatMul with a constant right operand: an FC layer (or, on an
 * NHWC view, a 1x1 Conv). */
static int op_fc(ox_imp *I, int gemm)
{
    if (ox_check_attrs(I, gemm ? "alpha beta transA transB broadcast" : "")) return -1;
    int x = ox_in_act(I, 0), bad;
    if (x < 0) return -1;
    /* MatMul on an NHWC view: each pixel's channels times W, a 1x1 Conv
     * (ConvNeXt's Linear layers). */
    int conv = !gemm && I->t[x].rank == 4 && I->t[x].nhwc;
    if (!gemm && I->t[x].rank == 4 && !conv)
        return ox_fail(I, "MatMul of a 4-D NCHW tensor (over its W axis); dse multiplies [1, K] "
                       "rows or the channels of an NHWC view");
    if (!conv && ox_act_rank(I, x, 2, "input")) return -1;
    const Onnx__TensorProto *B = ox_in_const(I, 1, 1, &bad), *C = NULL;
    if (bad) return -1;
    int64_t ta = 0, tb = 0;
    double alpha = 1, beta = 1;
    if (gemm) {
        if (ox_att_int(I, "transA", 0, &ta) || ox_att_int(I, "transB", 0, &tb) ||
            ox_att_float(I, "alpha", 1, &alpha) || ox_att_float(I, "beta", 1, &beta))
            return -1;
        C = ox_in_const(I, 2, 0, &bad);
        if (bad) return -1;
        if (beta == 0) C = NULL;
    }
    if (B->n_dims != 2)
        return ox_fail(I, "weight %.100s is %zu-D; dse needs a 2-D weight", ox_in_name(I, 1), B->n_dims);
    if (B->dims[0] < 1 || B->dims[1] < 1 || B->dims[0] > INT32_MAX || B->dims[1] > INT32_MAX)
        return ox_fail(I, "weight %.100s has an empty or huge dimension", ox_in_name(I, 1));
    int64_t K = tb ? B->dims[1] : B->dims[0], N = tb ? B->dims[0] : B->dims[1];
    if (ta && K != 1)
        return ox_fail(I, "transA=1 (a transposed input) is unsupported; dse's input is one row");
    net_attr a = net_attr_default(conv ? NET_CONV : NET_FC);
    a.out_c = (int)N;
    a.bias = C != NULL;
    if (conv && K != I->t[x].shape.c)
        return ox_fail(I, "weight %.100s has %lld rows, the input has %d channels", ox_in_name(I, 1),
                       (long long)K, I->t[x].shape.c);
    ox_spec *s = ox_new_spec(I, conv ? NET_CONV : NET_FC, &a, 1, &x, conv ? 4 : 2);
    if (!s) return -1;
    s->bias_open = C == NULL;
    int64_t n;
    float *w = ox_const_floats(I, B, "weight", 1, I->keep, &n, &bad);
    if (bad) return -1;
    if (I->keep) {
        /* Ours is W[out][in]: B as given when transB=1, transposed otherwise. */
        float *t = malloc((size_t)n * sizeof *t + 1);
        if (!t) return free(w), ox_fail(I, "out of memory");
        for (int64_t o = 0; o < N; o++)
            for (int64_t k = 0; k < K; k++)
                t[o * K + k] = (float)(alpha * (tb ? w[o * K + k] : w[k * N + o]));
        free(w);
        w = t;
    }
    if (ox_spec_append(I, s, w, n)) return free(w), -1;
    free(w);
    if (C) {
        w = ox_const_floats(I, C, "bias", 2, 1, &n, &bad);
        if (bad) return -1;
        if (n != N && n != 1) {
            free(w);
            return ox_fail(I, "bias %.100s has %lld values; dse needs %lld (one per output) or 1",
                         ox_in_name(I, 2), (long long)n, (long long)N);
        }
        int rc = append_bias(I, s, w, n, N, beta);
        free(w);
        if (rc) return -1;
    }
    return 0;
}

static int op_concat(ox_imp *I)
{
    if (ox_check_attrs(I, "axis")) return -1;
    int nin = ox_in_count(I), ins[1024];
    int64_t axis;
    if (nin < 1) return ox_fail(I, "has no inputs");
    if (nin > 1024) return ox_fail(I, "more than 1024 inputs");
    if (!ox_att(I->nd, "axis")) return ox_fail(I, "attribute axis is required");
    if (ox_att_int(I, "axis", 1, &axis)) return -1;
    for (int k = 0; k < nin; k++) {
        if ((ins[k] = ox_in_act(I, (size_t)k)) < 0) return -1;
        if (I->t[ins[k]].rank != I->t[ins[0]].rank)
            return ox_fail(I, "concatenates a %d-D and a %d-D tensor", I->t[ins[0]].rank,
                         I->t[ins[k]].rank);
    }
    int r = I->t[ins[0]].rank;
    if (axis < 0) axis += r;
    if (axis != 1)
        return ox_fail(I, "Concat along axis %lld; dse concatenates channels (axis 1)",
                     (long long)axis);
    if (nin == 1) return ox_alias(I, ins[0], 0, 0);
    return ox_new_spec(I, NET_CONCAT, NULL, nin, ins, r) ? 0 : -1;
}

static int op_constant(ox_imp *I)
{
    const Onnx__NodeProto *nd = I->nd;
    if (ox_check_attrs(I, "value value_float value_floats value_int value_ints")) return -1;
    if (nd->n_attribute != 1) return ox_fail(I, "needs exactly one value attribute");
    const Onnx__AttributeProto *a = nd->attribute[0];
    const Onnx__TensorProto *tp = NULL;
    if (!strcmp(a->name, "value")) {
        if (!a->t) return ox_fail(I, "attribute value has no tensor");
        tp = a->t;
    } else {
        /* Wrap the attribute's values (not copied: the model outlives this). */
        Onnx__TensorProto *t = malloc(sizeof *t);
        if (!t) return ox_fail(I, "out of memory");
        onnx__tensor_proto__init(t);
        t->has_data_type = 1;
        if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_floats")) {
            t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
            int one = !strcmp(a->name, "value_float");
            t->n_float_data = one ? 1 : a->n_floats;
            t->float_data = one ? (float *)&a->f : a->floats;
        } else {
            t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
            int one = !strcmp(a->name, "value_int");
            t->n_int64_data = one ? 1 : a->n_ints;
            t->int64_data = one ? (int64_t *)&a->i : a->ints;
        }
        if (strchr(a->name + 6, 's')) { /* value_floats / value_ints: 1-D */
            t->n_dims = 1;
            t->dims = (int64_t *)(t->n_float_data ? (void *)&t->n_float_data : (void *)&t->n_int64_data);
        }
        if (ox_own_tensor(I, t)) return -1;
        tp = t;
    }
    if (nd->n_output < 1 || !nd->output[0] || !nd->output[0][0]) return ox_fail(I, "has no output");
    int t = ox_smap_get(&I->tmap, nd->output[0]);
    if (I->t[t].kind != OX_UNDEF) return ox_fail(I, "output %.100s is produced twice", nd->output[0]);
    I->t[t].kind = OX_CONST;
    I->t[t].tp = tp;
    return 0;
}

static int op_identity(ox_imp *I)
{
    if (ox_check_attrs(I, "")) return -1;
    const char *name = ox_in_name(I, 0);
    int t = ox_smap_get(&I->tmap, name);
    if (!name[0] || t < 0 || I->t[t].kind == OX_UNDEF)
        return ox_fail(I, "input %.100s is not produced by an earlier node, an initializer or the "
                     "graph input", name);
    return ox_alias(I, t, 0, I->t[t].flat);
}

/* HardSigmoid: max(0, min(1, alpha x + beta)). */
static int op_hardsigmoid(ox_imp *I)
{
    if (ox_check_attrs(I, "alpha beta consumed_inputs")) return -1;
    net_attr a = net_attr_default(NET_HSIGMOID);
    if (ox_att_float(I, "alpha", 0.2, &a.hs_alpha) || ox_att_float(I, "beta", 0.5, &a.hs_beta))
        return -1;
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    return ox_new_spec(I, NET_HSIGMOID, &a, 1, &x, I->t[x].rank) ? 0 : -1;
}

/* Gelu (opset 20): approximate "none" (erf) or "tanh". */
static int op_gelu(ox_imp *I)
{
    int tanh_form;
    if (ox_check_attrs(I, "approximate") || ox_att_choice(I, "approximate", "none tanh", &tanh_form))
        return -1;
    net_attr a = net_attr_default(NET_GELU);
    a.gelu_tanh = tanh_form;
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    return ox_new_spec(I, NET_GELU, &a, 1, &x, I->t[x].rank) ? 0 : -1;
}

/* Channels [c0, c0 + nc) of x as output `out`: a Slice layer, or x itself;
 * box, when not NULL, also keeps of each channel rows box[0] + box[2] r
 * (box[1] of them) and columns box[3] + box[5] q (box[4]). */
static int channel_slice(ox_imp *I, int out, int x, int64_t c0, int64_t nc, const int64_t *box,
                         int single)
{
    net_shape xs = I->t[x].shape;
    int whole = !box || (box[1] == xs.h && box[4] == xs.w);
    if (nc == xs.c && c0 == 0 && whole && single) return ox_alias(I, x, 0, 0);
    if (nc < 1 || c0 < 0 || c0 + nc > xs.c)
        return ox_fail(I, "channels [%lld, %lld) of a tensor of %d channels", (long long)c0,
                       (long long)(c0 + nc), xs.c);
    net_attr a = net_attr_default(NET_SLICE);
    a.start = (int)c0, a.out_c = (int)nc;
    if (!whole) { /* in range: op_slice clamps to the map; a count to the end is 0 */
        a.sl_top = (int)box[0], a.sh = (int)box[2];
        a.sl_rows = box[1] == (xs.h - 1 - box[0]) / box[2] + 1 ? 0 : (int)box[1];
        a.sl_left = (int)box[3], a.sw = (int)box[5];
        a.sl_cols = box[4] == (xs.w - 1 - box[3]) / box[5] + 1 ? 0 : (int)box[4];
    }
    ox_tens *xt = &I->t[x];
    if (single && xt->kind == OX_ACT && xt->spec >= 0 && I->s[xt->spec].kind == NET_SLICE &&
        xt->nuse == 1 && !(xt->pad[0] | xt->pad[1] | xt->pad[2] | xt->pad[3])) {
        /* A Slice of a Slice no one else reads (torch.onnx writes
         * x[..., ::2, ::2] as one per axis; a Split's part sliced again):
         * one Slice, its positions the first's at the second's, named
         * after the first; the first's tensor is left without a layer. */
        net_attr *f = &I->s[xt->spec].a;
        f->start += a.start, f->out_c = a.out_c;
        if (!whole) {
            int rows = (int)box[1], cols = (int)box[4];
            f->sl_top += f->sh * a.sl_top, f->sh = rows > 1 ? f->sh * a.sh : 1;
            f->sl_left += f->sw * a.sl_left, f->sw = cols > 1 ? f->sw * a.sw : 1;
            net_shape ws = I->t[I->s[xt->spec].in[0]].shape; /* the first's input */
            f->sl_rows = rows == (ws.h - 1 - f->sl_top) / f->sh + 1 ? 0 : rows;
            f->sl_cols = cols == (ws.w - 1 - f->sl_left) / f->sw + 1 ? 0 : cols;
        }
        xt->shape = (net_shape){(int)nc, whole ? xs.h : (int)box[1], whole ? xs.w : (int)box[4]};
        if (ox_alias(I, x, 0, 0)) return -1;
        I->t[x].folded = 1;
        return 0;
    }
    if (single) return ox_new_spec(I, NET_SLICE, &a, 1, &x, I->t[x].rank) ? 0 : -1;
    return ox_new_spec_out(I, out, NET_SLICE, &a, 1, &x, I->t[x].rank) ? 0 : -1;
}

/* The ONNX dims of activation x and the axis of its channels. */
static int onnx_dims(const ox_imp *I, int x, int64_t d[4])
{
    net_shape s = I->t[x].shape;
    if (I->t[x].rank == 2) {
        d[0] = 1, d[1] = net_shape_numel(s);
        return 1;
    }
    d[0] = 1;
    if (I->t[x].nhwc) {
        d[1] = s.h, d[2] = s.w, d[3] = s.c;
        return 3;
    }
    d[1] = s.c, d[2] = s.h, d[3] = s.w;
    return 1;
}

/* Split along the channels: one Slice layer per output. */
static int op_split(ox_imp *I)
{
    int old = I->opset < 13;
    if (ox_check_attrs(I, old ? "axis split" : "axis num_outputs")) return -1;
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    int64_t axis, d[4], sizes[64];
    int r = I->t[x].rank, ca = onnx_dims(I, x, d), nout = (int)I->nd->n_output, ns = 0;
    if (ox_att_int(I, "axis", 0, &axis)) return -1;
    if (axis < 0) axis += r;
    /* Along the channels, or (a 4-D map) its rows or columns: crops. */
    int hA = ca == 1 ? 2 : 1, along = axis == ca ? 0 : r == 4 && axis == hA ? 1 : r == 4 && axis == hA + 1 ? 2 : -1;
    if (along < 0)
        return ox_fail(I, "Split along axis %lld; dse splits the channels (axis %d), rows or columns",
                       (long long)axis, ca);
    if (nout < 1 || nout > 64) return ox_fail(I, "Split into %d outputs", nout);
    if (old) {
        const Onnx__AttributeProto *a = ox_att(I->nd, "split");
        if (a) {
            if (a->n_ints > 64) return ox_fail(I, "split of %zu parts", a->n_ints);
            ns = (int)a->n_ints;
            for (int k = 0; k < ns; k++) sizes[k] = a->ints[k];
        }
    } else if (ox_in_count(I) > 1) {
        int bad;
        const Onnx__TensorProto *sp = ox_in_const(I, 1, 1, &bad);
        if (!sp || ox_tp_ints(ox_dc(I, "split", ox_in_name(I, 1)), sp, sizes, 64, &ns)) return -1;
    }
    int64_t C = d[axis];
    if (ns == 0) { /* equal parts; the last smaller (opset 18's num_outputs rule) */
        int64_t part = (C + nout - 1) / nout;
        for (int k = 0; k < nout; k++) sizes[k] = k < nout - 1 ? part : C - part * (nout - 1);
        ns = nout;
    }
    if (ns != nout) return ox_fail(I, "split has %d sizes for %d outputs", ns, nout);
    int64_t c0 = 0;
    for (int k = 0; k < nout; k++) {
        if (sizes[k] < 1) return ox_fail(I, "split size %lld", (long long)sizes[k]);
        net_shape xs = I->t[x].shape;
        int64_t box[6] = {0, xs.h, 1, 0, xs.w, 1};
        if (along) box[along == 1 ? 0 : 3] = c0, box[along == 1 ? 1 : 4] = sizes[k];
        if (sizes[k] > C - c0) { /* said below */
            c0 = C + 1;
            break;
        }
        if (I->nd->output[k] && I->nd->output[k][0] &&
            channel_slice(I, k, x, along ? 0 : c0, along ? xs.c : sizes[k], along ? box : NULL, 0))
            return -1;
        c0 += sizes[k];
    }
    const char *unit = along == 0 ? "channels" : along == 1 ? "rows" : "columns";
    if (c0 > C) return ox_fail(I, "split sizes add up to more than the %lld %s", (long long)C, unit);
    if (c0 != C) return ox_fail(I, "split sizes add up to %lld of %lld %s", (long long)c0, (long long)C, unit);
    return 0;
}

/* Slice of an activation: a range of its channels, and of its rows and
 * columns (a crop, steps allowed: YOLOv5's Focus, a U-Net's centre crop). */
static int op_slice(ox_imp *I)
{
    int old = I->opset < 10;
    if (ox_check_attrs(I, old ? "starts ends axes" : "")) return -1;
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    int64_t d[4], st[8], en[8], ax[8], sp[8];
    int r = I->t[x].rank, ca = onnx_dims(I, x, d), n = 0, na = 0, nsp = 0, ne = 0;
    if (old) {
        const Onnx__AttributeProto *s = ox_att(I->nd, "starts"), *e = ox_att(I->nd, "ends"),
                                   *a = ox_att(I->nd, "axes");
        if (!s || !e || s->n_ints != e->n_ints || s->n_ints > 8 || (a && a->n_ints != s->n_ints))
            return ox_fail(I, "starts and ends must be given, of one length");
        n = ne = (int)s->n_ints;
        for (int k = 0; k < n; k++) st[k] = s->ints[k], en[k] = e->ints[k];
        if (a) {
            na = n;
            for (int k = 0; k < n; k++) ax[k] = a->ints[k];
        }
    } else {
        int bad;
        const Onnx__TensorProto *s = ox_in_const(I, 1, 1, &bad), *e, *a, *p;
        if (!s || ox_tp_ints(ox_dc(I, "starts", ox_in_name(I, 1)), s, st, 8, &n)) return -1;
        if (!(e = ox_in_const(I, 2, 1, &bad)) || ox_tp_ints(ox_dc(I, "ends", ox_in_name(I, 2)), e, en, 8, &ne))
            return -1;
        a = ox_in_const(I, 3, 0, &bad);
        if (bad || (a && ox_tp_ints(ox_dc(I, "axes", ox_in_name(I, 3)), a, ax, 8, &na))) return -1;
        p = ox_in_const(I, 4, 0, &bad);
        if (bad || (p && ox_tp_ints(ox_dc(I, "steps", ox_in_name(I, 4)), p, sp, 8, &nsp))) return -1;
        if (ne != n || (a && na != n) || (p && nsp != n))
            return ox_fail(I, "starts, ends, axes and steps of different lengths");
    }
    /* Per axis of d: first, count, step (every axis whole to begin with). */
    int64_t box[4][3];
    if (r == 2) d[2] = d[3] = 1;
    for (int k = 0; k < 4; k++) box[k][0] = 0, box[k][1] = d[k], box[k][2] = 1;
    for (int k = 0; k < n; k++) {
        int64_t a = na ? ax[k] : k, step = nsp ? sp[k] : 1;
        if (a < 0) a += r;
        if (a < 0 || a >= r) return ox_fail(I, "axis %lld of a %d-D tensor", (long long)ax[k], r);
        if (step < 1 || (step > 1 && (a == 0 || a == ca)))
            return ox_fail(I, "Slice with step %lld along axis %lld; dse slices the channels with "
                           "step 1 and the rows and columns with steps of at least 1",
                           (long long)step, (long long)a);
        /* ONNX's clamping for a positive step: into [0, dim] after adding dim
         * to negative bounds (INT64_MAX, "to the end", stays in range). */
        int64_t dim = d[a], s = st[k], e = en[k];
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        s = s < 0 ? 0 : s > dim ? dim : s;
        e = e < 0 ? 0 : e > dim ? dim : e;
        if (e <= s)
            return ox_fail(I, "Slice of nothing: [%lld, %lld) of axis %lld", (long long)s,
                           (long long)e, (long long)a);
        box[a][0] = s, box[a][1] = (e - s - 1) / step + 1;
        box[a][2] = box[a][1] > 1 ? step : 1; /* one position kept: any step is 1 */
    }
    if (r == 2) return channel_slice(I, 0, x, box[1][0], box[1][1], NULL, 1);
    /* Rows and columns: axes 2, 3 of NCHW, 1, 2 of NHWC. */
    int hA = ca == 1 ? 2 : 1, wA = hA + 1;
    int64_t hw[6] = {box[hA][0], box[hA][1], box[hA][2], box[wA][0], box[wA][1], box[wA][2]};
    return channel_slice(I, 0, x, box[ca][0], box[ca][1], hw, 1);
}

/* A kind of kinds.def that lists `op` among its ONNX operators and is a
 * plain unary one (one input, no attributes): imported as it is. */
static int table_kind(const char *op)
{
    /* An empty op_type matched everywhere without advancing (the fuzzer's
     * endless loop); no ONNX operator's name is 64 characters long. */
    size_t len = strnlen(op, 64);
    if (len == 0 || len == 64) return -1;
    for (int k = 0; k < NET_KIND_COUNT; k++) {
        const net_kind_info_t *K = net_kind_info((net_kind)k);
        if (K->min_in != 1 || K->max_in != 1 || K->keys[0].key || K->wlayout) continue;
        for (const char *p = K->onnx; (p = strstr(p, op)); p += len)
            if ((p == K->onnx || p[-1] == ' ') && (p[len] == 0 || p[len] == ' ')) return k;
    }
    return -1;
}

int ox_import_node(ox_imp *I)
{
    const Onnx__NodeProto *nd = I->nd;
    const char *op = nd->op_type ? nd->op_type : "";
    if (nd->domain && nd->domain[0] && strcmp(nd->domain, "ai.onnx"))
        return ox_fail(I, "operator %.60s of domain %.60s is unsupported", op, nd->domain);
    int handled, rc = ox_fold(I, &handled);
    if (rc || handled) return rc;
    if (!strcmp(op, "Conv")) return op_conv(I);
    if (!strcmp(op, "ConvTranspose")) return op_deconv(I);
    if (!strcmp(op, "InstanceNormalization")) return op_instnorm(I);
    if (!strcmp(op, "GroupNormalization")) return ox_op_groupnormalization(I);
    if (!strcmp(op, "DepthToSpace")) return op_depthtospace(I);
    if (!strcmp(op, "SpaceToDepth")) return op_spacetodepth(I);
    if (!strcmp(op, "Gemm")) return op_fc(I, 1);
    if (!strcmp(op, "MatMul")) return op_fc(I, 0);
    if (!strcmp(op, "Relu")) return op_simple(I, NET_RELU, "consumed_inputs", 0);
    if (!strcmp(op, "Clip")) return op_clip(I);
    if (!strcmp(op, "LRN")) return op_lrn(I);
    if (!strcmp(op, "MaxPool")) return op_pool(I, NET_MAXPOOL);
    if (!strcmp(op, "AveragePool")) return op_pool(I, NET_AVGPOOL);
    if (!strcmp(op, "GlobalAveragePool")) return op_simple(I, NET_GAP, "", 1);
    if (!strcmp(op, "BatchNormalization")) return op_bn(I);
    if (!strcmp(op, "Add")) return ox_op_add(I, 0);
    if (!strcmp(op, "Sum")) return ox_op_add(I, 1);
    if (!strcmp(op, "Mul")) {
        rc = ox_op_mul5(I, &handled);
        return rc || handled ? rc : ox_op_mul(I);
    }
    if (!strcmp(op, "Div")) return ox_op_div(I);
    if (!strcmp(op, "Sub")) return ox_op_sub(I);
    if (!strcmp(op, "Pow")) return ox_op_pow(I);
    if (!strcmp(op, "Sqrt")) return ox_op_sqrt(I);
    if (!strcmp(op, "Erf")) return ox_op_erf(I);
    if (!strcmp(op, "ReduceMean")) return ox_op_reducemean(I);
    if (!strcmp(op, "ReduceMax")) return ox_op_reducemax(I);
    if (!strcmp(op, "ReduceL2")) return ox_op_reducel2(I);
    if (!strcmp(op, "ReduceSum")) return ox_op_reducesum(I);
    if (!strcmp(op, "Softplus")) return ox_op_softplus(I);
    if (!strcmp(op, "Tanh")) {
        rc = ox_op_tanh(I, &handled);
        if (handled) return rc;
    }
    if (!strcmp(op, "Expand")) return ox_op_expand(I);
    if (!strcmp(op, "LpNormalization")) return ox_op_lpnorm(I);
    if (!strcmp(op, "GlobalMaxPool")) return ox_op_globalmaxpool(I);
    if (!strcmp(op, "LayerNormalization")) return ox_op_layernorm(I);
    if (!strcmp(op, "Transpose")) return ox_op_transpose(I);
    if (!strcmp(op, "Concat")) {
        rc = ox_op_concat5(I, &handled);
        return rc || handled ? rc : op_concat(I);
    }
    if (!strcmp(op, "Split")) return op_split(I);
    if (!strcmp(op, "Slice")) return op_slice(I);
    if (!strcmp(op, "Flatten")) return op_flatten(I);
    if (!strcmp(op, "Reshape")) {
        rc = ox_op_reshape5(I, &handled);
        return rc || handled ? rc : op_reshape(I);
    }
    if (!strcmp(op, "Dropout")) return op_dropout(I);
    if (!strcmp(op, "Softmax")) {
        rc = ox_op_softmax5(I, &handled);
        return rc || handled ? rc : op_softmax(I);
    }
    if (!strcmp(op, "HardSigmoid")) return op_hardsigmoid(I);
    if (!strcmp(op, "Gelu")) return op_gelu(I);
    if (!strcmp(op, "LeakyRelu")) return op_alpha(I, NET_LEAKYRELU);
    if (!strcmp(op, "Elu")) return op_alpha(I, NET_ELU);
    if (!strcmp(op, "PRelu")) return op_prelu(I);
    if (!strcmp(op, "Resize") || !strcmp(op, "Upsample")) return op_resize(I);
    if (!strcmp(op, "Identity")) return op_identity(I);
    if (!strcmp(op, "Pad")) return op_pad(I);
    if (!strcmp(op, "ImageScaler")) return ox_op_imagescaler(I);
    if (!strcmp(op, "Constant")) return op_constant(I);
    int k = table_kind(op);
    if (k >= 0) return op_simple(I, (net_kind)k, "", 0);
    if (!strcmp(op, "Unsqueeze")) {
        int handled, rc = ox_op_unsqueeze(I, &handled);
        if (rc || handled) return rc;
    }
    static const char *shape_ops[] = {"Gather", "Unsqueeze", "Squeeze", "Cast",
                                      "ConstantOfShape", NULL};
    for (int i = 0; shape_ops[i]; i++)
        if (!strcmp(op, shape_ops[i]))
            return ox_fail(I, "%s of a computed tensor: dse folds %s only in constant shape "
                           "arithmetic", op, op);
    return ox_fail(I, "unsupported operator %.60s", op);
}

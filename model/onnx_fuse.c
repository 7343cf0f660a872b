/* onnx_fuse.c -- the operators whose meaning depends on what they combine:
 * dimension orders (Transpose), the steps of decomposed operators that
 * become one dse layer, and the arithmetic of activations and constants.
 *
 *   LayerNorm   ReduceMean_c(X) -> Sub(X, mean) -> Pow(., 2) (or the
 *               difference times itself) -> ReduceMean_c -> Add(., eps) ->
 *               Sqrt -> Div(X - mean, .), then optionally Mul by a
 *               per-channel scale and Add of a per-channel shift (folded
 *               into the layer's weights); or LayerNormalization (opset 17)
 *   GELU        Div(X, sqrt 2) (or Mul by 1/sqrt 2) -> Erf -> Add 1 ->
 *               Mul by X -> Mul by 1/2 (in either order); or Gelu
 *   HardSwish   Mul(X, HardSigmoid(X; 1/6, 1/2)): torch.onnx below opset 14
 *   shuffle     Reshape [1, g, C/g, H, W] -> Transpose [0, 2, 1, 3, 4] ->
 *               Reshape [1, C, H, W]: a ChannelShuffle of g groups
 *   pixel       Reshape [1, C', r, r, H, W] -> Transpose [0, 1, 4, 2, 5, 3]
 *   shuffle     -> Reshape [1, C', H r, W r]: a PixelShuffle (CRD), what
 *               torch.onnx writes for nn.PixelShuffle below opset 11 (the
 *               ONNX model zoo's super-resolution model); Reshape
 *               [1, r, r, C', H, W] -> Transpose [0, 3, 4, 1, 5, 2] -> the
 *               same Reshape: DepthToSpace's own definition (DCR)
 *   GroupNorm   Reshape [1, G, -1] -> InstanceNormalization (one scale and
 *               shift per group) -> Reshape [1, C, H, W], then optionally
 *               Mul by a per-channel scale and Add of a per-channel shift
 *               (folded into the layer's weights): torch.onnx's nn.GroupNorm
 *               (GroupNormalization is opset 18)
 *   NHWC        Transpose [0, 2, 3, 1] gives an NHWC view of an activation
 *               (no layer: dse's floats stay C x H x W); elementwise
 *               operators keep it, MatMul on it is a 1x1 Conv, ReduceMean
 *               and LayerNorm find the channels in it; Transpose
 *               [0, 3, 1, 2] ends it
 *
 * The steps in between are symbolic values (OX_SYM, onnx_impl.h), each an
 * expression of one activation X; a pattern's last step makes the layer.
 * A symbolic value read by anything else becomes a layer where it is one
 * (a mean over channels: ReduceMean; X times a constant: Scale), or the
 * import stops with one line naming the unfinished pattern.
 *
 * Invariant: a pattern is fused only when every step reads the same X and
 * every constant is the one the operator's definition has (1/2, 1, sqrt 2
 * within float rounding, a power of 2); the fused layer computes what the
 * steps computed.
 */
#include "onnx_impl.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

/* Output 0 of the current node as symbolic value `sym` of activation x. */
static int sym_out(ox_imp *I, int sym, int x, double val)
{
    const Onnx__NodeProto *nd = I->nd;
    if (nd->n_output < 1 || !nd->output[0] || !nd->output[0][0]) return ox_fail(I, "has no output");
    if (ox_extra_outputs_unused(I)) return -1;
    int t = ox_smap_get(&I->tmap, nd->output[0]);
    if (I->t[t].kind != OX_UNDEF) return ox_fail(I, "output %.100s is produced twice", nd->output[0]);
    ox_tens *o = &I->t[t], *s = &I->t[x];
    o->kind = OX_SYM;
    o->sym = sym;
    o->sym_src = x;
    o->sym_val = val;
    o->sym_k = 0;
    o->sym_node = I->nd_idx;
    o->rank = s->rank;
    o->nhwc = s->nhwc;
    o->shape = s->shape;
    o->spec = -1;
    return 0;
}

/* sym_out with a second constant (sym_k). */
static int sym_out_k(ox_imp *I, int sym, int x, double val, int k)
{
    if (sym_out(I, sym, x, val)) return -1;
    I->t[ox_smap_get(&I->tmap, I->nd->output[0])].sym_k = k;
    return 0;
}

/* The same activation (through aliases): the same layer, or both the
 * input, viewed alike (a 5-D view of branches is not its 4-D tensor). */
static int same_act(const ox_imp *I, int a, int b)
{
    const ox_tens *A = &I->t[a], *B = &I->t[b];
    return A->kind == OX_ACT && B->kind == OX_ACT && A->spec == B->spec && A->nhwc == B->nhwc &&
           A->g5 == B->g5 &&
           A->rank == B->rank && !(A->pad[0] | A->pad[1] | A->pad[2] | A->pad[3]) &&
           !(B->pad[0] | B->pad[1] | B->pad[2] | B->pad[3]);
}

/* The ONNX axis of the channels of activation t. */
static int chan_axis(const ox_imp *I, int t)
{
    return I->t[t].rank == 4 && I->t[t].nhwc ? 3 : 1;
}

/* Input k's symbolic value of kind `sym`, or -1. */
static int in_sym(ox_imp *I, size_t k, int sym)
{
    int t = ox_in_tensor(I, k);
    return t >= 0 && I->t[t].kind == OX_SYM && I->t[t].sym == sym ? t : -1;
}

/* Constant input k as per-channel values for activation x: one value
 * (*n = 1) or one per channel (*n = C) laid along x's channel axis
 * (broadcasting from the right, as ONNX does).  Values in v (caller
 * frees; NULL when they are not needed: want = 0).  -1 with the error when
 * the constant is anything else. */
static int perchan(ox_imp *I, size_t k, int x, int want, float **v, int64_t *n)
{
    int bad, t = ox_in_tensor(I, k);
    const Onnx__TensorProto *tp = ox_in_const(I, k, 1, &bad);
    *v = NULL;
    if (!tp) return -1;
    const ox_tens *X = &I->t[x];
    int R = X->rank, ca = chan_axis(I, x), C = X->shape.c;
    if ((int)tp->n_dims > R)
        return ox_fail(I, "constant %.100s has rank %zu, more than its %d-D operand", I->t[t].name,
                       tp->n_dims, R);
    for (size_t i = 0; i < tp->n_dims; i++) {
        int axis = R - (int)tp->n_dims + (int)i;
        if (tp->dims[i] != 1 && !(axis == ca && tp->dims[i] == C))
            return ox_fail(I, "constant %.100s is not one value per channel of %.100s (dimension %zu "
                           "is %lld)", I->t[t].name, X->name, i, (long long)tp->dims[i]);
    }
    *v = ox_const_floats(I, tp, "constant", k, want, n, &bad);
    return bad ? -1 : 0;
}

/* The scalar value of constant input k, if it is one (else *is = 0). */
static int scalar(ox_imp *I, size_t k, int *is, double *val)
{
    int bad;
    const Onnx__TensorProto *tp = ox_in_const(I, k, 1, &bad);
    *is = 0;
    if (!tp) return -1;
    /* the file's dims, checked before they are multiplied */
    int64_t n = ox_tp_numel(ox_dc(I, "constant", ox_in_name(I, k)), tp);
    if (n < 0) return -1;
    if (n != 1) return 0;
    ox_cval c;
    if (ox_cval_of(I, ox_in_tensor(I, k), "constant", &c)) return -1;
    *is = 1;
    *val = c.v[0];
    return 0;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-6 * fabs(b); }

/* The spec whose output is exactly activation t, read by this node only
 * (so that its weights may take in what this node does), or NULL. */
static ox_spec *sole_spec(ox_imp *I, int t, net_kind kind)
{
    const ox_tens *T = &I->t[t];
    if (T->kind != OX_ACT || T->spec < 0 || T->nuse != 1) return NULL;
    ox_spec *s = &I->s[T->spec];
    return s->kind == kind && s->out == t ? s : NULL;
}

/* A LayerNorm or GroupNorm whose output is exactly activation t, read by
 * this node only: its scale and shift (NET_W_VEC(2, 2)) take in a Mul
 * or Add by per-channel constants after it. */
static ox_spec *norm_spec(ox_imp *I, int t)
{
    ox_spec *s = sole_spec(I, t, NET_LAYERNORM);
    return s ? s : sole_spec(I, t, NET_GROUPNORM);
}

/* A layer of kind (LayerNorm, Scale, BatchNorm) on x whose C-vector
 * weights are `vecs` vectors: vector `at` the values vals (n values, 1 =
 * broadcast; NULL: fill[at]), vector q != at the value fill[q]. */
static ox_spec *vec_layer(ox_imp *I, net_kind kind, const net_attr *a, int x, const float *vals,
                          int64_t n, int at, int vecs, const float *fill)
{
    ox_spec *s = ox_new_spec(I, kind, a, 1, &x, I->t[x].rank);
    if (!s) return NULL;
    int64_t C = I->t[x].shape.c;
    if (!I->keep) {
        s->nw = vecs * C;
        return s;
    }
    float *w = malloc((size_t)(vecs * C) * sizeof *w + 1);
    if (!w) return ox_fail(I, "out of memory"), NULL;
    for (int q = 0; q < vecs; q++)
        for (int64_t c = 0; c < C; c++)
            w[q * C + c] = q == at && vals ? vals[n == 1 ? 0 : c] : fill[q];
    int rc = ox_spec_append(I, s, w, vecs * C);
    free(w);
    return rc ? NULL : s;
}

/* A Scale layer: x times c (one value or one per channel; NULL when the
 * values are not kept). */
static int scale_layer(ox_imp *I, int x, const float *c, int64_t n)
{
    static const float one[1] = {1};
    return vec_layer(I, NET_SCALE, NULL, x, c, n, 0, 1, one) ? 0 : -1;
}

/* A shift: x plus c (one value or one per channel; NULL when the values
 * are not kept), times `mul` (one value).  A BatchNorm layer of mean 0,
 * variance 1 and epsilon 0 computes exactly x mul + c (its kernel folds it
 * to that multiply-add): what an exported model's input normalization
 * (Sub of a mean) and ImageScaler compute. */
static int shift_layer(ox_imp *I, int x, const float *c, int64_t n, float mul)
{
    net_attr a = net_attr_default(NET_BN);
    a.bn_eps = 0;
    const float fill[4] = {mul, 0, 0, 1}; /* scale, shift (c), mean, variance */
    return vec_layer(I, NET_BN, &a, x, c, n, 1, 4, fill) ? 0 : -1;
}

/* ---- symbolic values read as activations ---- */

static const char *sym_what(int sym)
{
    switch (sym) {
    case OX_S_MEANC: return "the mean over channels";
    case OX_S_CENT: return "x - mean(x) of a LayerNorm";
    case OX_S_SQ: return "(x - mean(x))^2 of a LayerNorm";
    case OX_S_VAR: return "the variance of a LayerNorm";
    case OX_S_VARE: return "variance + epsilon of a LayerNorm";
    case OX_S_STD: return "the standard deviation of a LayerNorm";
    case OX_S_SCALED: return "a scaling by a constant";
    case OX_S_ERF: return "erf(x / sqrt 2) of a GELU";
    case OX_S_ERF1: return "1 + erf(x / sqrt 2) of a GELU";
    case OX_S_XERF1: return "x (1 + erf(x / sqrt 2)) of a GELU";
    case OX_S_HALFERF1: return "(1 + erf(x / sqrt 2)) / 2 of a GELU";
    case OX_S_RVIEW: return "a 4-D view [1, G, K, -1] (dse takes only a radix softmax's)";
    case OX_S_RVIEWT: return "the transposed view of a radix softmax";
    case OX_S_RSOFT: return "a radix softmax (dse takes it only reshaped back)";
    case OX_S_GROUPEDT: return "the transposed 5-D view of a channel shuffle";
    case OX_S_VIEW6: return "a 6-D view (dse takes only a pixel shuffle's)";
    case OX_S_VIEW6D: return "a 6-D view of blocks (dse takes only a pixel unshuffle's)";
    case OX_S_SOFTPLUS: return "softplus(x)";
    case OX_S_TANHSP: return "tanh(softplus(x))";
    case OX_S_L2: return "the L2 norm over channels of an L2 normalisation";
    case OX_S_L2C: return "the clipped L2 norm of an L2 normalisation (dse takes x divided by it)";
    case OX_S_VIEW6DT: return "the transposed 6-D view of a pixel unshuffle";
    case OX_S_GVIEW: return "a 3-D view [1, G, -1] (dse takes only a GroupNorm's)";
    case OX_S_GNORM: return "the 3-D view of a GroupNorm";
    case OX_S_REDC: return "a reduction over channels without keepdims (dse takes it only "
                           "unsqueezed back to [1, 1, H, W])";
    default: return "the transposed 6-D view of a pixel shuffle";
    }
}

/* A layer a pattern makes belongs to the node that began it (and takes
 * its name): node_enter makes that node current, node_leave restores the
 * one being imported. */
typedef struct {
    const Onnx__NodeProto *nd;
    int idx;
} node_at;

static node_at node_enter(ox_imp *I, int node)
{
    node_at was = {I->nd, I->nd_idx};
    I->nd = I->g->node[node];
    I->nd_idx = node;
    return was;
}

static void node_leave(ox_imp *I, node_at was)
{
    I->nd = was.nd;
    I->nd_idx = was.idx;
}

int ox_sym_realize(ox_imp *I, int t)
{
    ox_tens *T = &I->t[t];
    int sym = T->sym;
    if (sym != OX_S_MEANC && sym != OX_S_SCALED && sym != OX_S_SOFTPLUS && sym != OX_S_TANHSP)
        return ox_fail(I, "input %.100s is %s, which dse imports only as part of the whole "
                       "pattern (docs/onnx.md)", T->name, sym_what(sym));
    node_at was = node_enter(I, T->sym_node);
    int orig = ox_smap_get(&I->tmap, I->nd->output[0]), rc = 0;
    if (I->t[orig].kind == OX_SYM) {
        int x = I->t[orig].sym_src;
        double c = I->t[orig].sym_val;
        if (sym == OX_S_TANHSP) { /* its Softplus first (a layer, if not one yet), then the Tanh */
            int sp = ox_smap_get(&I->tmap, I->nd->input[0]);
            rc = sp < 0 || (I->t[sp].kind == OX_SYM && ox_sym_realize(I, sp)) ? -1 : 0;
            x = sp;
        }
        I->t[orig].kind = OX_UNDEF;
        if (rc) {
        } else if (sym == OX_S_SOFTPLUS || sym == OX_S_TANHSP) {
            net_kind k = sym == OX_S_SOFTPLUS ? NET_SOFTPLUS : NET_TANH;
            rc = ox_new_spec(I, k, NULL, 1, &x, I->t[x].rank) ? 0 : -1;
        } else if (sym == OX_S_MEANC) {
            net_attr a = net_attr_default(NET_REDUCEMEAN);
            a.rm_c = 1;
            rc = ox_new_spec(I, NET_REDUCEMEAN, &a, 1, &x, I->t[x].rank) ? 0 : -1;
        } else {
            float cf = (float)c;
            rc = scale_layer(I, x, &cf, 1);
        }
    }
    node_leave(I, was);
    if (rc) return -1;
    if (t != orig) { /* an alias (Identity) of the value: of the layer now */
        T = &I->t[t];
        const ox_tens *O = &I->t[orig];
        T->kind = OX_ACT, T->spec = O->spec, T->rank = O->rank, T->shape = O->shape;
        T->nhwc = O->nhwc, T->flat = 0;
    }
    return 0;
}

/* ---- Transpose ---- */

int ox_op_transpose(ox_imp *I)
{
    if (ox_check_attrs(I, "perm")) return -1;
    int t = ox_in_tensor(I, 0);
    if (t < 0 || I->t[t].kind == OX_UNDEF || I->t[t].kind == OX_CONST)
        return ox_fail(I, "input %.100s must be an activation", ox_in_name(I, 0));
    const Onnx__AttributeProto *pa = ox_att(I->nd, "perm");
    int perm[8], np = 0;
    if (pa) {
        if (pa->n_ints > 8) return ox_fail(I, "perm of %zu axes", pa->n_ints);
        np = (int)pa->n_ints;
        for (int i = 0; i < np; i++) perm[i] = (int)pa->ints[i];
    }
    static const int shuf[5] = {0, 2, 1, 3, 4}, radix[4] = {0, 2, 1, 3};
    if (I->t[t].kind == OX_ACT && I->t[t].g5) {
        if (np != 5 || memcmp(perm, shuf, sizeof shuf))
            return ox_fail(I, "Transpose of a 5-D view [1, g, C/g, H, W]: dse takes only a channel "
                           "shuffle's [0, 2, 1, 3, 4]");
        if (ox_check_attrs(I, "perm")) return -1;
        return sym_out(I, OX_S_GROUPEDT, t, I->t[t].g5);
    }
    if (I->t[t].kind == OX_SYM && I->t[t].sym == OX_S_RVIEW) {
        if (np != 4 || memcmp(perm, radix, sizeof radix))
            return ox_fail(I, "Transpose of a 4-D view [1, G, K, -1]: dse takes only a radix "
                           "softmax's [0, 2, 1, 3]");
        return sym_out_k(I, OX_S_RVIEWT, I->t[t].sym_src, I->t[t].sym_val, I->t[t].sym_k);
    }
    if (I->t[t].kind == OX_SYM && I->t[t].sym == OX_S_VIEW6 && np == 6) {
        /* [1, a, b, c, H, W]: CRD moves (b, c) beside (H, W) and needs b = c;
         * DCR moves (a, b) and needs a = b */
        static const int crd[6] = {0, 1, 4, 2, 5, 3}, dcr[6] = {0, 3, 4, 1, 5, 2};
        int64_t v = (int64_t)I->t[t].sym_val, a = v / 8192, b = v % 8192;
        int64_t c = I->t[I->t[t].sym_src].shape.c / (a * b);
        if (!memcmp(perm, crd, sizeof crd) && b == c)
            return sym_out(I, OX_S_VIEW6T, I->t[t].sym_src, (double)b);
        if (!memcmp(perm, dcr, sizeof dcr) && a == b)
            return sym_out(I, OX_S_VIEW6T, I->t[t].sym_src, -(double)a);
        return ox_fail(I, "Transpose of the 6-D view [1, %lld, %lld, %lld, H, W]: dse takes only "
                       "a pixel shuffle's ([0,1,4,2,5,3] of [1, C, r, r, H, W], [0,3,4,1,5,2] "
                       "of [1, r, r, C, H, W])", (long long)a, (long long)b, (long long)c);
    }
    if (I->t[t].kind == OX_SYM && I->t[t].sym == OX_S_VIEW6D && np == 6) {
        /* [1, C, H/r, r, W/r, r]: PyTorch's pixel_unshuffle moves the two
         * r beside C, SpaceToDepth's definition before it */
        static const int crd[6] = {0, 1, 3, 5, 2, 4}, dcr[6] = {0, 3, 5, 1, 2, 4};
        if (!memcmp(perm, crd, sizeof crd))
            return sym_out(I, OX_S_VIEW6DT, I->t[t].sym_src, I->t[t].sym_val);
        if (!memcmp(perm, dcr, sizeof dcr))
            return sym_out(I, OX_S_VIEW6DT, I->t[t].sym_src, -I->t[t].sym_val);
        return ox_fail(I, "Transpose of the 6-D view [1, C, H/r, r, W/r, r]: dse takes only a "
                       "pixel unshuffle's ([0,1,3,5,2,4] or [0,3,5,1,2,4])");
    }
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    int r = I->t[x].rank, nhwc = I->t[x].nhwc;
    if (!pa) { /* the default reverses the axes */
        np = r;
        for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
    }
    static const int to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
    int ident = np == r;
    for (int i = 0; ident && i < r; i++) ident = perm[i] == i;
    int want = -1;
    if (ident) want = nhwc;
    else if (r == 4 && np == 4 && !nhwc && !memcmp(perm, to_nhwc, sizeof to_nhwc)) want = 1;
    else if (r == 4 && np == 4 && nhwc && !memcmp(perm, to_nchw, sizeof to_nchw)) want = 0;
    if (want < 0) {
        char ps[64] = "";
        for (int i = 0; i < np && i < 8; i++) {
            size_t l = strlen(ps);
            snprintf(ps + l, sizeof ps - l, "%s%d", i ? "," : "", perm[i]);
        }
        return ox_fail(I, "Transpose [%s] of a %d-D %s activation; dse takes 4-D ones to NHWC "
                       "and back ([0,2,3,1], [0,3,1,2]) and the 5-D one of a channel shuffle",
                       ps, r, nhwc ? "NHWC" : "NCHW");
    }
    if (ox_alias(I, x, 0, 0)) return -1;
    I->t[ox_smap_get(&I->tmap, I->nd->output[0])].nhwc = want;
    return 0;
}

/* ---- ReduceMean and ReduceMax ---- */

/* ReduceMean (kind NET_REDUCEMEAN: LayerNorm's steps, a global average
 * pool, else a layer) or ReduceMax (a layer). */
static int reduce_op(ox_imp *I, net_kind kind)
{
    const char *op = kind == NET_REDUCEMAX ? "ReduceMax" : "ReduceMean";
    int mean = kind == NET_REDUCEMEAN;
    int new_axes = I->opset >= 18;
    if (ox_check_attrs(I, new_axes ? "keepdims noop_with_empty_axes" : "axes keepdims")) return -1;
    int64_t keep, noop = 0;
    if (ox_att_int(I, "keepdims", 1, &keep) ||
        (new_axes && ox_att_int(I, "noop_with_empty_axes", 0, &noop)))
        return -1;
    int64_t axes[8];
    int na = -1; /* -1: every axis */
    if (new_axes) {
        if (ox_in_count(I) > 1) {
            ox_cval c;
            int bad;
            if (!ox_in_const(I, 1, 1, &bad) || ox_cval_of(I, ox_in_tensor(I, 1), "axes", &c)) return -1;
            if (c.n > 8) return ox_fail(I, "%d axes", c.n);
            na = c.n;
            for (int i = 0; i < na; i++) axes[i] = (int64_t)c.v[i];
        }
    } else {
        const Onnx__AttributeProto *a = ox_att(I->nd, "axes");
        if (a) {
            if (a->n_ints > 8) return ox_fail(I, "%zu axes", a->n_ints);
            na = (int)a->n_ints;
            for (int i = 0; i < na; i++) axes[i] = a->ints[i];
        }
    }
    if (na == 0) na = noop ? 0 : -1;
    int sq = mean ? in_sym(I, 0, OX_S_SQ) : -1;
    int x = sq >= 0 ? I->t[sq].sym_src : ox_in_act(I, 0);
    if (x < 0) return -1;
    int r = I->t[x].rank, nhwc = I->t[x].nhwc, over[4] = {0};
    if (na == 0) return ox_alias(I, x, 0, 0); /* noop_with_empty_axes */
    for (int i = 0; i < (na < 0 ? r : na); i++) {
        int64_t a = na < 0 ? i : axes[i];
        if (a < -r || a >= r) return ox_fail(I, "axis %lld of a %d-D tensor", (long long)a, r);
        over[a < 0 ? a + r : a] = 1;
    }
    /* over[] by ONNX axis; rc, rh, rw by dse's. */
    int rc = r == 2 ? over[1] : over[nhwc ? 3 : 1];
    int rh = r == 4 && over[nhwc ? 1 : 2], rw = r == 4 && over[nhwc ? 2 : 3];
    if (over[0] && !(rc && (r == 2 || (rh && rw))))
        return ox_fail(I, "%s over the batch axis", op);
    if (sq >= 0) {
        if (!rc || rh || rw || !keep)
            return ox_fail(I, "ReduceMean of (x - mean(x))^2 over other axes than the channels "
                           "(keepdims): not a LayerNorm");
        return sym_out(I, OX_S_VAR, x, 0);
    }
    if (mean && rc && !rh && !rw && keep) return sym_out(I, OX_S_MEANC, x, 0);
    if (mean && !rc && rh && rw) { /* a global average pool */
        ox_spec *s = ox_new_spec(I, NET_GAP, NULL, 1, &x, keep ? 4 : 2);
        return s ? 0 : -1;
    }
    /* torch.max(x, 1)[0].unsqueeze(1) (CBAM's channel pool): the [1, H, W]
     * a Unsqueeze makes [1, 1, H, W] again (ox_op_unsqueeze). */
    if (rc && !rh && !rw && !keep && r == 4) return sym_out(I, OX_S_REDC, x, (double)kind);
    int global = !rc && rh && rw; /* (a global max pool: C x 1 x 1, as [1, C] without keepdims) */
    if (!keep && !(r == 2 && rc) && !global)
        return ox_fail(I, "%s with keepdims=0 over these axes gives a tensor dse cannot "
                       "hold (it keeps [1, C, H, W] or [1, N])", op);
    if (r == 2 && rc && !keep)
        return ox_fail(I, "%s of a [1, N] tensor to one value", op);
    net_attr a = net_attr_default(kind);
    a.rm_c = rc, a.rm_h = rh, a.rm_w = rw;
    return ox_new_spec(I, kind, &a, 1, &x, global && !keep ? 2 : r) ? 0 : -1;
}

/* ---- L2 normalisation: F.normalize(x, dim=1) is x / Expand(Clip(ReduceL2(x,
 * axes [1], keepdims), eps), Shape(x)); ONNX's LpNormalization (p 2) ---- */

/* The axes of a reduction (attribute below opset 18, input from it):
 * 1 when they are exactly activation x's channel axis. */
static int axes_are_channels(ox_imp *I, int x, int *yes)
{
    int64_t ax[8];
    int na = 0;
    *yes = 0;
    if (I->opset >= 18) {
        if (ox_in_count(I) > 1 && ox_in_name(I, 1)[0]) {
            ox_cval c;
            int bad;
            if (!ox_in_const(I, 1, 1, &bad) || ox_cval_of(I, ox_in_tensor(I, 1), "axes", &c)) return -1;
            na = c.n <= 8 ? c.n : 0;
            for (int i = 0; i < na; i++) ax[i] = (int64_t)c.v[i];
        }
    } else {
        const Onnx__AttributeProto *a = ox_att(I->nd, "axes");
        na = a && a->n_ints <= 8 ? (int)a->n_ints : 0;
        for (int i = 0; i < na; i++) ax[i] = a->ints[i];
    }
    int r = I->t[x].rank;
    *yes = na == 1 && (ax[0] < 0 ? ax[0] + r : ax[0]) == chan_axis(I, x);
    return 0;
}

int ox_op_reducel2(ox_imp *I)
{
    if (ox_check_attrs(I, I->opset >= 18 ? "keepdims noop_with_empty_axes" : "axes keepdims")) return -1;
    int64_t keep;
    int x = ox_in_act(I, 0), yes;
    if (x < 0 || ox_att_int(I, "keepdims", 1, &keep) || axes_are_channels(I, x, &yes)) return -1;
    if (!yes || !keep)
        return ox_fail(I, "ReduceL2 is imported only over the channels with keepdims, as the norm "
                       "of an L2 normalisation (F.normalize(x, dim=1))");
    return sym_out(I, OX_S_L2, x, 0);
}

int ox_op_clip_norm(ox_imp *I, int *handled)
{
    int n = in_sym(I, 0, OX_S_L2);
    *handled = n >= 0;
    if (n < 0) return 0;
    double lo = 0, hi = INFINITY;
    if (I->opset < 11) {
        if (ox_check_attrs(I, "min max") || ox_att_float(I, "min", 0, &lo) ||
            ox_att_float(I, "max", INFINITY, &hi))
            return -1;
    } else {
        int has;
        if (ox_check_attrs(I, "") || ox_const_scalar(I, 1, "min", &has, &lo)) return -1;
        if (!has) lo = 0;
        if (ox_const_scalar(I, 2, "max", &has, &hi)) return -1;
        if (!has) hi = INFINITY;
    }
    if (!(lo >= 0) || hi < FLT_MAX)
        return ox_fail(I, "Clip of an L2 norm to [%g, %g]: dse takes only a floor of at least 0 "
                       "(F.normalize's eps)", lo, hi);
    return sym_out(I, OX_S_L2C, I->t[n].sym_src, lo);
}

int ox_op_expand(ox_imp *I)
{
    if (ox_check_attrs(I, "")) return -1;
    int n = in_sym(I, 0, OX_S_L2C), b = n >= 0 ? -1 : in_sym(I, 0, OX_S_L2);
    int s = n >= 0 ? n : b;
    ox_cval c;
    int bad;
    if (s < 0)
        return ox_fail(I, "Expand is imported only as the broadcast of an L2 normalisation's norm");
    if (!ox_in_const(I, 1, 1, &bad) || ox_cval_of(I, ox_in_tensor(I, 1), "shape", &c)) return -1;
    /* to the normalised tensor's own dims (Shape of it, folded), or ones */
    int x = I->t[s].sym_src, r = I->t[x].rank;
    net_shape xs = I->t[x].shape;
    int64_t d[4] = {1, r == 2 ? net_shape_numel(xs) : xs.c, xs.h, xs.w}; /* NCHW: ReduceL2 reads no NHWC view */
    int ok = c.n == r;
    for (int i = 0; ok && i < r; i++) ok = c.v[i] == 1 || c.v[i] == d[i];
    if (!ok) return ox_fail(I, "Expand of an L2 norm to a shape other than its tensor's");
    return sym_out(I, I->t[s].sym, x, I->t[s].sym_val);
}

/* x divided by its (clipped) norm: an L2Norm layer. */
static int l2norm_layer(ox_imp *I, int x, double eps)
{
    net_attr a = net_attr_default(NET_L2NORM);
    a.bn_eps = eps;
    return ox_new_spec(I, NET_L2NORM, &a, 1, &x, I->t[x].rank) ? 0 : -1;
}

int ox_op_lpnorm(ox_imp *I)
{
    int64_t axis, p;
    int x = ox_in_act(I, 0);
    if (x < 0 || ox_check_attrs(I, "axis p") || ox_att_int(I, "axis", -1, &axis) || ox_att_int(I, "p", 2, &p))
        return -1;
    int r = I->t[x].rank;
    if (p != 2 || (axis < 0 ? axis + r : axis) != chan_axis(I, x))
        return ox_fail(I, "LpNormalization with p %lld along axis %lld: dse normalises by the L2 norm "
                       "over the channels", (long long)p, (long long)axis);
    return l2norm_layer(I, x, 0); /* no floor: x / ||x|| */
}

/* ---- Mish: x tanh(softplus(x)), as torch.onnx writes it (opset < 18): the
 * Softplus and the Tanh held as symbolic values, only where every reader
 * of the one is a Tanh and of the other a Mul, until the Mul by x makes
 * them one layer (a Mul by something else makes them their own layers,
 * ox_sym_realize); any other Softplus and Tanh are layers at once ---- */

/* Whether the current node's output 0 is read, and read only by nodes of
 * type op (not a graph output). */
static int read_only_by(ox_imp *I, const char *op)
{
    const char *name = I->nd->n_output > 0 ? I->nd->output[0] : NULL;
    int readers = 0;
    if (!name || !name[0]) return 0;
    for (size_t i = 0; i < I->g->n_node; i++) {
        const Onnx__NodeProto *nd = I->g->node[i];
        for (size_t k = 0; k < nd->n_input; k++) {
            if (!nd->input[k] || strcmp(nd->input[k], name)) continue;
            if (!nd->op_type || strcmp(nd->op_type, op)) return 0;
            readers++;
        }
    }
    for (size_t k = 0; k < I->g->n_output; k++)
        if (I->g->output[k]->name && !strcmp(I->g->output[k]->name, name)) return 0;
    return readers > 0;
}

int ox_op_softplus(ox_imp *I)
{
    int x = ox_in_act(I, 0);
    if (x < 0 || ox_check_attrs(I, "")) return -1;
    if (!read_only_by(I, "Tanh")) return ox_new_spec(I, NET_SOFTPLUS, NULL, 1, &x, I->t[x].rank) ? 0 : -1;
    return sym_out(I, OX_S_SOFTPLUS, x, 0);
}

int ox_op_tanh(ox_imp *I, int *handled)
{
    int s = in_sym(I, 0, OX_S_SOFTPLUS);
    *handled = s >= 0 && read_only_by(I, "Mul"); /* else a Tanh layer (its Softplus one first) */
    if (!*handled) return 0;
    if (ox_check_attrs(I, "")) return -1;
    return sym_out(I, OX_S_TANHSP, I->t[s].sym_src, 0);
}

int ox_op_reducemean(ox_imp *I) { return reduce_op(I, NET_REDUCEMEAN); }
int ox_op_reducemax(ox_imp *I) { return reduce_op(I, NET_REDUCEMAX); }

/* The axes of an Unsqueeze or a ReduceSum: the attribute below opset 13,
 * input 1 from it (a ReduceSum's may be absent: *na = 0); `attrs` the
 * node's other attributes.  At most 8 (more: *na = 0). */
static int axes_of(ox_imp *I, const char *attrs, int required, int64_t *ax, int *na)
{
    char allowed[64];
    *na = 0;
    if (I->opset < 13) {
        snprintf(allowed, sizeof allowed, "axes %s", attrs);
        if (ox_check_attrs(I, allowed)) return -1;
        const Onnx__AttributeProto *a = ox_att(I->nd, "axes");
        *na = a && a->n_ints <= 8 ? (int)a->n_ints : 0;
        for (int i = 0; i < *na; i++) ax[i] = a->ints[i];
        return 0;
    }
    ox_cval c;
    int bad;
    if (ox_check_attrs(I, attrs)) return -1;
    if (!required && ox_in_count(I) < 2) return 0;
    if (!ox_in_const(I, 1, 1, &bad) || ox_cval_of(I, ox_in_tensor(I, 1), "axes", &c)) return -1;
    *na = c.n <= 8 ? c.n : 0;
    for (int i = 0; i < *na; i++) ax[i] = (int64_t)c.v[i];
    return 0;
}

/* Input k when it is a 5-D view of branches (ox_tens.g5), else -1. */
static int in_view5(ox_imp *I, size_t k)
{
    int t = ox_in_tensor(I, k);
    return t >= 0 && I->t[t].kind == OX_ACT && I->t[t].g5 ? t : -1;
}

/* Output 0 of the current node as activation x viewed as [1, g, C/g, H, W]. */
static int alias5(ox_imp *I, int x, int g)
{
    if (ox_alias(I, x, 4, 0)) return -1;
    I->t[ox_smap_get(&I->tmap, I->nd->output[0])].g5 = g;
    return 0;
}

/* Tensor t is an activation in dse's own layout: NCHW, not flattened, no
 * pending pad (what a 5-D view of branches may be taken of). */
static int plain_act(const ox_tens *T)
{
    return T->kind == OX_ACT && !T->nhwc && !T->flat && !(T->pad[0] | T->pad[1] | T->pad[2] | T->pad[3]);
}

/* Output 0 of the current node, the layer just made, viewed as 5-D. */
static int mark5(ox_imp *I, int g)
{
    I->t[ox_smap_get(&I->tmap, I->nd->output[0])].g5 = g;
    return 0;
}

int ox_op_unsqueeze(ox_imp *I, int *handled)
{
    *handled = 0;
    int t = ox_in_tensor(I, 0);
    if (t < 0) return 0;
    const ox_tens *T = &I->t[t];
    int plain = plain_act(T) && T->rank == 4 && !T->g5;
    int64_t ax[8];
    int na = 0;
    if (plain) { /* torch.stack's [1, 1, C, H, W] of one branch */
        *handled = 1;
        if (axes_of(I, "", 1, ax, &na)) return -1;
        if (na != 1 || (ax[0] != 1 && ax[0] != -4))
            return ox_fail(I, "Unsqueeze of a 4-D activation: dse takes only axes [1] (torch.stack "
                           "of branches along axis 1)");
        return alias5(I, t, 1);
    }
    if (T->kind != OX_SYM || T->sym != OX_S_REDC) return 0;
    *handled = 1;
    if (axes_of(I, "", 1, ax, &na)) return -1;
    if (na != 1 || (ax[0] != 1 && ax[0] != -3))
        return ox_fail(I, "Unsqueeze of a reduction over channels: dse takes only axes [1] (back "
                       "to [1, 1, H, W])");
    int x = I->t[t].sym_src;
    net_kind kind = (net_kind)(int)I->t[t].sym_val;
    node_at was = node_enter(I, I->t[t].sym_node); /* the reduction's layer */
    int out = ox_smap_get(&I->tmap, I->nd->output[0]);
    ox_spec *s = NULL;
    if (I->t[out].nuse != 1) {
        ox_fail(I, "the output %.100s of a reduction over channels without keepdims is read by %d "
                "nodes; dse takes it only unsqueezed back, by one Unsqueeze", I->t[out].name,
                I->t[out].nuse);
    } else {
        I->t[out].kind = OX_UNDEF;
        net_attr a = net_attr_default(kind);
        a.rm_c = 1;
        s = ox_new_spec(I, kind, &a, 1, &x, 4);
    }
    node_leave(I, was);
    return s ? ox_alias(I, out, 4, 0) : -1;
}

/* GlobalMaxPool (tf2onnx's, Keras' GlobalMaxPooling2D): a ReduceMax over H
 * and W (torch.onnx writes adaptive_max_pool2d(1) as a MaxPool of the
 * map's size instead). */
int ox_op_globalmaxpool(ox_imp *I)
{
    if (ox_check_attrs(I, "")) return -1;
    int x = ox_in_act(I, 0);
    if (x < 0 || ox_act_rank(I, x, 4, "input")) return -1;
    net_attr a = net_attr_default(NET_REDUCEMAX);
    a.rm_h = a.rm_w = 1;
    return ox_new_spec(I, NET_REDUCEMAX, &a, 1, &x, 4) ? 0 : -1;
}

/* ---- branches: SKNet's and ResNeSt's split attention ----
 *
 *   SKNet     Unsqueeze(b_k, [1]) for each branch -> Concat(axis 1): the
 *             branches stacked, a 5-D view [1, K, C, H, W] of their
 *             channel Concat; ReduceSum(axis 1) -> a BranchSum; the
 *             attention's Reshape [1, K, C, 1, 1] -> Softmax(axis 1): a
 *             BranchSoftmax; Mul of the two views (per-channel) ->
 *             ReduceSum(axis 1): a Mul and a BranchSum
 *   ResNeSt   Reshape [1, K, C, H, W] of one Conv's K C channels (its
 *             radix groups); the attention's Reshape [1, G, K, -1] ->
 *             Transpose [0, 2, 1, 3] -> Softmax(axis 1) -> Reshape back:
 *             a BranchSoftmax of K branches in G groups (cardinality)
 *
 * A 5-D view is the 4-D activation it views (the floats are the same),
 * marked with its K (ox_tens.g5); only these operators read it. */

int ox_op_reducesum(ox_imp *I)
{
    int t = in_view5(I, 0);
    if (t < 0)
        return ox_fail(I, "ReduceSum of an activation: dse takes only the sum over axis 1 of a 5-D "
                       "view of branches (torch.stack(...).sum(1): SKNet, ResNeSt)");
    int64_t ax[8], keep = 1, noop = 0;
    int na;
    if (axes_of(I, "keepdims noop_with_empty_axes", 0, ax, &na) ||
        ox_att_int(I, "keepdims", 1, &keep) || ox_att_int(I, "noop_with_empty_axes", 0, &noop))
        return -1;
    if (na != 1 || (ax[0] != 1 && ax[0] != -4))
        return ox_fail(I, "ReduceSum of a 5-D view of branches: dse sums only over axis 1 (the "
                       "branches)");
    net_attr a = net_attr_default(NET_BSUM);
    a.groups = I->t[t].g5;
    if (!ox_new_spec(I, NET_BSUM, &a, 1, &t, 4)) return -1;
    return keep ? mark5(I, 1) : 0; /* keepdims: [1, 1, C, H, W] */
}

int ox_op_concat5(ox_imp *I, int *handled)
{
    int nin = ox_in_count(I), ins[1024];
    int64_t g = 0;
    *handled = 0;
    for (int k = 0; k < nin; k++)
        if (in_view5(I, (size_t)k) >= 0) *handled = 1;
    if (!*handled) return 0;
    int64_t axis;
    if (ox_check_attrs(I, "axis") || ox_att_int(I, "axis", 1, &axis)) return -1;
    if (nin > 1024) return ox_fail(I, "more than 1024 inputs");
    for (int k = 0; k < nin; k++) {
        if ((ins[k] = in_view5(I, (size_t)k)) < 0)
            return ox_fail(I, "concatenates a 5-D view of branches and %.100s, which is none",
                           ox_in_name(I, (size_t)k));
        const ox_tens *A = &I->t[ins[0]], *B = &I->t[ins[k]];
        if (B->shape.c / B->g5 != A->shape.c / A->g5 || B->shape.h != A->shape.h ||
            B->shape.w != A->shape.w)
            return ox_fail(I, "concatenates branches of different shapes (%s and %s)", A->name,
                           B->name);
        g += B->g5;
    }
    if (axis != 1 && axis != -4)
        return ox_fail(I, "Concat of 5-D views of branches along axis %lld; dse stacks them along "
                       "axis 1", (long long)axis);
    if (nin == 1) return ox_alias(I, ins[0], 0, 0);
    if (g > INT_MAX) return ox_fail(I, "concatenates more than %d branches", INT_MAX);
    return ox_new_spec(I, NET_CONCAT, NULL, nin, ins, 4) ? mark5(I, (int)g) : -1;
}

int ox_op_mul5(ox_imp *I, int *handled)
{
    int x = in_view5(I, 0), y = in_view5(I, 1);
    *handled = x >= 0 || y >= 0;
    if (!*handled) return 0;
    if (ox_check_attrs(I, "")) return -1;
    if (x < 0 || y < 0 || I->t[x].g5 != I->t[y].g5)
        return ox_fail(I, "multiplies a 5-D view of branches by %s; dse multiplies two such views "
                       "of the same branches (split attention)", x < 0 || y < 0 ?
                       "another tensor" : "a view of other branches");
    int g = I->t[x].g5;
    net_shape sx = I->t[x].shape, sy = I->t[y].shape;
    if ((sx.h * sx.w == 1 && sy.h * sy.w > 1) || (sx.c == 1 && sy.c > 1)) {
        int t = x; /* the per-channel or per-pixel factor second, as Mul takes it */
        x = y, y = t;
    }
    int ins[2] = {x, y};
    return ox_new_spec(I, NET_MUL, NULL, 2, ins, 4) ? mark5(I, g) : -1;
}

/* Softmax over axis 1 of a 5-D view (SKNet) or of ResNeSt's transposed
 * [1, K, G, -1] view; opset 13's Softmax (one axis). */
int ox_op_softmax5(ox_imp *I, int *handled)
{
    int t = ox_in_tensor(I, 0);
    int v5 = in_view5(I, 0) >= 0, rv = t >= 0 && I->t[t].kind == OX_SYM && I->t[t].sym == OX_S_RVIEWT;
    *handled = v5 || rv;
    if (!*handled) return 0;
    int64_t axis;
    if (ox_check_attrs(I, "axis") || ox_att_int(I, "axis", I->opset < 13 ? 1 : -1, &axis)) return -1;
    if (I->opset < 13)
        return ox_fail(I, "Softmax before opset 13 of a %d-D view of branches (over all of its "
                       "axes from %lld); dse takes opset 13's, over axis 1", v5 ? 5 : 4,
                       (long long)axis);
    if (axis != 1 && axis != (v5 ? -4 : -3))
        return ox_fail(I, "Softmax over axis %lld of a %d-D view of branches; dse takes the "
                       "softmax over axis 1 (the branches)", (long long)axis, v5 ? 5 : 4);
    if (rv) return sym_out_k(I, OX_S_RSOFT, I->t[t].sym_src, I->t[t].sym_val, I->t[t].sym_k);
    net_attr a = net_attr_default(NET_BSOFTMAX);
    a.groups = I->t[t].g5;
    return ox_new_spec(I, NET_BSOFTMAX, &a, 1, &t, 4) ? mark5(I, a.groups) : -1;
}

/* The Reshape of ResNeSt's softmax back to [1, N], [1, C, H, W] or a 5-D
 * view of its branches: the BranchSoftmax, made at the Softmax node. */
static int rsoft_reshape(ox_imp *I, int t, const int64_t *out, int n)
{
    int x = I->t[t].sym_src;
    net_shape s = I->t[x].shape;
    int to2 = n == 2 && out[1] == (int64_t)s.c * s.h * s.w;
    int to4 = n == 4 && out[1] == s.c && out[2] == s.h && out[3] == s.w;
    int to5 = n == 5 && out[1] >= 1 && out[1] * out[2] == s.c && out[3] == s.h && out[4] == s.w;
    if (!to2 && !to4 && !to5)
        return ox_fail(I, "Reshape of a radix softmax to other than [1, %lld], [1, %d, %d, %d] or "
                       "a 5-D view of its branches", (long long)s.c * s.h * s.w, s.c, s.h, s.w);
    node_at was = node_enter(I, I->t[t].sym_node);
    int sm = ox_smap_get(&I->tmap, I->nd->output[0]);
    ox_spec *sp = NULL;
    if (I->t[sm].nuse != 1) {
        ox_fail(I, "the radix softmax %.100s is read by %d nodes; dse takes it only reshaped back, "
                "by one Reshape", I->t[sm].name, I->t[sm].nuse);
    } else {
        I->t[sm].kind = OX_UNDEF;
        net_attr a = net_attr_default(NET_BSOFTMAX);
        a.groups = I->t[t].sym_k, a.card = (int)I->t[t].sym_val;
        sp = ox_new_spec(I, NET_BSOFTMAX, &a, 1, &x, 4);
        I->t[sm].rv_k = a.groups, I->t[sm].rv_g = a.card; /* value_info states its 4-D view */
    }
    node_leave(I, was);
    if (!sp) return -1;
    if (to4) return ox_alias(I, sm, 4, 0);
    if (to5) return alias5(I, sm, (int)out[1]);
    if (s.h * s.w == 1) return ox_alias(I, sm, 2, 0);
    return ox_new_spec(I, NET_FLATTEN, NULL, 1, &sm, 2) ? 0 : -1;
}

/* ---- the steps of LayerNorm and GELU ---- */

/* ImageScaler (an old opset's input normalization, tiny-YOLOv2's first
 * node): y = scale x + bias[c], a shift layer. */
int ox_op_imagescaler(ox_imp *I)
{
    if (ox_check_attrs(I, "scale bias")) return -1;
    double scale;
    if (ox_att_float(I, "scale", 1.0, &scale)) return -1;
    if (!isfinite(scale) || fabs(scale) > FLT_MAX) return ox_fail(I, "scale %g out of range", scale);
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    const Onnx__AttributeProto *ab = ox_att(I->nd, "bias");
    int64_t C = I->t[x].shape.c, n = ab ? (int64_t)ab->n_floats : 0;
    if (I->t[x].rank != 4 || I->t[x].nhwc) return ox_fail(I, "input must be a 4-D NCHW activation");
    if (ab && n != C)
        return ox_fail(I, "bias has %lld values, the input %lld channels", (long long)n, (long long)C);
    float *b = malloc((size_t)C * sizeof *b + 1);
    if (!b) return ox_fail(I, "out of memory");
    for (int64_t c = 0; c < C; c++) {
        double v = ab ? ox_float_dec(ab->floats[c]) : 0;
        if (!isfinite(v)) return free(b), ox_fail(I, "bias value %lld is not finite", (long long)c);
        b[c] = (float)v;
    }
    int rc = shift_layer(I, x, b, C, (float)scale);
    free(b);
    return rc;
}

static int add_const(ox_imp *I, int xi, size_t k, int neg);

int ox_op_sub(ox_imp *I)
{
    if (ox_check_attrs(I, "broadcast axis")) return -1;
    int m = in_sym(I, 1, OX_S_MEANC), x = ox_in_tensor(I, 0);
    if (m >= 0 && x >= 0 && same_act(I, x, I->t[m].sym_src))
        return sym_out(I, OX_S_CENT, I->t[m].sym_src, 0);
    if (ox_in_count(I) == 2 && ox_in_kind(I, 1) == OX_CONST && ox_in_kind(I, 0) != OX_CONST)
        return add_const(I, 0, 1, 1); /* x - c: an input normalization's mean */
    if (ox_in_count(I) == 2 && ox_in_kind(I, 0) != OX_CONST && ox_in_kind(I, 1) != OX_CONST) {
        /* a - b of two activations of one shape (PoolFormer's pool(x) - x):
         * an Add that subtracts */
        int ins[2];
        for (int k = 0; k < 2; k++)
            if ((ins[k] = ox_in_act(I, (size_t)k)) < 0) return -1;
        if (I->t[ins[0]].rank != I->t[ins[1]].rank || I->t[ins[0]].nhwc != I->t[ins[1]].nhwc)
            return ox_fail(I, "subtracts tensors of different ranks or layouts");
        net_attr a = net_attr_default(NET_ADD);
        a.add_sub = 1;
        return ox_new_spec(I, NET_ADD, &a, 2, ins, I->t[ins[0]].rank) ? 0 : -1;
    }
    return ox_fail(I, "Sub is imported only as x - mean(x) of a LayerNorm, an activation minus "
                   "a constant, or the difference of two activations (docs/onnx.md)");
}

int ox_op_pow(ox_imp *I)
{
    if (ox_check_attrs(I, "")) return -1;
    int c = in_sym(I, 0, OX_S_CENT), is;
    double e;
    if (c >= 0 && ox_in_kind(I, 1) == OX_CONST) {
        if (scalar(I, 1, &is, &e)) return -1;
        if (is && e == 2) return sym_out(I, OX_S_SQ, I->t[c].sym_src, 0);
    }
    return ox_fail(I, "Pow is imported only as (x - mean(x))^2 of a LayerNorm");
}

int ox_op_sqrt(ox_imp *I)
{
    if (ox_check_attrs(I, "")) return -1;
    int v = in_sym(I, 0, OX_S_VARE);
    if (v >= 0) return sym_out(I, OX_S_STD, I->t[v].sym_src, I->t[v].sym_val);
    return ox_fail(I, "Sqrt is imported only as sqrt(variance + epsilon) of a LayerNorm");
}

int ox_op_erf(ox_imp *I)
{
    if (ox_check_attrs(I, "")) return -1;
    int s = in_sym(I, 0, OX_S_SCALED);
    if (s >= 0 && near(I->t[s].sym_val, 1 / sqrt(2.0)))
        return sym_out(I, OX_S_ERF, I->t[s].sym_src, 0);
    return ox_fail(I, "Erf is imported only as erf(x / sqrt 2) of a GELU");
}

/* A LayerNorm of x over its channels, scale 1 and shift 0 so far. */
static int layernorm(ox_imp *I, int x, double eps)
{
    static const float fill[2] = {1, 0};
    net_attr a = net_attr_default(NET_LAYERNORM);
    a.bn_eps = eps;
    return vec_layer(I, NET_LAYERNORM, &a, x, NULL, 0, 0, 2, fill) ? 0 : -1;
}

int ox_op_div(ox_imp *I)
{
    if (ox_check_attrs(I, "broadcast axis")) return -1;
    int c = in_sym(I, 0, OX_S_CENT), d = in_sym(I, 1, OX_S_STD);
    if (c >= 0 && d >= 0 && I->t[c].sym_src == I->t[d].sym_src)
        return layernorm(I, I->t[c].sym_src, I->t[d].sym_val);
    int nc = in_sym(I, 1, OX_S_L2C), nb = in_sym(I, 1, OX_S_L2), x0 = ox_in_tensor(I, 0);
    if ((nc >= 0 || nb >= 0) && x0 >= 0 && same_act(I, x0, I->t[nc >= 0 ? nc : nb].sym_src))
        return l2norm_layer(I, I->t[nc >= 0 ? nc : nb].sym_src, nc >= 0 ? I->t[nc].sym_val : 0);
    if (ox_in_kind(I, 1) != OX_CONST)
        return ox_fail(I, "Div is imported only by a constant, or as the last step of a LayerNorm "
                       "or of an L2 normalisation (x divided by its own norm)");
    int is;
    double v;
    if (scalar(I, 1, &is, &v)) return -1;
    int s = in_sym(I, 0, OX_S_SCALED);
    if (is && v == 0) return ox_fail(I, "division by zero");
    if (is && s >= 0) return sym_out(I, OX_S_SCALED, I->t[s].sym_src, I->t[s].sym_val / v);
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    if (is) return sym_out(I, OX_S_SCALED, x, 1 / v);
    float *f;
    int64_t n;
    if (perchan(I, 1, x, 1, &f, &n)) return -1;
    for (int64_t i = 0; i < n; i++) f[i] = 1 / f[i];
    int rc = scale_layer(I, x, f, n);
    free(f);
    return rc;
}

/* x times a constant (input k): folded into a LayerNorm before it,
 * remembered as a scaling (a scalar), or a Scale layer. */
static int mul_const(ox_imp *I, int xi, size_t k)
{
    int is;
    double v;
    if (scalar(I, k, &is, &v)) return -1;
    int t = ox_in_tensor(I, xi);
    if (t < 0) return ox_fail(I, "input %d is missing", xi);
    if (is && I->t[t].kind == OX_SYM) {
        int sym = I->t[t].sym, src = I->t[t].sym_src;
        if (sym == OX_S_SCALED) return sym_out(I, OX_S_SCALED, src, I->t[t].sym_val * v);
        if (sym == OX_S_XERF1 && v == 0.5) {
            ox_spec *s = ox_new_spec(I, NET_GELU, NULL, 1, &src, I->t[src].rank);
            return s ? 0 : -1;
        }
        if (sym == OX_S_ERF1 && v == 0.5) return sym_out(I, OX_S_HALFERF1, src, 0);
    }
    int x = ox_in_act(I, (size_t)xi);
    if (x < 0) return -1;
    ox_spec *ln = norm_spec(I, x);
    if (!ln && is) return sym_out(I, OX_S_SCALED, x, v);
    float *f;
    int64_t n;
    if (perchan(I, k, x, I->keep, &f, &n)) return -1;
    if (!ln) {
        int rc = scale_layer(I, x, f, n);
        free(f);
        return rc;
    }
    /* LayerNorm's (GroupNorm's) affine scale: scale and shift (so far) times f. */
    if (I->keep) {
        int64_t C = I->t[x].shape.c;
        for (int64_t c = 0; c < 2 * C; c++) ln->w[c] *= f[n == 1 ? 0 : c % C];
    }
    free(f);
    if (ox_extra_outputs_unused(I)) return -1;
    return ox_alias(I, x, 0, 0);
}

/* Mul(X, HardSigmoid(X; 1/6, 1/2)) is HardSwish(X): the HardSigmoid layer
 * becomes it (torch.onnx below opset 14).  1 if fused. */
static int hardswish(ox_imp *I, int a, int b)
{
    for (int pass = 0; pass < 2; pass++, a ^= b, b ^= a, a ^= b) {
        ox_spec *s = sole_spec(I, b, NET_HSIGMOID);
        if (!s || !same_act(I, s->in[0], a) || !near(s->a.hs_alpha, 1 / 6.0) || s->a.hs_beta != 0.5)
            continue;
        s->kind = NET_HSWISH;
        s->a = net_attr_default(NET_HSWISH);
        return ox_extra_outputs_unused(I) || ox_alias(I, b, 0, 0) ? -1 : 1;
    }
    return 0;
}

int ox_op_mul(ox_imp *I)
{
    if (ox_check_attrs(I, "broadcast axis consumed_inputs")) return -1;
    if (ox_in_count(I) != 2) return ox_fail(I, "Mul takes two inputs");
    int k0 = ox_in_kind(I, 0), k1 = ox_in_kind(I, 1);
    if (k1 == OX_CONST && k0 != OX_CONST) return mul_const(I, 0, 1);
    if (k0 == OX_CONST && k1 != OX_CONST) return mul_const(I, 1, 0);
    int t0 = ox_in_tensor(I, 0), t1 = ox_in_tensor(I, 1);
    for (int pass = 0; pass < 2 && t0 >= 0 && t1 >= 0; pass++) { /* a missing input: ox_in_act says */
        int a = pass ? t1 : t0, b = pass ? t0 : t1;
        const ox_tens *A = &I->t[a], *B = &I->t[b];
        if (B->kind != OX_SYM) continue;
        int src = B->sym_src;
        /* X (1 + erf), then times 1/2 */
        if (B->sym == OX_S_ERF1 && same_act(I, a, src)) return sym_out(I, OX_S_XERF1, src, 0);
        /* X/2 times (1 + erf), or X times (1 + erf)/2: the GELU */
        if ((B->sym == OX_S_ERF1 && A->kind == OX_SYM && A->sym == OX_S_SCALED &&
             A->sym_val == 0.5 && A->sym_src == src) ||
            (B->sym == OX_S_HALFERF1 && same_act(I, a, src)))
            return ox_new_spec(I, NET_GELU, NULL, 1, &src, I->t[src].rank) ? 0 : -1;
        /* x tanh(softplus(x)): Mish */
        if (B->sym == OX_S_TANHSP && same_act(I, a, src))
            return ox_new_spec(I, NET_MISH, NULL, 1, &src, I->t[src].rank) ? 0 : -1;
        /* (x - mean)(x - mean) */
        if (B->sym == OX_S_CENT && A->kind == OX_SYM && A->sym == OX_S_CENT && A->sym_src == src)
            return sym_out(I, OX_S_SQ, src, 0);
    }
    int x = ox_in_act(I, 0), y = x < 0 ? -1 : ox_in_act(I, 1);
    if (y < 0) return -1;
    int f = hardswish(I, x, y);
    if (f) return f < 0 ? -1 : 0;
    /* Mul takes the per-channel factor (C x 1 x 1) or the per-pixel one
     * (1 x H x W) second. */
    net_shape sx = I->t[x].shape, sy = I->t[y].shape;
    if ((sx.h * sx.w == 1 && sy.h * sy.w > 1) || (sx.c == 1 && sy.c > 1)) {
        int t = x;
        x = y, y = t;
    }
    if (I->t[x].rank != I->t[y].rank)
        return ox_fail(I, "multiplies a %d-D and a %d-D tensor; dse multiplies tensors of one rank",
                       I->t[x].rank, I->t[y].rank);
    if (I->t[x].nhwc != I->t[y].nhwc && I->t[x].rank == 4 && I->t[y].rank == 4)
        return ox_fail(I, "multiplies an NCHW and an NHWC tensor");
    int ins[2] = {x, y};
    return ox_new_spec(I, NET_MUL, NULL, 2, ins, I->t[x].rank) ? 0 : -1;
}

/* Add of a constant (input k) to input xi, or its Sub when neg: the bias
 * of a Conv or FC that has none yet (a MatMul's, the 1x1 Conv of an NHWC
 * MatMul, a bias-free Conv's added or subtracted after it), a LayerNorm's
 * shift, epsilon or the 1 of a GELU; else a shift layer. */
static int add_const(ox_imp *I, int xi, size_t k, int neg)
{
    int t = ox_in_tensor(I, xi), is;
    double v;
    if (t < 0) return ox_fail(I, "input %d is missing", xi);
    if (I->t[t].kind == OX_SYM) {
        if (scalar(I, k, &is, &v)) return -1;
        int sym = I->t[t].sym, src = I->t[t].sym_src;
        if (!neg && is && sym == OX_S_VAR) return sym_out(I, OX_S_VARE, src, ox_float_dec((float)v));
        if (!neg && is && sym == OX_S_ERF && v == 1) return sym_out(I, OX_S_ERF1, src, 0);
    }
    int x = ox_in_act(I, (size_t)xi);
    if (x < 0) return -1;
    ox_spec *s = &I->s[I->t[x].spec >= 0 ? I->t[x].spec : 0];
    if (I->t[x].spec >= 0 && (s->kind == NET_FC || s->kind == NET_CONV) && s->bias_open &&
        s->out == x && I->t[x].nuse == 1) {
        int64_t n, N = s->a.out_c;
        float *w;
        /* one value per output channel along the channel axis, or one
         * (a [W]-shaped constant on an NCHW map runs along its width) */
        if (perchan(I, k, x, 1, &w, &n)) return -1;
        if (n != N && n != 1) {
            free(w);
            return ox_fail(I, "bias %.100s has %lld values; dse needs %lld (one per output) or 1",
                           ox_in_name(I, k), (long long)n, (long long)N);
        }
        float *b = malloc((size_t)N * sizeof *b + 1);
        if (!b) return free(w), ox_fail(I, "out of memory");
        for (int64_t o = 0; o < N; o++) b[o] = neg ? -w[n == 1 ? 0 : o] : w[n == 1 ? 0 : o];
        free(w);
        int rc = I->keep ? ox_spec_append(I, s, b, N) : (s->nw += N, 0);
        free(b);
        if (rc) return -1;
        s->a.bias = 1;
        s->bias_open = 0;
        if (ox_extra_outputs_unused(I)) return -1;
        return ox_alias(I, x, 0, 0);
    }
    ox_spec *ln = norm_spec(I, x);
    float *f;
    int64_t n;
    if (perchan(I, k, x, I->keep, &f, &n)) return -1;
    if (I->keep && neg)
        for (int64_t i = 0; i < n; i++) f[i] = -f[i];
    if (!ln) { /* anything else: a shift layer */
        int rc = shift_layer(I, x, f, n, 1);
        free(f);
        return rc;
    }
    if (I->keep) {
        int64_t C = I->t[x].shape.c;
        for (int64_t c = 0; c < C; c++) ln->w[C + c] += f[n == 1 ? 0 : c];
    }
    free(f);
    if (ox_extra_outputs_unused(I)) return -1;
    return ox_alias(I, x, 0, 0);
}

/* Add and Sum: of activations, a NET_ADD; with a constant, add_const. */
int ox_op_add(ox_imp *I, int sum)
{
    if (ox_check_attrs(I, sum ? "consumed_inputs" : "broadcast axis consumed_inputs")) return -1;
    int nin = ox_in_count(I);
    if (nin < 2) return ox_fail(I, "needs at least two inputs");
    if (!sum && nin != 2) return ox_fail(I, "Add takes two inputs");
    int cst = -1;
    for (int k = 0; k < nin; k++)
        if (ox_in_kind(I, (size_t)k) == OX_CONST) cst = k;
    if (cst >= 0) {
        if (sum || nin != 2)
            return ox_fail(I, "adding constant %.100s in a Sum is unsupported",
                           ox_in_name(I, (size_t)cst));
        return add_const(I, 1 - cst, (size_t)cst, 0);
    }
    int ins[64];
    if (nin > 64) return ox_fail(I, "more than 64 inputs");
    for (int k = 0; k < nin; k++) {
        if ((ins[k] = ox_in_act(I, (size_t)k)) < 0) return -1;
        if (I->t[ins[k]].rank != I->t[ins[0]].rank)
            return ox_fail(I, "adds a %d-D and a %d-D tensor; dse adds tensors of one shape",
                           I->t[ins[0]].rank, I->t[ins[k]].rank);
        if (I->t[ins[k]].nhwc != I->t[ins[0]].nhwc)
            return ox_fail(I, "adds an NCHW and an NHWC tensor");
    }
    return ox_new_spec(I, NET_ADD, NULL, nin, ins, I->t[ins[0]].rank) ? 0 : -1;
}

/* ---- LayerNormalization (opset 17) ---- */

int ox_op_layernorm(ox_imp *I)
{
    if (ox_check_attrs(I, "axis epsilon stash_type")) return -1;
    int64_t axis;
    double eps;
    if (ox_att_int(I, "axis", -1, &axis) || ox_att_float(I, "epsilon", 1e-5, &eps)) return -1;
    int x = ox_in_act(I, 0);
    if (x < 0) return -1;
    int r = I->t[x].rank;
    if (axis < 0) axis += r;
    net_shape s = I->t[x].shape;
    /* Normalised: axes [axis, r).  dse's LayerNorm is over the channels. */
    int ok = (axis == r - 1 && axis == chan_axis(I, x)) ||
             (r == 4 && axis == 1 && !I->t[x].nhwc && s.h == 1 && s.w == 1);
    if (!ok)
        return ox_fail(I, "LayerNormalization from axis %lld of a %d-D %s tensor: dse normalises "
                       "over the channels only", (long long)axis, r, I->t[x].nhwc ? "NHWC" : "NCHW");
    if (!(eps >= 0)) return ox_fail(I, "epsilon must be non-negative");
    int nin = ox_in_count(I);
    float *sc = NULL, *sh = NULL;
    int64_t nsc = 0, nsh = 0;
    if (perchan(I, 1, x, I->keep, &sc, &nsc)) return -1;
    if (nin > 2 && perchan(I, 2, x, I->keep, &sh, &nsh)) return free(sc), -1;
    static const float fill[2] = {1, 0};
    net_attr a = net_attr_default(NET_LAYERNORM);
    a.bn_eps = eps;
    ox_spec *ln = vec_layer(I, NET_LAYERNORM, &a, x, sc, nsc, 0, 2, fill);
    if (ln && sh && I->keep)
        for (int64_t c = 0; c < s.c; c++) ln->w[s.c + c] = sh[nsh == 1 ? 0 : c];
    free(sc);
    free(sh);
    return ln ? 0 : -1;
}

/* ---- GroupNorm ---- */

/* The node I->nd normalising x in G groups (attributes `attrs`), an
 * InstanceNormalization of its grouped view or a GroupNormalization: its
 * epsilon, its scale and B of n values (G: one per group, or C: one per
 * channel); with w and I->keep, the layer's weights they make (each
 * channel's scale, then its shift: 2 C floats, malloc'd) in *w. */
static int gn_read(ox_imp *I, int x, int G, int n, const char *attrs, double *eps, float **w)
{
    if (w) *w = NULL;
    if (ox_check_attrs(I, attrs) || ox_att_float(I, "epsilon", 1e-5, eps)) return -1;
    if (!(*eps >= 0)) return ox_fail(I, "epsilon must be non-negative");
    const Onnx__TensorProto *tp[2];
    int bad;
    for (int k = 0; k < 2; k++) {
        tp[k] = ox_in_const(I, (size_t)k + 1, 1, &bad);
        if (bad) return -1;
        if (tp[k]->n_dims != 1 || tp[k]->dims[0] != n)
            return ox_fail(I, "%s %.100s must be one value per %s ([%d])", k ? "B" : "scale",
                           ox_in_name(I, (size_t)k + 1),
                           n == G ? "group of the GroupNorm's view" : "channel", n);
    }
    if (!w || !I->keep) return 0;
    int C = I->t[x].shape.c, cg = C / G;
    float *o = malloc((size_t)(2 * C) * sizeof *o + 1);
    if (!o) return ox_fail(I, "out of memory");
    for (int k = 0; k < 2; k++) {
        int64_t n;
        float *v = ox_const_floats(I, tp[k], k ? "B" : "scale", (size_t)k + 1, 1, &n, &bad);
        if (bad || !v) return free(o), free(v), -1;
        for (int c = 0; c < C; c++) o[k * C + c] = v[n == G ? c / cg : c];
        free(v);
    }
    *w = o;
    return 0;
}

int ox_op_instnorm_grouped(ox_imp *I, int *handled)
{
    *handled = 0;
    int t = ox_in_tensor(I, 0);
    if (t < 0 || I->t[t].kind != OX_SYM || I->t[t].sym != OX_S_GVIEW) return 0;
    *handled = 1;
    int x = I->t[t].sym_src, G = (int)I->t[t].sym_val;
    double eps;
    if (gn_read(I, x, G, G, "epsilon", &eps, NULL)) return -1;
    return sym_out(I, OX_S_GNORM, x, G);
}

int ox_op_groupnormalization(ox_imp *I)
{
    int x = ox_in_act(I, 0);
    if (x < 0 || ox_act_rank(I, x, 4, "input")) return -1;
    int64_t G;
    if (!ox_att(I->nd, "num_groups")) return ox_fail(I, "num_groups is required");
    if (ox_att_int(I, "num_groups", 1, &G)) return -1;
    int C = I->t[x].shape.c;
    if (G < 1 || G > C || C % G)
        return ox_fail(I, "num_groups %lld does not divide %d channels", (long long)G, C);
    /* scale and bias: one value per group in opsets 18-20, per channel
     * from 21 (the operator's definition changed). */
    double eps;
    float *w = NULL;
    if (gn_read(I, x, (int)G, I->opset >= 21 ? C : (int)G, "epsilon num_groups stash_type", &eps, &w))
        return -1;
    net_attr a = net_attr_default(NET_GROUPNORM);
    a.groups = (int)G;
    a.bn_eps = eps;
    ox_spec *s = ox_new_spec(I, NET_GROUPNORM, &a, 1, &x, 4);
    int rc = s ? ox_spec_append(I, s, w, 2 * (int64_t)C) : -1;
    free(w);
    return rc;
}

/* The GroupNorm layer of x in G groups, made at its InstanceNormalization
 * (node `node`, whose name it takes): its output tensor, or -1. */
static int gn_layer(ox_imp *I, int node, int x, int G)
{
    node_at was = node_enter(I, node);
    int out = ox_smap_get(&I->tmap, I->nd->output[0]);
    if (I->t[out].nuse != 1) { /* its other readers would read the layer's [1, C, H, W] */
        node_leave(I, was);
        return ox_fail(I, "the GroupNorm's InstanceNormalization output %.100s is read by %d nodes; "
                       "dse fuses the pattern only when one Reshape reads it", I->t[out].name,
                       I->t[out].nuse), -1;
    }
    I->t[out].kind = OX_UNDEF;
    double eps;
    float *w = NULL;
    ox_spec *s = NULL;
    if (!gn_read(I, x, G, G, "epsilon", &eps, &w)) {
        net_attr a = net_attr_default(NET_GROUPNORM);
        a.groups = G;
        a.bn_eps = eps;
        s = ox_new_spec(I, NET_GROUPNORM, &a, 1, &x, 4);
        if (s && ox_spec_append(I, s, w, 2 * (int64_t)I->t[x].shape.c)) s = NULL;
    }
    free(w);
    node_leave(I, was);
    return s ? out : -1;
}

/* ---- the channel shuffle's Reshapes ---- */

/* A Reshape's target against input dims in[0..nin): 0 copies, -1 infers. */
static int resolve(ox_imp *I, const int64_t *in, int nin, const int64_t *tg, int n, int allowzero,
                   int64_t *out)
{
    int64_t total = 1, known = 1;
    int neg = -1;
    for (int k = 0; k < nin; k++) total *= in[k];
    for (int k = 0; k < n; k++) {
        out[k] = tg[k] == 0 && !allowzero ? (k < nin ? in[k] : -2) : tg[k];
        if (out[k] == -1) {
            if (neg >= 0) return ox_fail(I, "Reshape target has two -1");
            neg = k;
        } else if (out[k] < 0 || out[k] > NET_COUNT_MAX || (known && out[k] > NET_COUNT_MAX / known)) {
            /* bounded so the products below cannot overflow (the file's numbers are anything) */
            return ox_fail(I, "Reshape target dimension %lld", (long long)tg[k]);
        } else {
            known *= out[k];
        }
    }
    if (neg >= 0) out[neg] = known ? total / known : 0;
    int64_t got = 1;
    for (int k = 0; k < n; k++) got *= out[k];
    if (got != total) return ox_fail(I, "Reshape of %lld elements to %lld", (long long)total, (long long)got);
    return 0;
}

int ox_op_reshape5(ox_imp *I, int *handled)
{
    *handled = 0;
    int t = ox_in_tensor(I, 0), bad, n = 0;
    if (t < 0 || ox_in_kind(I, 1) != OX_CONST) return 0;
    int grouped_t = I->t[t].kind == OX_SYM && I->t[t].sym == OX_S_GROUPEDT;
    int view6t = I->t[t].kind == OX_SYM && I->t[t].sym == OX_S_VIEW6T;
    int view6dt = I->t[t].kind == OX_SYM && I->t[t].sym == OX_S_VIEW6DT;
    int gnorm = I->t[t].kind == OX_SYM && I->t[t].sym == OX_S_GNORM;
    int rsoft = I->t[t].kind == OX_SYM && I->t[t].sym == OX_S_RSOFT;
    int act = plain_act(&I->t[t]);
    if (!grouped_t && !view6t && !view6dt && !gnorm && !rsoft && !act) return 0;
    const Onnx__TensorProto *sh = ox_in_const(I, 1, 1, &bad);
    int64_t tg[8], allowzero = 0;
    if (!sh || ox_tp_ints(ox_dc(I, "shape", ox_in_name(I, 1)), sh, tg, 8, &n)) return -1;
    if (ox_att_int(I, "allowzero", 0, &allowzero)) return -1;
    int x = grouped_t || view6t || view6dt || gnorm || rsoft ? I->t[t].sym_src : t;
    net_shape s = I->t[x].shape;
    int64_t out[8];
    if (rsoft) { /* [1, K, G, C/(G K) H W] back to [1, N], [1, C, H, W] or 5-D */
        int K = I->t[t].sym_k, G = (int)I->t[t].sym_val;
        int64_t in4[4] = {1, K, G, (int64_t)s.c / (G * K) * s.h * s.w};
        if (resolve(I, in4, 4, tg, n, (int)allowzero, out)) return -1;
        *handled = 1;
        if (ox_check_attrs(I, "allowzero")) return -1;
        return rsoft_reshape(I, t, out, n);
    }
    if (grouped_t) {
        int g = (int)I->t[t].sym_val;
        int64_t in5[5] = {1, s.c / g, g, s.h, s.w};
        if (n != 4) return ox_fail(I, "Reshape of a channel shuffle's view to %d-D", n);
        if (resolve(I, in5, 5, tg, n, (int)allowzero, out)) return -1;
        if (out[0] != 1 || out[1] != s.c || out[2] != s.h || out[3] != s.w)
            return ox_fail(I, "Reshape of a channel shuffle's view to other than [1, %d, %d, %d]",
                           s.c, s.h, s.w);
        *handled = 1;
        if (ox_check_attrs(I, "allowzero")) return -1;
        net_attr a = net_attr_default(NET_SHUFFLE);
        a.groups = g;
        return ox_new_spec(I, NET_SHUFFLE, &a, 1, &x, 4) ? 0 : -1;
    }
    if (gnorm) { /* [1, G, C/G H W] -> [1, C, H, W]: the GroupNorm */
        int G = (int)I->t[t].sym_val;
        int64_t in3[3] = {1, G, (int64_t)(s.c / G) * s.h * s.w};
        if (n != 4) return ox_fail(I, "Reshape of a GroupNorm's 3-D view to %d-D", n);
        if (resolve(I, in3, 3, tg, n, (int)allowzero, out)) return -1;
        if (out[0] != 1 || out[1] != s.c || out[2] != s.h || out[3] != s.w)
            return ox_fail(I, "Reshape of a GroupNorm's 3-D view to other than [1, %d, %d, %d]",
                           s.c, s.h, s.w);
        *handled = 1;
        if (ox_check_attrs(I, "allowzero")) return -1;
        int o = gn_layer(I, I->t[t].sym_node, x, G);
        return o < 0 ? -1 : ox_alias(I, o, 4, 0);
    }
    if (view6t) { /* [1, C', H, r, W, r] -> [1, C', H r, W r]: the pixel shuffle */
        int f = (int)fabs(I->t[t].sym_val), cp = s.c / (f * f);
        int64_t in6[6] = {1, cp, s.h, f, s.w, f};
        if (n != 4) return ox_fail(I, "Reshape of a pixel shuffle's 6-D view to %d-D", n);
        if (resolve(I, in6, 6, tg, n, (int)allowzero, out)) return -1;
        if (out[0] != 1 || out[1] != cp || out[2] != (int64_t)s.h * f || out[3] != (int64_t)s.w * f)
            return ox_fail(I, "Reshape of a pixel shuffle's 6-D view to other than [1, %d, %lld, "
                           "%lld]", cp, (long long)s.h * f, (long long)s.w * f);
        *handled = 1;
        if (ox_check_attrs(I, "allowzero")) return -1;
        net_attr a = net_attr_default(NET_SHUFFLEUP);
        a.up_h = f;
        a.ps_dcr = I->t[t].sym_val < 0;
        return ox_new_spec(I, NET_SHUFFLEUP, &a, 1, &x, 4) ? 0 : -1;
    }
    if (view6dt) { /* [1, C, r, r, H/r, W/r] (or r, r, C) -> [1, C r^2, H/r, W/r] */
        int f = (int)fabs(I->t[t].sym_val);
        int64_t in6[6] = {1, s.c, f, f, s.h / f, s.w / f};
        if (I->t[t].sym_val < 0) in6[1] = f, in6[3] = s.c;
        if (n != 4) return ox_fail(I, "Reshape of a pixel unshuffle's 6-D view to %d-D", n);
        if (resolve(I, in6, 6, tg, n, (int)allowzero, out)) return -1;
        if (out[0] != 1 || out[1] != (int64_t)s.c * f * f || out[2] != s.h / f || out[3] != s.w / f)
            return ox_fail(I, "Reshape of a pixel unshuffle's 6-D view to other than [1, %lld, %d, "
                           "%d]", (long long)s.c * f * f, s.h / f, s.w / f);
        *handled = 1;
        if (ox_check_attrs(I, "allowzero")) return -1;
        net_attr a = net_attr_default(NET_SHUFFLEDOWN);
        a.up_h = f;
        a.ps_dcr = I->t[t].sym_val < 0;
        return ox_new_spec(I, NET_SHUFFLEDOWN, &a, 1, &x, 4) ? 0 : -1;
    }
    int r = I->t[x].rank, g5 = I->t[x].g5;
    int64_t in[4] = {1, s.c, s.h, s.w}, in5[5] = {1, g5, g5 ? s.c / g5 : 0, s.h, s.w};
    if (r == 2) in[1] = net_shape_numel(s);
    if (g5 && (n < 4 || n > 5)) {
        *handled = 1;
        return ox_fail(I, "Reshape of a 5-D view of branches to %d-D; dse takes [1, C, H, W] or "
                       "another 5-D view of them", n);
    }
    if (n < 1 || n > 6 || resolve(I, g5 ? in5 : in, g5 ? 5 : r, tg, n, (int)allowzero, out)) {
        *handled = g5 != 0; /* resolve's line; else op_reshape says why */
        return g5 ? -1 : 0;
    }
    if (n == 6 && r == 4 && out[0] == 1 && out[1] == s.c && out[3] == out[5] && out[3] > 1 &&
        out[3] <= 4096 && out[2] * out[3] == s.h && out[4] * out[5] == s.w) {
        /* [1, C, H/r, r, W/r, r] of a pixel unshuffle begins */
        *handled = 1;
        if (ox_check_attrs(I, "allowzero")) return -1;
        return sym_out(I, OX_S_VIEW6D, x, (double)out[3]);
    }
    if (n == 6) { /* [1, a, b, c, H, W] of a pixel shuffle (either order) begins */
        if (r != 4 || out[0] != 1 || out[4] != s.h || out[5] != s.w || out[2] > 4096 ||
            (out[2] != out[3] && out[1] != out[2]))
            return 0;
        *handled = 1;
        if (ox_check_attrs(I, "allowzero")) return -1;
        return sym_out(I, OX_S_VIEW6, x, (double)(out[1] * 8192 + out[2]));
    }
    if (n == 3) { /* [1, G, C/G H W]: a GroupNorm begins */
        if (r != 4 || out[0] != 1 || out[1] < 1 || s.c % out[1] ||
            out[2] != (int64_t)(s.c / out[1]) * s.h * s.w)
            return 0;
        *handled = 1;
        if (ox_check_attrs(I, "allowzero")) return -1;
        return sym_out(I, OX_S_GVIEW, x, (double)out[1]);
    }
    if (n == 5) { /* [1, g, C/g, H, W]: a channel shuffle or a view of branches begins */
        if (r != 4 || out[0] != 1 || out[1] < 1 || out[1] * out[2] != s.c || out[3] != s.h ||
            out[4] != s.w)
            return 0;
        *handled = 1;
        if (ox_check_attrs(I, "allowzero")) return -1;
        return alias5(I, x, (int)out[1]);
    }
    /* Views that move nothing: to its own dims, or [1, N] as [1, N, 1, 1]. */
    int same = n == r;
    for (int k = 0; same && k < n; k++) same = out[k] == in[k];
    int up = r == 2 && n == 4 && out[0] == 1 && out[1] == in[1] && out[2] == 1 && out[3] == 1;
    if (!same && !up && n == 4 && r == 4 && out[0] == 1 && out[1] >= 1 && out[2] >= 1 &&
        s.c % (out[1] * out[2]) == 0 && out[3] == (int64_t)s.c / (out[1] * out[2]) * s.h * s.w) {
        /* [1, G, K, -1]: ResNeSt's radix softmax begins */
        *handled = 1;
        if (ox_check_attrs(I, "allowzero")) return -1;
        return sym_out_k(I, OX_S_RVIEW, x, (double)out[1], (int)out[2]);
    }
    if (!same && !up) {
        if (!g5) return 0;
        *handled = 1;
        return ox_fail(I, "Reshape of a 5-D view of branches [1, %d, %d, %d, %d] to other than "
                       "[1, %d, %d, %d] or another 5-D view of them", g5, s.c / g5, s.h, s.w, s.c,
                       s.h, s.w);
    }
    *handled = 1;
    if (ox_check_attrs(I, "allowzero")) return -1;
    return ox_alias(I, x, n, 0);
}

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

/* Pad with zeros on H and W only: no layer, the padding travels with the
 * tensor to the Conv or AveragePool that reads it (fold_pad). */
static int op_pad(ox_imp *I)
{
    int old = I->opset < 11;
    if (ox_check_attrs(I, old ? "mode pads value" : "mode")) return -1;
    int x = ox_in_act(I, 0), mode, n = 0;
    if (x < 0) return -1;
    if (ox_att_choice(I, "mode", "constant reflect edge wrap", &mode)) return -1;
    if (mode) return ox_fail(I, "only constant (zero) padding is supported");
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
    if (value != 0) return ox_fail(I, "padding with %g: dse pads with zeros only", value);
    for (int k = 0; k < n; k++)
        if (v[k] < 0 || v[k] > OX_ATTR_MAX) return ox_fail(I, "pad %lld out of range (no cropping)",
                                                      (long long)v[k]);
    int spatial = r == 4 ? (int)(v[2] | v[3] | v[6] | v[7]) : 0;
    if (v[0] || v[1] || v[r] || v[r + 1])
        return ox_fail(I, "padding the batch or channel axis is unsupported");
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
    for (int i = 0; i < 4; i++)
        if (W->dims[i] < 1 || W->dims[i] > INT32_MAX)
            return ox_fail(I, "weight %.100s has dimension %lld", ox_in_name(I, 1), (long long)W->dims[i]);
    if (ox_att(I->nd, "kernel_shape") && (a.kh != W->dims[2] || a.kw != W->dims[3]))
        return ox_fail(I, "kernel_shape %dx%d but weight %.100s is %lldx%lld", a.kh, a.kw,
                     ox_in_name(I, 1), (long long)W->dims[2], (long long)W->dims[3]);
    a.kh = (int)W->dims[2], a.kw = (int)W->dims[3];
    a.out_c = (int)W->dims[0];
    if (autopad) ox_same_guess(&a, autopad);
    if (ox_fold_pad(I, x, &a, autopad)) return -1;
    a.bias = B != NULL;
    ox_spec *s = ox_new_spec(I, NET_CONV, &a, 1, &x, 4);
    if (!s) return -1;
    s->autopad = autopad;
    int64_t n;
    float *w = ox_const_floats(I, W, "weight", 1, I->keep, &n, &bad);
    if (bad || ox_spec_append(I, s, w, n)) return free(w), -1;
    free(w);
    if (B) {
        w = ox_const_floats(I, B, "bias", 2, I->keep, &n, &bad);
        if (bad) return -1;
        if (B->n_dims != 1 || n != a.out_c) {
            free(w);
            return ox_fail(I, "bias %.100s has %lld values, the weight has %d output channels",
                         ox_in_name(I, 2), (long long)n, a.out_c);
        }
        if (ox_spec_append(I, s, w, n)) return free(w), -1;
        free(w);
    }
    return 0;
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
    if (lo != 0)
        return ox_fail(I, "Clip with min %g: dse supports only min 0 (a ReLU, e.g. ReLU6)", lo);
    if (!(hi > 0)) return ox_fail(I, "Clip with max %g: dse needs max > 0", hi);
    net_attr a = net_attr_default(NET_RELU);
    a.relu_max = hi >= FLT_MAX ? 0 : hi;
    return ox_new_spec(I, NET_RELU, &a, 1, &x, I->t[x].rank) ? 0 : -1;
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

/* Gemm and MatMul with a constant right operand: an FC layer. */
static int op_fc(ox_imp *I, int gemm)
{
    if (ox_check_attrs(I, gemm ? "alpha beta transA transB broadcast" : "")) return -1;
    int x = ox_in_act(I, 0), bad;
    if (x < 0 || ox_act_rank(I, x, 2, "input")) return -1;
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
    net_attr a = net_attr_default(NET_FC);
    a.out_c = (int)N;
    a.bias = C != NULL;
    ox_spec *s = ox_new_spec(I, NET_FC, &a, 1, &x, 2);
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

/* Add and Sum: of activations, a NET_ADD; Add of an FC without bias and a
 * constant, that FC's bias (MatMul + Add is how frameworks spell Gemm). */
static int op_add(ox_imp *I, int sum)
{
    if (ox_check_attrs(I, sum ? "consumed_inputs" : "broadcast axis consumed_inputs")) return -1;
    int nin = ox_in_count(I);
    if (nin < 2) return ox_fail(I, "needs at least two inputs");
    if (!sum && nin != 2) return ox_fail(I, "Add takes two inputs");
    int cst = -1;
    for (int k = 0; k < nin; k++) {
        int t = ox_smap_get(&I->tmap, ox_in_name(I, (size_t)k));
        if (t >= 0 && I->t[t].kind == OX_CONST) cst = k;
    }
    if (cst >= 0) {
        int other = ox_smap_get(&I->tmap, ox_in_name(I, (size_t)(1 - cst)));
        if (sum || other < 0 || I->t[other].kind != OX_ACT || I->t[other].spec < 0)
            return ox_fail(I, "adding constant %.100s is only supported as the bias of a MatMul",
                         ox_in_name(I, (size_t)cst));
        ox_spec *s = &I->s[I->t[other].spec];
        if (s->kind != NET_FC || !s->bias_open || s->out != other || I->t[other].nuse != 1)
            return ox_fail(I, "adding constant %.100s is only supported as the bias of a MatMul "
                         "whose result nothing else reads", ox_in_name(I, (size_t)cst));
        int bad;
        int64_t n;
        const Onnx__TensorProto *C = ox_in_const(I, (size_t)cst, 1, &bad);
        if (bad) return -1;
        float *w = ox_const_floats(I, C, "bias", (size_t)cst, 1, &n, &bad);
        if (bad) return -1;
        int64_t N = s->a.out_c;
        if (n != N && n != 1) {
            free(w);
            return ox_fail(I, "bias %.100s has %lld values; dse needs %lld (one per output) or 1",
                         ox_in_name(I, (size_t)cst), (long long)n, (long long)N);
        }
        int rc = append_bias(I, s, w, n, N, 1);
        free(w);
        if (rc) return -1;
        s->a.bias = 1;
        s->bias_open = 0;
        if (ox_extra_outputs_unused(I)) return -1;
        return ox_alias(I, other, 2, 0);
    }
    int ins[64];
    if (nin > 64) return ox_fail(I, "more than 64 inputs");
    for (int k = 0; k < nin; k++) {
        if ((ins[k] = ox_in_act(I, (size_t)k)) < 0) return -1;
        if (I->t[ins[k]].rank != I->t[ins[0]].rank)
            return ox_fail(I, "adds a %d-D and a %d-D tensor; dse adds tensors of one shape",
                         I->t[ins[0]].rank, I->t[ins[k]].rank);
    }
    return ox_new_spec(I, NET_ADD, NULL, nin, ins, I->t[ins[0]].rank) ? 0 : -1;
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

static int own_tensor(ox_imp *I, Onnx__TensorProto *t)
{
    Onnx__TensorProto **o = realloc(I->owned, (size_t)(I->nowned + 1) * sizeof *o);
    if (!o) {
        free(t);
        return ox_fail(I, "out of memory");
    }
    I->owned = o;
    I->owned[I->nowned++] = t;
    return 0;
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
        if (own_tensor(I, t)) return -1;
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

int ox_import_node(ox_imp *I)
{
    const Onnx__NodeProto *nd = I->nd;
    const char *op = nd->op_type ? nd->op_type : "";
    if (nd->domain && nd->domain[0] && strcmp(nd->domain, "ai.onnx"))
        return ox_fail(I, "operator %.60s of domain %.60s is unsupported", op, nd->domain);
    if (!strcmp(op, "Conv")) return op_conv(I);
    if (!strcmp(op, "Gemm")) return op_fc(I, 1);
    if (!strcmp(op, "MatMul")) return op_fc(I, 0);
    if (!strcmp(op, "Relu")) return op_simple(I, NET_RELU, "consumed_inputs", 0);
    if (!strcmp(op, "Clip")) return op_clip(I);
    if (!strcmp(op, "LRN")) return op_lrn(I);
    if (!strcmp(op, "MaxPool")) return op_pool(I, NET_MAXPOOL);
    if (!strcmp(op, "AveragePool")) return op_pool(I, NET_AVGPOOL);
    if (!strcmp(op, "GlobalAveragePool")) return op_simple(I, NET_GAP, "", 1);
    if (!strcmp(op, "BatchNormalization")) return op_bn(I);
    if (!strcmp(op, "Add")) return op_add(I, 0);
    if (!strcmp(op, "Sum")) return op_add(I, 1);
    if (!strcmp(op, "Concat")) return op_concat(I);
    if (!strcmp(op, "Flatten")) return op_flatten(I);
    if (!strcmp(op, "Reshape")) return op_reshape(I);
    if (!strcmp(op, "Dropout")) return op_dropout(I);
    if (!strcmp(op, "Softmax")) return op_softmax(I);
    if (!strcmp(op, "Identity")) return op_identity(I);
    if (!strcmp(op, "Pad")) return op_pad(I);
    if (!strcmp(op, "Constant")) return op_constant(I);
    return ox_fail(I, "unsupported operator %.60s", op);
}

/* onnx_const.c -- constant folding of the shape arithmetic exporters leave
 * in a graph: Shape of an activation, then Gather, Unsqueeze, Concat,
 * Cast, Add/Sub/Mul/Div, Slice, Reshape and Transpose on a handful of
 * integers, ending in a Reshape's target, a Slice's bounds or a Pad's
 * pads; and the few learned weights of a weighted feature fusion (Relu,
 * Sigmoid, Exp, Neg, Abs, ReduceSum, Softmax of a small float constant).  torch.onnx writes such chains for `x.size()` (ShuffleNet's channel
 * shuffle and chunk) and for F.pad's pads (ConstantOfShape, Concat,
 * Reshape to pairs, a reversing Slice, Transpose, Reshape, Cast), and
 * keeps them all when exporting without constant folding or with a
 * dynamic batch.
 *
 * Invariant: a node is folded only when every input is a constant (Shape:
 * an activation, whose shape the importer knows from net.c) and the
 * values are few (OX_CMAX); its output is then a constant like an
 * initializer, typed as ONNX says.  The batch is 1 wherever a shape says
 * otherwise (a dynamic batch).  Anything else is left to the operator
 * handlers, which refuse what they do not know.
 */
#include "onnx_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    DT_FLOAT = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
    DT_INT32 = ONNX__TENSOR_PROTO__DATA_TYPE__INT32,
    DT_INT64 = ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
    DT_BOOL = ONNX__TENSOR_PROTO__DATA_TYPE__BOOL,
    DT_DOUBLE = ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE,
};

static int is_int(int dt) { return dt == DT_INT32 || dt == DT_INT64 || dt == DT_BOOL; }

int ox_own_tensor(ox_imp *I, Onnx__TensorProto *t)
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

/* Doubles of a DOUBLE tensor (raw or double_data). */
static int tp_doubles(ox_imp *I, const Onnx__TensorProto *t, const char *role, double *v, int max,
                      int *count)
{
    ox_dctx *d = ox_dc(I, role, t->name ? t->name : "");
    int64_t n = ox_tp_numel(d, t);
    if (n < 0) return -1;
    if (n > max) return ox_dfail(d, "has %lld values, at most %d expected", (long long)n, max);
    *count = (int)n;
    if (t->has_raw_data) {
        if (t->raw_data.len != (size_t)n * 8)
            return ox_dfail(d, "raw data has %zu bytes, %lld float64 values need %lld",
                            t->raw_data.len, (long long)n, (long long)n * 8);
        uint8_t raw[8 * OX_CMAX];
        memcpy(raw, t->raw_data.data, (size_t)n * 8);
        ox_le_bytes(raw, (size_t)n, 8);
        memcpy(v, raw, (size_t)n * 8);
        return 0;
    }
    if (t->n_double_data != (size_t)n)
        return ox_dfail(d, "has %zu values, its shape needs %lld", t->n_double_data, (long long)n);
    for (int i = 0; i < n; i++) v[i] = t->double_data[i];
    return 0;
}

int ox_cval_of(ox_imp *I, int t, const char *role, ox_cval *c)
{
    const Onnx__TensorProto *tp = I->t[t].tp;
    memset(c, 0, sizeof *c);
    if (tp->n_dims > 8) return ox_fail(I, "%s %.100s has rank %zu", role, I->t[t].name, tp->n_dims);
    c->rank = (int)tp->n_dims;
    for (size_t k = 0; k < tp->n_dims; k++) c->dims[k] = tp->dims[k];
    c->dtype = tp->data_type;
    if (is_int(tp->data_type) && tp->data_type != DT_BOOL) {
        int64_t iv[OX_CMAX];
        if (ox_tp_ints(ox_dc(I, role, I->t[t].name), tp, iv, OX_CMAX, &c->n)) return -1;
        for (int i = 0; i < c->n; i++) c->v[i] = (double)iv[i];
        return 0;
    }
    if (tp->data_type == DT_DOUBLE) return tp_doubles(I, tp, role, c->v, OX_CMAX, &c->n);
    if (tp->data_type != DT_FLOAT)
        return ox_fail(I, "%s %.100s has data type %s; dse folds int32, int64, float32 and "
                       "float64 constants", role, I->t[t].name, ox_dtype_name(tp->data_type));
    int64_t n;
    ox_dctx *d = ox_dc(I, role, I->t[t].name);
    if (ox_tp_floats(d, tp, NULL, &n)) return -1;
    if (n > OX_CMAX)
        return ox_fail(I, "%s %.100s: computing on a constant of %lld values; dse folds constants "
                       "of at most %d values (export with constant folding, or simplify the model)",
                       role, I->t[t].name, (long long)n, OX_CMAX);
    float f[OX_CMAX];
    if (ox_tp_floats(d, tp, f, &n)) return -1;
    c->n = (int)n;
    for (int i = 0; i < c->n; i++) c->v[i] = f[i];
    return 0;
}

int ox_cval_out(ox_imp *I, int out, const ox_cval *c)
{
    const Onnx__NodeProto *nd = I->nd;
    if (nd->n_output <= (size_t)out || !nd->output[out] || !nd->output[out][0])
        return ox_fail(I, "has no output %d", out);
    int t = ox_smap_get(&I->tmap, nd->output[out]);
    if (I->t[t].kind != OX_UNDEF) return ox_fail(I, "output %.100s is produced twice", nd->output[out]);
    /* One block: the proto, its dims, its values (freed at once). */
    size_t vsz = c->dtype == DT_FLOAT ? sizeof(float) : c->dtype == DT_DOUBLE ? sizeof(double)
                                                                              : sizeof(int64_t);
    size_t sz = sizeof(Onnx__TensorProto) + 8 * sizeof(int64_t) + (size_t)(c->n ? c->n : 1) * vsz;
    Onnx__TensorProto *p = calloc(1, sz);
    if (!p) return ox_fail(I, "out of memory");
    onnx__tensor_proto__init(p);
    int64_t *dims = (int64_t *)(p + 1);
    void *vals = dims + 8;
    p->n_dims = (size_t)c->rank;
    p->dims = dims;
    for (int k = 0; k < c->rank; k++) dims[k] = c->dims[k];
    p->has_data_type = 1;
    p->name = (char *)nd->output[out];
    if (c->dtype == DT_FLOAT) {
        p->data_type = DT_FLOAT;
        p->n_float_data = (size_t)c->n;
        p->float_data = vals;
        for (int i = 0; i < c->n; i++) p->float_data[i] = (float)c->v[i];
    } else if (c->dtype == DT_DOUBLE) {
        p->data_type = DT_DOUBLE;
        p->n_double_data = (size_t)c->n;
        p->double_data = vals;
        for (int i = 0; i < c->n; i++) p->double_data[i] = c->v[i];
    } else { /* every integer type is carried as int64 */
        p->data_type = DT_INT64;
        p->n_int64_data = (size_t)c->n;
        p->int64_data = vals;
        for (int i = 0; i < c->n; i++) p->int64_data[i] = (int64_t)c->v[i];
    }
    if (ox_own_tensor(I, p)) return -1;
    I->t[t].kind = OX_CONST;
    I->t[t].tp = p;
    return 0;
}

/* Input k as a small constant. */
static int in_cval(ox_imp *I, size_t k, const char *role, ox_cval *c)
{
    int bad;
    if (!ox_in_const(I, k, 1, &bad)) return -1;
    return ox_cval_of(I, ox_in_tensor(I, k), role, c);
}

static int64_t numel(const ox_cval *c)
{
    int64_t n = 1;
    for (int k = 0; k < c->rank; k++) n *= c->dims[k];
    return n;
}

/* An axis in [-rank, rank) as [0, rank). */
static int axis_of(ox_imp *I, int64_t a, int rank)
{
    if (a < -rank || a >= rank) return ox_fail(I, "axis %lld out of range for rank %d", (long long)a, rank);
    return (int)(a < 0 ? a + rank : a);
}

/* The dims of activation t as ONNX sees it: [1, C, H, W], [1, H, W, C]
 * (NHWC view) or [1, N]; a 5-D view of branches or a channel shuffle's. */
static int act_dims(ox_imp *I, int t, ox_cval *c)
{
    const ox_tens *T = &I->t[t];
    net_shape s = T->shape;
    memset(c, 0, sizeof *c);
    c->dtype = DT_INT64;
    c->rank = 1;
    if ((T->kind == OX_SYM && T->sym == OX_S_GROUPEDT) || (T->kind == OX_ACT && T->g5)) {
        int g = T->kind == OX_ACT ? T->g5 : (int)T->sym_val;
        s = I->t[T->kind == OX_ACT ? t : T->sym_src].shape;
        double d[5] = {1, g, s.c / g, s.h, s.w};
        if (T->kind == OX_SYM) d[1] = s.c / g, d[2] = g;
        c->n = 5;
        memcpy(c->v, d, sizeof d);
    } else if (T->kind == OX_ACT && T->rank == 2) {
        c->n = 2, c->v[0] = 1, c->v[1] = (double)net_shape_numel(s);
    } else if (T->kind == OX_ACT) {
        c->n = 4, c->v[0] = 1;
        double d[3] = {s.c, s.h, s.w}, e[3] = {s.h, s.w, s.c};
        memcpy(c->v + 1, T->nhwc ? e : d, sizeof d);
    } else {
        return ox_fail(I, "Shape of %.100s, an intermediate value of a pattern dse fuses",
                       T->name);
    }
    c->dims[0] = c->n;
    return 0;
}

static int fold_shape(ox_imp *I, ox_cval *r)
{
    if (ox_check_attrs(I, "start end")) return -1;
    int t = ox_in_tensor(I, 0);
    if (t < 0) return ox_fail(I, "input 0 is missing");
    if (I->t[t].kind == OX_CONST) {
        const Onnx__TensorProto *tp = I->t[t].tp;
        memset(r, 0, sizeof *r);
        r->dtype = DT_INT64, r->rank = 1, r->n = (int)tp->n_dims, r->dims[0] = r->n;
        for (int k = 0; k < r->n; k++) r->v[k] = (double)tp->dims[k];
    } else if (act_dims(I, t, r)) {
        return -1;
    }
    int64_t s, e;
    if (ox_att_int(I, "start", 0, &s) || ox_att_int(I, "end", r->n, &e)) return -1;
    if (s < 0) s += r->n;
    if (e < 0) e += r->n;
    s = s < 0 ? 0 : s > r->n ? r->n : s;
    e = e < s ? s : e > r->n ? r->n : e;
    memmove(r->v, r->v + s, (size_t)(e - s) * sizeof *r->v);
    r->n = (int)(e - s), r->dims[0] = r->n;
    return 0;
}

static int fold_gather(ox_imp *I, ox_cval *r)
{
    ox_cval d, ix;
    int64_t ax;
    if (ox_check_attrs(I, "axis") || ox_att_int(I, "axis", 0, &ax) || in_cval(I, 0, "data", &d) ||
        in_cval(I, 1, "indices", &ix))
        return -1;
    if (d.rank != 1 || axis_of(I, ax, 1) < 0)
        return ox_fail(I, "Gather on a %d-D constant; dse folds 1-D ones", d.rank);
    *r = ix;
    r->dtype = d.dtype;
    for (int i = 0; i < ix.n; i++) {
        int64_t k = (int64_t)ix.v[i];
        if (k < -d.n || k >= d.n) return ox_fail(I, "Gather index %lld out of range", (long long)k);
        r->v[i] = d.v[k < 0 ? k + d.n : k];
    }
    return 0;
}

/* Unsqueeze / Squeeze: axes from the attribute (opset < 13) or input 1. */
static int fold_squeeze(ox_imp *I, ox_cval *r, int un)
{
    ox_cval ax;
    memset(&ax, 0, sizeof ax);
    if (I->opset < 13) {
        if (ox_check_attrs(I, "axes")) return -1;
        const Onnx__AttributeProto *a = ox_att(I->nd, "axes");
        if (a) {
            if (a->n_ints > 8) return ox_fail(I, "too many axes");
            ax.n = (int)a->n_ints;
            for (int i = 0; i < ax.n; i++) ax.v[i] = (double)a->ints[i];
        }
    } else {
        if (ox_check_attrs(I, "")) return -1;
        if (ox_in_count(I) > 1 && in_cval(I, 1, "axes", &ax)) return -1;
    }
    if (in_cval(I, 0, "data", r)) return -1;
    if (un && ax.n == 0) return ox_fail(I, "Unsqueeze without axes");
    int out_rank = un ? r->rank + ax.n : r->rank - ax.n;
    int drop[9] = {0};
    if (!un && ax.n == 0) { /* every dimension of size 1 */
        out_rank = 0;
        for (int k = 0; k < r->rank; k++) drop[k] = r->dims[k] == 1, out_rank += !drop[k];
    }
    if (out_rank < 0 || out_rank > 8) return ox_fail(I, "rank %d out of range", out_rank);
    int64_t nd[8];
    if (un) {
        int is_new[8] = {0};
        for (int i = 0; i < ax.n; i++) {
            int a = axis_of(I, (int64_t)ax.v[i], out_rank);
            if (a < 0) return -1;
            is_new[a] = 1;
        }
        for (int k = 0, j = 0; k < out_rank; k++) nd[k] = is_new[k] ? 1 : r->dims[j++];
    } else {
        for (int i = 0; i < ax.n; i++) {
            int a = axis_of(I, (int64_t)ax.v[i], r->rank);
            if (a < 0) return -1;
            if (r->dims[a] != 1) return ox_fail(I, "Squeeze of axis %d of size %lld", a,
                                                (long long)r->dims[a]);
            drop[a] = 1;
        }
        for (int k = 0, j = 0; k < r->rank; k++)
            if (!drop[k]) nd[j++] = r->dims[k];
    }
    r->rank = out_rank;
    memcpy(r->dims, nd, sizeof nd);
    return 0;
}

static int fold_concat(ox_imp *I, ox_cval *r)
{
    int64_t ax;
    if (ox_check_attrs(I, "axis") || ox_att_int(I, "axis", 0, &ax)) return -1;
    memset(r, 0, sizeof *r);
    r->rank = 1;
    for (int k = 0; k < ox_in_count(I); k++) {
        ox_cval c;
        if (in_cval(I, (size_t)k, "input", &c)) return -1;
        if (c.rank != 1 || axis_of(I, ax, 1) < 0)
            return ox_fail(I, "Concat of %d-D constants; dse folds 1-D ones", c.rank);
        if (r->n + c.n > OX_CMAX) return ox_fail(I, "Concat of more than %d values", OX_CMAX);
        if (k == 0) r->dtype = c.dtype;
        memcpy(r->v + r->n, c.v, (size_t)c.n * sizeof *c.v);
        r->n += c.n;
    }
    r->dims[0] = r->n;
    return 0;
}

static int fold_cast(ox_imp *I, ox_cval *r)
{
    int64_t to;
    if (ox_check_attrs(I, "to saturate") || ox_att_int(I, "to", 0, &to) || in_cval(I, 0, "input", r))
        return -1;
    if (to != DT_FLOAT && to != DT_DOUBLE && !is_int((int)to))
        return ox_fail(I, "Cast to %s; dse folds casts to integers and floats",
                       ox_dtype_name((int)to));
    for (int i = 0; i < r->n; i++) {
        if (is_int((int)to)) r->v[i] = trunc(r->v[i]);
        if (to == DT_BOOL) r->v[i] = r->v[i] != 0;
        if (to == DT_FLOAT) r->v[i] = (float)r->v[i];
    }
    r->dtype = (int)to;
    return 0;
}

/* Add, Sub, Mul, Div of two constants, one of them possibly of one value
 * (broadcast); integer division truncates, as ONNX's. */
static int fold_arith(ox_imp *I, ox_cval *r, char op)
{
    ox_cval a, b;
    if (ox_check_attrs(I, "broadcast axis") || in_cval(I, 0, "input", &a) || in_cval(I, 1, "input", &b))
        return -1;
    if (a.n != b.n && a.n != 1 && b.n != 1)
        return ox_fail(I, "%c of constants of %d and %d values", op, a.n, b.n);
    *r = a.n >= b.n && a.rank >= b.rank ? a : b;
    r->dtype = a.dtype;
    for (int i = 0; i < r->n; i++) {
        double x = a.v[a.n == 1 ? 0 : i], y = b.v[b.n == 1 ? 0 : i], z;
        if (op == '/' && y == 0) return ox_fail(I, "division by zero in a constant");
        z = op == '+' ? x + y : op == '-' ? x - y : op == '*' ? x * y : x / y;
        if (is_int(a.dtype) && op == '/') z = trunc(z);
        if (a.dtype == DT_FLOAT) z = (float)z;
        r->v[i] = z;
    }
    return 0;
}

/* Relu, Sigmoid, Exp, Neg, Abs of a float constant: the weights of a
 * weighted feature fusion (EfficientDet's BiFPN: relu(w) / (sum(w) + eps),
 * or their softmax) are learned parameters that torch.onnx leaves as
 * this arithmetic on initializers; folded in float32, as computed. */
static int fold_unary(ox_imp *I, ox_cval *r, const char *op)
{
    if (ox_check_attrs(I, "consumed_inputs") || in_cval(I, 0, "input", r)) return -1;
    if (is_int(r->dtype)) return ox_fail(I, "%s of an integer constant", op);
    for (int i = 0; i < r->n; i++) {
        float x = (float)r->v[i];
        r->v[i] = !strcmp(op, "Relu")      ? (x > 0 ? x : 0.0f)
                  : !strcmp(op, "Sigmoid") ? 1.0f / (1.0f + expf(-x))
                  : !strcmp(op, "Exp")     ? expf(x)
                  : !strcmp(op, "Neg")     ? -x
                                           : fabsf(x);
    }
    return 0;
}

/* ReduceSum of a float constant over the axes given (attribute below
 * opset 13, input from it; none: every axis), keepdims or not. */
static int fold_reducesum(ox_imp *I, ox_cval *r)
{
    ox_cval x, ax;
    int64_t keep, noop;
    int old = I->opset < 13, reduce[8] = {0}, nax = 0;
    if (ox_check_attrs(I, old ? "axes keepdims" : "keepdims noop_with_empty_axes") ||
        ox_att_int(I, "keepdims", 1, &keep) || ox_att_int(I, "noop_with_empty_axes", 0, &noop) ||
        in_cval(I, 0, "data", &x))
        return -1;
    if (is_int(x.dtype)) return ox_fail(I, "ReduceSum of an integer constant");
    if (old) {
        const Onnx__AttributeProto *a = ox_att(I->nd, "axes");
        for (size_t k = 0; a && k < a->n_ints; k++) {
            int q = axis_of(I, a->ints[k], x.rank);
            if (q < 0) return -1;
            reduce[q] = 1, nax++;
        }
    } else if (ox_in_count(I) > 1 && ox_in_name(I, 1)[0]) {
        if (in_cval(I, 1, "axes", &ax)) return -1;
        for (int k = 0; k < ax.n; k++) {
            int q = axis_of(I, (int64_t)ax.v[k], x.rank);
            if (q < 0) return -1;
            reduce[q] = 1, nax++;
        }
    }
    if (nax == 0 && noop) return *r = x, 0;
    if (nax == 0)
        for (int q = 0; q < x.rank; q++) reduce[q] = 1;
    *r = x;
    r->rank = 0;
    for (int q = 0; q < x.rank; q++)
        if (!reduce[q] || keep) r->dims[r->rank++] = reduce[q] ? 1 : x.dims[q];
    r->n = (int)numel(r);
    float sum[OX_CMAX] = {0};
    for (int i = 0; i < x.n; i++) { /* i's coordinates, the reduced ones dropped */
        int64_t rem = i, o = 0, stride = 1;
        for (int q = x.rank - 1; q >= 0; q--) {
            int64_t c = rem % x.dims[q];
            rem /= x.dims[q];
            if (!reduce[q]) o += c * stride, stride *= x.dims[q];
        }
        sum[o] += (float)x.v[i];
    }
    for (int i = 0; i < r->n; i++) r->v[i] = sum[i];
    return 0;
}

/* Softmax of a 1-D float constant (EfficientDet's softmax fusion). */
static int fold_softmax(ox_imp *I, ox_cval *r)
{
    int64_t axis;
    if (ox_check_attrs(I, "axis") || ox_att_int(I, "axis", I->opset < 13 ? 1 : -1, &axis) ||
        in_cval(I, 0, "input", r))
        return -1;
    if (r->rank != 1 || is_int(r->dtype))
        return ox_fail(I, "Softmax of a %d-D constant; dse folds 1-D float ones", r->rank);
    if (axis_of(I, axis, 1) < 0) return -1;
    float m = -INFINITY, s = 0;
    for (int i = 0; i < r->n; i++) m = fmaxf(m, (float)r->v[i]);
    for (int i = 0; i < r->n; i++) s += expf((float)r->v[i] - m);
    for (int i = 0; i < r->n; i++) r->v[i] = expf((float)r->v[i] - m) / s;
    return 0;
}

/* Slice of a small constant along any of its axes (a negative step
 * reverses: torch.onnx reverses F.pad's pairs so). */
static int fold_slice(ox_imp *I, ox_cval *r)
{
    ox_cval st, en, ax, sp;
    memset(&ax, 0, sizeof ax);
    memset(&sp, 0, sizeof sp);
    if (in_cval(I, 0, "data", r)) return -1;
    if (I->opset < 10) {
        if (ox_check_attrs(I, "starts ends axes")) return -1;
        const Onnx__AttributeProto *s = ox_att(I->nd, "starts"), *e = ox_att(I->nd, "ends"),
                                   *a = ox_att(I->nd, "axes");
        if (!s || !e || s->n_ints != e->n_ints || s->n_ints < 1 || s->n_ints > 8 ||
            (a && a->n_ints != s->n_ints))
            return ox_fail(I, "Slice of a constant needs as many starts as ends (1 to 8)");
        st.n = en.n = (int)s->n_ints, ax.n = a ? (int)a->n_ints : 0;
        for (int k = 0; k < st.n; k++) {
            st.v[k] = (double)s->ints[k], en.v[k] = (double)e->ints[k];
            if (a) ax.v[k] = (double)a->ints[k];
        }
    } else {
        if (ox_check_attrs(I, "") || in_cval(I, 1, "starts", &st) || in_cval(I, 2, "ends", &en) ||
            (ox_in_count(I) > 3 && ox_in_name(I, 3)[0] && in_cval(I, 3, "axes", &ax)) ||
            (ox_in_count(I) > 4 && in_cval(I, 4, "steps", &sp)))
            return -1;
    }
    int rank = r->rank < 1 ? 1 : r->rank;
    if (st.n != en.n || st.n > rank || (ax.n && ax.n != st.n) || (sp.n && sp.n != st.n))
        return ox_fail(I, "Slice of a constant: starts, ends, axes and steps of different lengths");
    int64_t dims[8], lo[8], step[8], cnt[8];
    for (int k = 0; k < rank; k++) {
        dims[k] = r->rank < 1 ? r->n : r->dims[k];
        lo[k] = 0, step[k] = 1, cnt[k] = dims[k];
    }
    int seen[8] = {0};
    for (int j = 0; j < st.n; j++) {
        int k = ax.n ? axis_of(I, (int64_t)ax.v[j], rank) : j;
        if (k < 0) return -1;
        if (seen[k]++) return ox_fail(I, "Slice of a constant names axis %d twice", k);
        int64_t n = dims[k], sv = sp.n ? (int64_t)sp.v[j] : 1;
        if (sv == 0) return ox_fail(I, "Slice step 0");
        int64_t s = (int64_t)fmax(fmin(st.v[j], 1e15), -1e15), e = (int64_t)fmax(fmin(en.v[j], 1e15), -1e15);
        if (s < 0) s += n;
        if (e < 0) e += n;
        if (sv > 0) {
            s = s < 0 ? 0 : s > n ? n : s, e = e < 0 ? 0 : e > n ? n : e;
            cnt[k] = e > s ? (e - s + sv - 1) / sv : 0;
        } else {
            s = s < -1 ? -1 : s > n - 1 ? n - 1 : s, e = e < -1 ? -1 : e > n - 1 ? n - 1 : e;
            cnt[k] = s > e ? (s - e - sv - 1) / -sv : 0;
        }
        lo[k] = s, step[k] = sv;
    }
    ox_cval o = *r;
    o.n = 0;
    int64_t total = 1, stride[8];
    for (int k = rank - 1, m = 1; k >= 0; k--) stride[k] = m, m *= (int)dims[k];
    for (int k = 0; k < rank; k++) total *= cnt[k];
    for (int64_t e = 0; e < total; e++) { /* output element e: its index along each axis */
        int64_t src = 0, rem = e;
        for (int k = rank - 1; k >= 0; k--) {
            int64_t idx = rem % cnt[k];
            rem /= cnt[k];
            src += (lo[k] + idx * step[k]) * stride[k];
        }
        o.v[o.n++] = r->v[src];
    }
    for (int k = 0; k < rank && r->rank >= 1; k++) o.dims[k] = cnt[k];
    *r = o;
    return 0;
}

/* Reshape of a small constant (0 copies the dimension, -1 is inferred). */
static int fold_reshape(ox_imp *I, ox_cval *r)
{
    ox_cval sh;
    int64_t az = 0;
    if (ox_check_attrs(I, "allowzero") || ox_att_int(I, "allowzero", 0, &az) || in_cval(I, 0, "data", r) ||
        in_cval(I, 1, "shape", &sh))
        return -1;
    if (sh.n > 8) return ox_fail(I, "Reshape of a constant to %d axes", sh.n);
    int64_t d[8], known = 1;
    int infer = -1;
    for (int k = 0; k < sh.n; k++) {
        double v = sh.v[k];
        if (v == 0 && !az) {
            if (k >= r->rank) return ox_fail(I, "Reshape copies axis %d of a %d-D constant", k, r->rank);
            v = (double)r->dims[k];
        }
        if (v == -1 && infer < 0) {
            infer = k, d[k] = 1;
            continue;
        }
        if (!(v >= 0 && v <= OX_CMAX)) return ox_fail(I, "Reshape of a constant to dimension %g", v);
        d[k] = (int64_t)v, known *= d[k];
    }
    if (infer >= 0) {
        if (known == 0 || r->n % known) return ox_fail(I, "Reshape of %d values cannot infer its -1", r->n);
        d[infer] = r->n / known, known = r->n;
    }
    if (known != r->n) return ox_fail(I, "Reshape of %d values to %lld", r->n, (long long)known);
    r->rank = sh.n;
    memcpy(r->dims, d, (size_t)sh.n * sizeof *d);
    return 0;
}

static int fold_const_of_shape(ox_imp *I, ox_cval *r)
{
    ox_cval sh;
    if (ox_check_attrs(I, "value") || in_cval(I, 0, "shape", &sh)) return -1;
    memset(r, 0, sizeof *r);
    r->dtype = DT_FLOAT;
    r->rank = sh.n;
    int64_t n = 1;
    for (int k = 0; k < sh.n; k++) {
        /* the file's numbers, range-checked before conversion and product */
        if (!(sh.v[k] >= 0 && sh.v[k] <= OX_CMAX) || (r->dims[k] = (int64_t)sh.v[k], n *= r->dims[k]) > OX_CMAX)
            return ox_fail(I, "ConstantOfShape of more than %d values", OX_CMAX);
    }
    r->n = (int)n;
    const Onnx__AttributeProto *a = ox_att(I->nd, "value");
    double val = 0; /* ONNX's default: a float 0 */
    if (a && a->t) {
        const Onnx__TensorProto *tp = a->t;
        ox_dctx *d = ox_dc(I, "value", "");
        r->dtype = tp->data_type;
        if (tp->data_type == DT_FLOAT) {
            int64_t cnt;
            float f;
            if (ox_tp_floats(d, tp, NULL, &cnt)) return -1;
            if (cnt != 1) return ox_fail(I, "value must be one number");
            if (ox_tp_floats(d, tp, &f, &cnt)) return -1;
            val = f;
        } else {
            int64_t iv;
            int cnt;
            if (ox_tp_ints(d, tp, &iv, 1, &cnt)) return -1;
            if (cnt != 1) return ox_fail(I, "value must be one number");
            val = (double)iv;
        }
    }
    for (int i = 0; i < r->n; i++) r->v[i] = val;
    return 0;
}

/* Transpose of a float constant of any size (a MatMul's weight written
 * W^T in an export without constant folding). */
static int fold_transpose(ox_imp *I)
{
    if (ox_check_attrs(I, "perm")) return -1;
    int bad, t = ox_in_tensor(I, 0);
    const Onnx__TensorProto *tp = ox_in_const(I, 0, 1, &bad);
    if (!tp) return -1;
    int r = (int)tp->n_dims, perm[8];
    if (r > 8) return ox_fail(I, "Transpose of a %d-D constant", r);
    const Onnx__AttributeProto *pa = ox_att(I->nd, "perm");
    if (pa && (int)pa->n_ints != r) return ox_fail(I, "perm of %zu axes for a %d-D constant", pa->n_ints, r);
    int seen[8] = {0};
    for (int i = 0; i < r; i++) {
        perm[i] = pa ? (int)pa->ints[i] : r - 1 - i;
        if (perm[i] < 0 || perm[i] >= r || seen[perm[i]]++) return ox_fail(I, "perm is not a permutation");
    }
    if (tp->data_type != DT_FLOAT) { /* small integer ones (F.pad's pairs) */
        ox_cval c, o;
        if (ox_cval_of(I, t, "input", &c)) return -1;
        o = c;
        int64_t st[8], os[8];
        for (int i = r - 1, m = 1; i >= 0; i--) st[i] = m, m *= (int)c.dims[i];
        for (int i = 0; i < r; i++) o.dims[i] = c.dims[perm[i]];
        for (int i = r - 1, m = 1; i >= 0; i--) os[i] = m, m *= (int)o.dims[i];
        for (int e = 0; e < c.n; e++) {
            int64_t src = 0, rem = e;
            for (int i = 0; i < r; i++) {
                int64_t idx = rem / os[i];
                rem %= os[i];
                src += idx * st[perm[i]];
            }
            o.v[e] = c.v[src];
        }
        return ox_cval_out(I, 0, &o);
    }
    int64_t n;
    float *v = ox_const_floats(I, tp, "input", 0, 1, &n, &bad);
    if (bad) return -1;
    const Onnx__NodeProto *nd = I->nd;
    int o = ox_smap_get(&I->tmap, nd->output[0]);
    if (nd->n_output < 1 || o < 0 || I->t[o].kind != OX_UNDEF)
        return free(v), ox_fail(I, "has no output, or it is produced twice");
    size_t sz = sizeof(Onnx__TensorProto) + 8 * sizeof(int64_t) + (size_t)(n ? n : 1) * sizeof(float);
    Onnx__TensorProto *p = calloc(1, sz);
    if (!p) return free(v), ox_fail(I, "out of memory");
    onnx__tensor_proto__init(p);
    int64_t *dims = (int64_t *)(p + 1), in_stride[8], out_stride[8];
    float *dst = (float *)(dims + 8);
    for (int i = r - 1, s = 1; i >= 0; i--) in_stride[i] = s, s *= (int)tp->dims[i];
    for (int i = 0; i < r; i++) dims[i] = tp->dims[perm[i]];
    for (int i = r - 1, s = 1; i >= 0; i--) out_stride[i] = s, s *= (int)dims[i];
    for (int64_t e = 0; e < n; e++) { /* output element e: its index along each output axis */
        int64_t src = 0, rem = e;
        for (int i = 0; i < r; i++) {
            int64_t idx = rem / out_stride[i];
            rem %= out_stride[i];
            src += idx * in_stride[perm[i]];
        }
        dst[e] = v[src];
    }
    free(v);
    p->n_dims = (size_t)r, p->dims = dims;
    p->has_data_type = 1, p->data_type = DT_FLOAT;
    p->n_float_data = (size_t)n, p->float_data = dst;
    p->name = (char *)nd->output[0];
    if (ox_own_tensor(I, p)) return -1;
    I->t[o].kind = OX_CONST;
    I->t[o].tp = p;
    return 0;
}

int ox_fold(ox_imp *I, int *handled)
{
    const char *op = I->nd->op_type;
    static const char *foldable[] = {"Shape", "Gather", "Unsqueeze", "Squeeze", "Concat", "Cast",
                                     "Add", "Sub", "Mul", "Div", "Slice", "ConstantOfShape",
                                     "Transpose", "Reshape", "Relu", "Sigmoid", "Exp", "Neg", "Abs",
                                     "ReduceSum", "Softmax", NULL};
    int k = 0;
    *handled = 0;
    while (foldable[k] && strcmp(op, foldable[k])) k++;
    if (!foldable[k]) return 0;
    if (strcmp(op, "Shape")) {
        int nin = ox_in_count(I);
        if (nin == 0) return 0;
        for (int i = 0; i < nin; i++) {
            int kind = ox_in_kind(I, (size_t)i);
            if (kind != OX_CONST && ox_in_name(I, (size_t)i)[0]) return 0;
        }
    }
    *handled = 1;
    if (!strcmp(op, "Transpose")) return fold_transpose(I);
    ox_cval r;
    int rc = !strcmp(op, "Shape")       ? fold_shape(I, &r)
             : !strcmp(op, "Gather")    ? fold_gather(I, &r)
             : !strcmp(op, "Unsqueeze") ? fold_squeeze(I, &r, 1)
             : !strcmp(op, "Squeeze")   ? fold_squeeze(I, &r, 0)
             : !strcmp(op, "Concat")    ? fold_concat(I, &r)
             : !strcmp(op, "Cast")      ? fold_cast(I, &r)
             : !strcmp(op, "Add")       ? fold_arith(I, &r, '+')
             : !strcmp(op, "Sub")       ? fold_arith(I, &r, '-')
             : !strcmp(op, "Mul")       ? fold_arith(I, &r, '*')
             : !strcmp(op, "Div")       ? fold_arith(I, &r, '/')
             : !strcmp(op, "Slice")     ? fold_slice(I, &r)
             : !strcmp(op, "Reshape")   ? fold_reshape(I, &r)
             : !strcmp(op, "ReduceSum") ? fold_reducesum(I, &r)
             : !strcmp(op, "Softmax")   ? fold_softmax(I, &r)
             : !strcmp(op, "ConstantOfShape") ? fold_const_of_shape(I, &r)
                                        : fold_unary(I, &r, op);
    if (rc) return -1;
    if (numel(&r) != r.n) return ox_fail(I, "folded to %d values for %lld", r.n, (long long)numel(&r));
    return ox_cval_out(I, 0, &r);
}

/* onnx_import.c -- the ONNX importer's driver and the helpers every
 * operator handler (onnx_ops.c) uses: node attributes and inputs, the
 * layer specs the nodes become, the graph input, and the checks that need
 * the shapes net_finalize() inferred.
 *
 * Import maps each ONNX node to one net layer (Identity, Constant and the
 * exporter's own "dse:implicit" reshapes are aliases, a MatMul's constant
 * bias Add folds into its FC), then lets net_finalize() infer every shape:
 * the importer never computes a shape itself, it only checks afterwards
 * that the file's weights, value_info and output shapes agree with the
 * inferred ones.  docs/onnx.md lists the mapping, the limits and the
 * error messages.
 *
 * Invariant: an import either returns a finalised net whose weights (in
 * the layout of weights.h) were all found, typed float32 and sized exactly
 * as the net needs, or NULL with one line naming the file, the node and
 * the reason; nothing is written on failure.
 */
#include "onnx_impl.h"
#include "base.h"
#include "weights.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ox_fail(ox_imp *I, const char *fmt, ...)
{
    char msg[BASE_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const Onnx__NodeProto *nd = I->nd;
    if (nd && nd->name && nd->name[0])
        ox_seterr(I->err, "%s: node %.100s (%.40s): %s", I->what, nd->name, nd->op_type, msg);
    else if (nd)
        ox_seterr(I->err, "%s: node #%d (%.40s): %s", I->what, I->nd_idx, nd->op_type, msg);
    else
        ox_seterr(I->err, "%s: %s", I->what, msg);
    return -1;
}

/* Prefix the data-decoding context with the current node and a role. */
ox_dctx *ox_dc(ox_imp *I, const char *role, const char *tname)
{
    const Onnx__NodeProto *nd = I->nd;
    if (nd && nd->name && nd->name[0])
        snprintf(I->d.ctx, sizeof I->d.ctx, "%s: node %.100s (%.40s): %s %.100s", I->what,
                 nd->name, nd->op_type, role, tname);
    else if (nd)
        snprintf(I->d.ctx, sizeof I->d.ctx, "%s: node #%d (%.40s): %s %.100s", I->what,
                 I->nd_idx, nd->op_type, role, tname);
    else
        snprintf(I->d.ctx, sizeof I->d.ctx, "%s: %s %.100s", I->what, role, tname);
    return &I->d;
}

static int tensor_slot(ox_imp *I, const char *name)
{
    int k = ox_smap_get(&I->tmap, name);
    if (k >= 0) return k;
    if (I->nt == I->capt) {
        int cap = I->capt ? 2 * I->capt : 64;
        ox_tens *t = realloc(I->t, (size_t)cap * sizeof *t);
        if (!t) return -1;
        I->t = t;
        I->capt = cap;
    }
    memset(&I->t[I->nt], 0, sizeof I->t[0]);
    I->t[I->nt].name = name;
    I->t[I->nt].spec = -1;
    if (ox_smap_put(&I->tmap, name, I->nt) < 0) return -1;
    return I->nt++;
}

/* ---- attributes ---- */

const Onnx__AttributeProto *ox_att(const Onnx__NodeProto *nd, const char *name)
{
    for (size_t i = 0; i < nd->n_attribute; i++)
        if (nd->attribute[i]->name && !strcmp(nd->attribute[i]->name, name))
            return nd->attribute[i];
    return NULL;
}

/* Every attribute must be one this importer understands: an unknown one
 * could change the meaning of the node. */
int ox_check_attrs(ox_imp *I, const char *allowed)
{
    const Onnx__NodeProto *nd = I->nd;
    for (size_t i = 0; i < nd->n_attribute; i++) {
        const char *a = nd->attribute[i]->name ? nd->attribute[i]->name : "";
        size_t al = strlen(a);
        int ok = 0;
        for (const char *p = allowed; *p && !ok;) {
            const char *e = strchr(p, ' ');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            ok = len == al && !strncmp(p, a, al);
            p += len;
            while (*p == ' ') p++;
        }
        if (!ok) return ox_fail(I, "unsupported attribute %.100s", a);
        if (nd->attribute[i]->ref_attr_name && nd->attribute[i]->ref_attr_name[0])
            return ox_fail(I, "attribute %.100s refers to a function attribute", a);
    }
    return 0;
}

int ox_att_int(ox_imp *I, const char *name, int64_t def, int64_t *out)
{
    const Onnx__AttributeProto *a = ox_att(I->nd, name);
    *out = def;
    if (!a) return 0;
    if (!(a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) && !a->has_i)
        return ox_fail(I, "attribute %s must be an integer", name);
    *out = a->i;
    return 0;
}

int ox_att_float(ox_imp *I, const char *name, double def, double *out)
{
    const Onnx__AttributeProto *a = ox_att(I->nd, name);
    *out = def;
    if (!a) return 0;
    if (!(a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) && !a->has_f)
        return ox_fail(I, "attribute %s must be a float", name);
    *out = ox_float_dec(a->f);
    return 0;
}

/* An ints attribute of exactly `want` values, each in [lo, ATTR_MAX];
 * absent: *present = 0. */
int ox_att_ints(ox_imp *I, const char *name, int want, int lo, int *v, int *present)
{
    const Onnx__AttributeProto *a = ox_att(I->nd, name);
    *present = 0;
    if (!a) return 0;
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
        return ox_fail(I, "attribute %s must be a list of integers", name);
    if ((int)a->n_ints != want)
        return ox_fail(I, "attribute %s has %zu values, a 2-D (NCHW) operator needs %d", name,
                     a->n_ints, want);
    for (int i = 0; i < want; i++) {
        if (a->ints[i] < lo || a->ints[i] > OX_ATTR_MAX)
            return ox_fail(I, "attribute %s value %lld out of range [%d, %d]", name,
                         (long long)a->ints[i], lo, OX_ATTR_MAX);
        v[i] = (int)a->ints[i];
    }
    *present = 1;
    return 0;
}

/* A string attribute equal to one of `choices` (space separated); index. */
int ox_att_choice(ox_imp *I, const char *name, const char *choices, int *idx)
{
    const Onnx__AttributeProto *a = ox_att(I->nd, name);
    *idx = 0;
    if (!a) return 0;
    if (!a->has_s) return ox_fail(I, "attribute %s must be a string", name);
    int k = 0;
    for (const char *p = choices; *p; k++) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (a->s.len == len && !memcmp(a->s.data, p, len)) {
            *idx = k;
            return 0;
        }
        p += len;
        while (*p == ' ') p++;
    }
    return ox_fail(I, "attribute %s = \"%.*s\" is not one of: %s", name,
                 (int)(a->s.len > 40 ? 40 : a->s.len), (const char *)a->s.data, choices);
}

/* ---- node inputs ---- */

const char *ox_in_name(ox_imp *I, size_t k)
{
    return k < I->nd->n_input && I->nd->input[k] ? I->nd->input[k] : "";
}

int ox_in_count(ox_imp *I)
{
    int n = (int)I->nd->n_input;
    while (n > 0 && !ox_in_name(I, (size_t)n - 1)[0]) n--;
    return n;
}

/* Operators that read an activation the same whatever the order of its
 * dimensions (elementwise ones, and those that ask which axis is which). */
static int layout_free(const char *op)
{
    static const char *ops[] = {"Relu", "Clip", "LeakyRelu", "Elu", "Tanh", "Sigmoid", "HardSigmoid", "HardSwish", "Dropout",
                                "Identity", "Add", "Sum", "Mul", "Div", "Sub", "Pow", "Sqrt",
                                "Erf", "Gelu", "Transpose", "ReduceMean", "ReduceMax", "LayerNormalization",
                                "MatMul", "Shape", "Slice", NULL};
    for (int i = 0; ops[i]; i++)
        if (!strcmp(op, ops[i])) return 1;
    return 0;
}

/* Input k as an activation; its tensor index.  A symbolic value becomes
 * a layer here if it can be one (ox_sym_realize). */
int ox_in_act(ox_imp *I, size_t k)
{
    const char *name = ox_in_name(I, k);
    if (!name[0]) return ox_fail(I, "input %zu is missing", k);
    int t = ox_smap_get(&I->tmap, name);
    if (t < 0 || I->t[t].kind == OX_UNDEF)
        return ox_fail(I, "input %.100s is not produced by an earlier node, an initializer or the "
                     "graph input", name);
    if (I->t[t].kind == OX_CONST)
        return ox_fail(I, "input %.100s is a constant; dse needs an activation here", name);
    if (I->t[t].kind == OX_SYM && ox_sym_realize(I, t)) return -1;
    if (I->t[t].flat && strcmp(I->nd->op_type, "Gemm") && strcmp(I->nd->op_type, "MatMul"))
        return ox_fail(I, "input %.100s is a " OX_IMPLICIT " flatten, which only a Gemm may read", name);
    const int *p = I->t[t].pad;
    if ((p[0] | p[1] | p[2] | p[3]) && strcmp(I->nd->op_type, "Conv") &&
        strcmp(I->nd->op_type, "AveragePool"))
        return ox_fail(I, "input %.100s is zero-padded by a Pad node; dse folds such padding only "
                     "into a Conv or AveragePool", name);
    if (I->t[t].g5)
        return ox_fail(I, "input %.100s is a 5-D view [1, %d, %d, %d, %d] of branches; dse takes "
                       "it only summed or softmaxed over axis 1, concatenated along axis 1, "
                       "multiplied by another such view, or reshaped back to 4-D", name,
                       I->t[t].g5, I->t[t].shape.c / I->t[t].g5, I->t[t].shape.h, I->t[t].shape.w);
    if (I->t[t].nhwc && !layout_free(I->nd->op_type))
        return ox_fail(I, "input %.100s is in NHWC order (a Transpose of a 4-D activation that "
                     "no later Transpose undoes before this node)", name);
    return t;
}

/* The kind of input k's tensor (OX_UNDEF when absent or unknown). */
int ox_in_kind(ox_imp *I, size_t k)
{
    const char *name = ox_in_name(I, k);
    int t = name[0] ? ox_smap_get(&I->tmap, name) : -1;
    return t < 0 ? OX_UNDEF : I->t[t].kind;
}

/* Input k's tensor index, whatever it is (-1 when absent). */
int ox_in_tensor(ox_imp *I, size_t k)
{
    const char *name = ox_in_name(I, k);
    return name[0] ? ox_smap_get(&I->tmap, name) : -1;
}

/* Input k as a constant (initializer or Constant output); NULL if absent
 * and optional (*bad = 0), or on error (*bad = 1). */
const Onnx__TensorProto *ox_in_const(ox_imp *I, size_t k, int required, int *bad)
{
    const char *name = ox_in_name(I, k);
    *bad = 0;
    if (!name[0]) {
        if (required) *bad = 1, ox_fail(I, "input %zu is missing", k);
        return NULL;
    }
    int t = ox_smap_get(&I->tmap, name);
    if (t < 0 || I->t[t].kind == OX_UNDEF) {
        *bad = 1;
        ox_fail(I, "input %.100s is not produced by an earlier node, an initializer or the "
              "graph input", name);
        return NULL;
    }
    if (I->t[t].kind != OX_CONST) {
        *bad = 1;
        ox_fail(I, "input %.100s must be a constant (an initializer), not a computed tensor", name);
        return NULL;
    }
    return I->t[t].tp;
}

/* Floats of a constant into a fresh array (NULL when values are not kept
 * or on error: check *bad). */
float *ox_const_floats(ox_imp *I, const Onnx__TensorProto *t, const char *role, size_t k,
                           int keep, int64_t *count, int *bad)
{
    ox_dctx *d = ox_dc(I, role, ox_in_name(I, k));
    *bad = 0;
    if (ox_tp_floats(d, t, NULL, count)) {
        *bad = 1;
        return NULL;
    }
    if (!keep) return NULL;
    float *v = malloc(*count ? (size_t)*count * sizeof *v : 1);
    if (!v) {
        *bad = 1;
        ox_fail(I, "out of memory");
        return NULL;
    }
    if (ox_tp_floats(d, t, v, count)) {
        free(v);
        *bad = 1;
        return NULL;
    }
    return v;
}

/* A scalar float constant (one element, any rank). */
int ox_const_scalar(ox_imp *I, size_t k, const char *role, int *present, double *v)
{
    int bad;
    const Onnx__TensorProto *t = ox_in_const(I, k, 0, &bad);
    *present = 0;
    if (bad) return -1;
    if (!t) return 0;
    int64_t n;
    float *f = ox_const_floats(I, t, role, k, 1, &n, &bad);
    if (bad) return -1;
    if (n != 1) {
        free(f);
        return ox_fail(I, "%s %.100s has %lld values, a scalar was expected", role, ox_in_name(I, k),
                     (long long)n);
    }
    *v = ox_float_dec(f[0]);
    free(f);
    *present = 1;
    return 0;
}

/* Extra outputs (MaxPool indices, Dropout mask, BN training statistics)
 * are fine as long as nothing reads them. */
int ox_extra_outputs_unused(ox_imp *I)
{
    for (size_t k = 1; k < I->nd->n_output; k++) {
        const char *o = I->nd->output[k];
        if (!o || !o[0]) continue;
        int t = ox_smap_get(&I->tmap, o);
        if (t >= 0 && I->t[t].nuse > 0)
            return ox_fail(I, "output %zu (%.100s) is used; dse supports only the first output", k, o);
    }
    return 0;
}

/* Define node output 0 as tensor `src`'s alias (no layer). */
int ox_alias(ox_imp *I, int src, int rank, int flat)
{
    if (I->nd->n_output < 1 || !I->nd->output[0] || !I->nd->output[0][0])
        return ox_fail(I, "has no output");
    int t = ox_smap_get(&I->tmap, I->nd->output[0]);
    if (I->t[t].kind != OX_UNDEF)
        return ox_fail(I, "output %.100s is produced twice", I->nd->output[0]);
    ox_tens *o = &I->t[t], *s = &I->t[src];
    o->kind = s->kind;
    o->spec = s->spec;
    o->rank = rank ? rank : s->rank;
    o->flat = flat;
    memcpy(o->pad, s->pad, sizeof o->pad);
    o->nhwc = s->nhwc;
    o->g5 = rank ? 0 : s->g5; /* the same view, or the 4-D tensor it views */
    o->shape = s->shape;
    o->sym = s->sym, o->sym_src = s->sym_src, o->sym_val = s->sym_val, o->sym_node = s->sym_node;
    o->sym_k = s->sym_k;
    o->tp = s->tp;
    if (o->kind == OX_ACT && o->spec >= 0 && I->s[o->spec].out == src) I->s[o->spec].out = t;
    return 0;
}

/* A unique layer name for the current node: its own name, else the name of
 * its first output (as ONNX tools and AutoDiCE name a nameless node), else
 * Op_index; output `out` > 0 of a node of several outputs (Split) gets .out;
 * a clash (duplicate, the input's name, another node's name) gets _2, _3... */
static char *layer_name(ox_imp *I, int out)
{
    const Onnx__NodeProto *nd = I->nd;
    char base[160], cand[200];
    int own = nd->name && nd->name[0];
    if (own && !ox_printable(nd->name)) {
        ox_fail(I, "node name contains control characters");
        return NULL;
    }
    const char *out0 = nd->n_output > 0 ? nd->output[0] : NULL;
    if (own) snprintf(base, sizeof base, "%.140s", nd->name);
    else if (out0 && out0[0] && ox_printable(out0)) snprintf(base, sizeof base, "%.140s", out0);
    else snprintf(base, sizeof base, "%.60s_%d", nd->op_type, I->nd_idx);
    /* Cut at 140 bytes (room for a Split suffix): back to whole UTF-8
     * characters (a name stays base_name_ok whichever branch made it; an
     * op_type is unchecked). */
    for (size_t l = strlen(base); l && !base_name_ok(base);) base[--l] = 0;
    if (!base[0]) {
        ox_fail(I, "node has no usable name (its operator type is not text)");
        return NULL;
    }
    if (out > 0) { /* a node of several outputs (Split): one layer each */
        size_t l = strlen(base);
        snprintf(base + l, sizeof base - l, ".%d", out);
    }
    snprintf(cand, sizeof cand, "%s", base);
    const char *inname = I->t[I->input].name;
    for (int k = 2;; k++) {
        int clash = ox_smap_get(&I->lnames, cand) >= 0 || !strcmp(cand, inname) ||
                    ((!own || k > 2) && ox_smap_get(&I->explicit_names, cand) >= 0);
        if (!clash) break;
        snprintf(cand, sizeof cand, "%s_%d", base, k);
    }
    char *name = base_strdup(cand);
    if (!name || ox_smap_put(&I->lnames, name, I->ns) < 0) {
        free(name);
        ox_fail(I, "out of memory");
        return NULL;
    }
    return name;
}

/* A new layer for output `out` of the current node, reading activations
 * ins[0..nin); its shape from net.c.  `single`: the node's other outputs
 * must be unused. */
static ox_spec *new_spec(ox_imp *I, int out, int single, net_kind kind, const net_attr *a, int nin,
                         const int *ins, int rank)
{
    const Onnx__NodeProto *nd = I->nd;
    if (nd->n_output <= (size_t)out || !nd->output[out] || !nd->output[out][0]) {
        ox_fail(I, "has no output %d", out);
        return NULL;
    }
    int t = ox_smap_get(&I->tmap, nd->output[out]);
    if (I->t[t].kind != OX_UNDEF) {
        ox_fail(I, "output %.100s is produced twice", nd->output[out]);
        return NULL;
    }
    if (single && ox_extra_outputs_unused(I)) return NULL;
    if (I->ns == I->caps) {
        int cap = I->caps ? 2 * I->caps : 64;
        ox_spec *s = realloc(I->s, (size_t)cap * sizeof *s);
        if (!s) {
            ox_fail(I, "out of memory");
            return NULL;
        }
        I->s = s;
        I->caps = cap;
    }
    ox_spec *s = &I->s[I->ns];
    memset(s, 0, sizeof *s);
    s->name = layer_name(I, out); /* sets err on failure */
    if (!s->name) return NULL;
    s->in = malloc((size_t)nin * sizeof *s->in);
    net_shape few[8], *xs = nin <= 8 ? few : malloc((size_t)nin * sizeof *xs);
    if (!s->in || !xs) {
        free(s->name);
        free(s->in);
        if (xs != few) free(xs);
        ox_fail(I, "out of memory");
        return NULL;
    }
    memcpy(s->in, ins, (size_t)nin * sizeof *ins);
    s->nin = nin;
    s->node = nd;
    s->node_idx = I->nd_idx;
    s->kind = kind;
    s->a = a ? *a : net_attr_default(kind);
    s->out = t;
    I->ns++;
    /* The shape now, by net.c's rule, so that later nodes can ask for it
     * (Shape, Reshape targets, per-channel constants); net_finalize infers
     * it again over the whole net. */
    net_layer L;
    memset(&L, 0, sizeof L);
    L.name = s->name, L.kind = kind, L.nin = nin, L.a = s->a;
    for (int k = 0; k < nin; k++) xs[k] = I->t[ins[k]].shape;
    char msg[BASE_ERRLEN];
    int bad = net_layer_infer(&L, xs, "", msg);
    if (xs != few) free(xs);
    if (bad) {
        /* net.c's line is ": layer NAME: problem"; the node says the rest. */
        const char *p = strstr(msg, ": ");
        p = p ? strstr(p + 2, ": ") : NULL;
        ox_fail(I, "%s", p ? p + 2 : msg);
        return NULL;
    }
    I->t[t].kind = OX_ACT;
    I->t[t].spec = I->ns - 1;
    I->t[t].rank = rank;
    I->t[t].shape = L.out;
    /* Only layout-free operators read an NHWC view (ox_in_act), and they
     * keep it. */
    I->t[t].nhwc = rank == 4 && nin > 0 && I->t[ins[0]].nhwc;
    return s;
}

ox_spec *ox_new_spec(ox_imp *I, net_kind kind, const net_attr *a, int nin, const int *ins, int rank)
{
    return new_spec(I, 0, 1, kind, a, nin, ins, rank);
}

ox_spec *ox_new_spec_out(ox_imp *I, int out, net_kind kind, const net_attr *a, int nin,
                         const int *ins, int rank)
{
    return new_spec(I, out, 0, kind, a, nin, ins, rank);
}

/* Append `extra` floats to s->w (kept) and the count. */
int ox_spec_append(ox_imp *I, ox_spec *s, const float *v, int64_t count)
{
    if (I->keep) {
        float *w = realloc(s->w, (size_t)(s->nw + count) * sizeof *w + 1);
        if (!w) return ox_fail(I, "out of memory");
        s->w = w;
        if (count) memcpy(w + s->nw, v, (size_t)count * sizeof *w);
    }
    s->nw += count;
    return 0;
}

int ox_act_rank(ox_imp *I, int t, int want, const char *what)
{
    if (I->t[t].rank != want)
        return ox_fail(I, "%s %.100s is %d-D; dse needs %d-D here", what, I->t[t].name,
                     I->t[t].rank, want);
    return 0;
}

/* kernel_shape / strides / pads / dilations / auto_pad of Conv and pools. */
int ox_window_attrs(ox_imp *I, net_attr *a, int *autopad, int pool)
{
    int k[2], s[2], p[4], d[2], has_k, has_s, has_p, has_d, ap;
    if (ox_att_ints(I, "kernel_shape", 2, 1, k, &has_k) || ox_att_ints(I, "strides", 2, 1, s, &has_s) ||
        ox_att_ints(I, "pads", 4, 0, p, &has_p) || ox_att_ints(I, "dilations", 2, 1, d, &has_d) ||
        ox_att_choice(I, "auto_pad", "NOTSET SAME_UPPER SAME_LOWER VALID", &ap))
        return -1;
    if (pool && !has_k) return ox_fail(I, "kernel_shape is required");
    if (has_k) a->kh = k[0], a->kw = k[1];
    a->sh = has_s ? s[0] : 1, a->sw = has_s ? s[1] : 1;
    if (has_d) {
        if (pool && (d[0] != 1 || d[1] != 1))
            return ox_fail(I, "dilations %dx%d: dse pools have no dilation", d[0], d[1]);
        a->dh = d[0], a->dw = d[1];
    }
    if (ap && has_p) return ox_fail(I, "auto_pad and explicit pads together");
    if (has_p) a->pt = p[0], a->pl = p[1], a->pb = p[2], a->pr = p[3];
    *autopad = ap == 1 || ap == 2 ? ap : 0;
    return 0;
}

/* SAME padding before the input size is known: a total of eff-1 gives
 * ceil(in/stride) outputs, SAME's count, whatever the input size, so the
 * first net_finalize infers the right shapes; fix_autopad then splits the
 * exact total once the input sizes are known. */
void ox_same_guess(net_attr *a, int autopad)
{
    int eh = a->dh * (a->kh - 1), ew = a->dw * (a->kw - 1);
    a->pt = autopad == 1 ? eh / 2 : eh - eh / 2, a->pb = eh - a->pt;
    a->pl = autopad == 1 ? ew / 2 : ew - ew / 2, a->pr = ew - a->pl;
}

/* Add the zero padding of a Pad node feeding this Conv / AveragePool. */
int ox_fold_pad(ox_imp *I, int x, net_attr *a, int autopad)
{
    const int *p = I->t[x].pad;
    if (!(p[0] | p[1] | p[2] | p[3])) return 0;
    if (autopad) return ox_fail(I, "a Pad before a node with auto_pad is unsupported");
    int64_t v[4] = {(int64_t)a->pt + p[0], (int64_t)a->pl + p[1], (int64_t)a->pb + p[2],
                    (int64_t)a->pr + p[3]};
    for (int k = 0; k < 4; k++)
        if (v[k] > OX_ATTR_MAX) return ox_fail(I, "padding %lld out of range", (long long)v[k]);
    a->pt = (int)v[0], a->pl = (int)v[1], a->pb = (int)v[2], a->pr = (int)v[3];
    return 0;
}

/* The network input: the one graph input without an initializer. */
static int graph_input(ox_imp *I, net_shape *shape)
{
    const Onnx__GraphProto *g = I->g;
    const Onnx__ValueInfoProto *in = NULL;
    int count = 0;
    for (size_t i = 0; i < g->n_input; i++) {
        const char *nm = g->input[i]->name ? g->input[i]->name : "";
        int t = ox_smap_get(&I->tmap, nm);
        if (t >= 0 && I->t[t].kind == OX_CONST) continue; /* IR < 4 lists initializers */
        if (!in) in = g->input[i];
        count++;
    }
    if (count == 0) return ox_fail(I, "the graph has no input (every input is an initializer)");
    if (count > 1)
        return ox_fail(I, "the graph has %d inputs (first %.100s); dse needs exactly one", count,
                     in->name);
    const char *nm = in->name ? in->name : "";
    if (!nm[0]) return ox_fail(I, "the graph input has no name");
    if (!ox_printable(nm)) return ox_fail(I, "the graph input's name contains control characters");
    const Onnx__TypeProto *ty = in->type;
    if (!ty || ty->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !ty->tensor_type)
        return ox_fail(I, "input %.100s is not a tensor", nm);
    const Onnx__TypeProto__Tensor *tt = ty->tensor_type;
    if (tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return ox_fail(I, "input %.100s has data type %s; dse needs float32", nm,
                     ox_dtype_name(tt->elem_type));
    if (!tt->shape) return ox_fail(I, "input %.100s has no shape (dynamic shape)", nm);
    int r = (int)tt->shape->n_dim;
    if (r != 2 && r != 4)
        return ox_fail(I, "input %.100s is %d-D; dse needs [1, C, H, W] or [1, N]", nm, r);
    int64_t d[4];
    for (int k = 0; k < r; k++) {
        const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
        if (k == 0 && dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            d[0] = 1; /* a dynamic batch: dse runs batch 1 */
            continue;
        }
        if (dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            return ox_fail(I, "input %.100s has a dynamic shape: dimension %d is %s%.60s%s", nm, k,
                         dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                             ? "symbolic \"" : "unknown",
                         dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                             ? dm->dim_param : "",
                         dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                             ? "\"" : "");
        d[k] = dm->dim_value;
        if (d[k] < 1 || d[k] > INT32_MAX)
            return ox_fail(I, "input %.100s has dimension %d = %lld", nm, k, (long long)d[k]);
    }
    if (d[0] != 1)
        return ox_fail(I, "input %.100s has batch %lld; dse needs batch 1", nm, (long long)d[0]);
    *shape = r == 4 ? (net_shape){(int)d[1], (int)d[2], (int)d[3]} : (net_shape){(int)d[1], 1, 1};
    int t = tensor_slot(I, nm);
    if (t < 0) return ox_fail(I, "out of memory");
    I->t[t].kind = OX_ACT;
    I->t[t].spec = -1;
    I->t[t].rank = r;
    I->t[t].shape = *shape;
    I->input = t;
    return 0;
}

/* Vision transformers (vit_*, swin_*...) multiply two computed tensors
 * (attention's Q K^T and its weights times V): say so at once rather than
 * at whatever operator comes first.  A tensor is computed when it depends
 * on the network input (a shape read off it does not). */
static int no_attention(ox_imp *I)
{
    const Onnx__GraphProto *g = I->g;
    unsigned char *dyn = calloc((size_t)I->nt + 1, 1);
    if (!dyn) return ox_fail(I, "out of memory");
    dyn[I->input] = 1;
    int rc = 0;
    for (size_t i = 0; i < g->n_node && !rc; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        int d[2] = {0, 0}, any = 0;
        for (size_t k = 0; k < nd->n_input; k++) {
            int t = nd->input[k] && nd->input[k][0] ? ox_smap_get(&I->tmap, nd->input[k]) : -1;
            int v = t >= 0 && dyn[t];
            any |= v;
            if (k < 2) d[k] = v;
        }
        const char *op = nd->op_type;
        if (d[0] && d[1] && (!strcmp(op, "MatMul") || !strcmp(op, "Einsum") || !strcmp(op, "Gemm"))) {
            I->nd = nd;
            I->nd_idx = (int)i;
            rc = ox_fail(I, "attention is not supported (a product of two computed tensors, as in vision "
                         "transformers); dse imports CNNs");
            I->nd = NULL;
        }
        if (any && strcmp(op, "Shape") && strcmp(op, "Size"))
            for (size_t k = 0; k < nd->n_output; k++)
                if (nd->output[k] && nd->output[k][0]) dyn[ox_smap_get(&I->tmap, nd->output[k])] = 1;
    }
    free(dyn);
    return rc;
}

static const char *layer_of(ox_imp *I, int t)
{
    return I->t[t].spec < 0 ? I->t[I->input].name : I->s[I->t[t].spec].name;
}

/* Build and finalise the net from the specs. */
static net *build(ox_imp *I, const char *name, net_shape in)
{
    net *n = net_new(name, I->t[I->input].name, in);
    if (!n) return ox_fail(I, "out of memory"), NULL;
    for (int i = 0; i < I->ns; i++) {
        const ox_spec *s = &I->s[i];
        const char *ins[1024];
        for (int k = 0; k < s->nin; k++) ins[k] = layer_of(I, s->in[k]);
        if (net_add(n, s->name, s->kind, &s->a, s->nin, ins, I->err) < 0) {
            net_free(n);
            return NULL;
        }
    }
    if (net_finalize(n, I->what, I->err)) {
        net_free(n);
        return NULL;
    }
    return n;
}

/* SAME padding from the now-known input sizes (see window_attrs). */
static void fix_autopad(ox_imp *I, const net *n)
{
    for (int i = 0; i < I->ns; i++) {
        ox_spec *s = &I->s[i];
        if (!s->autopad) continue;
        int li = net_find(n, s->name);
        net_shape x = net_in_shape(n, li, 0), y = n->layers[li].out;
        int th = (y.h - 1) * s->a.sh + s->a.dh * (s->a.kh - 1) + 1 - x.h;
        int tw = (y.w - 1) * s->a.sw + s->a.dw * (s->a.kw - 1) + 1 - x.w;
        if (th < 0) th = 0;
        if (tw < 0) tw = 0;
        int lower = s->autopad == 2;
        s->a.pt = lower ? th - th / 2 : th / 2, s->a.pb = th - s->a.pt;
        s->a.pl = lower ? tw - tw / 2 : tw / 2, s->a.pr = tw - s->a.pl;
        s->autopad = 0;
    }
}

/* value_info and graph output shapes, where the file states them, must be
 * what net_finalize inferred. */
static int cross_check(ox_imp *I, const net *n, const Onnx__ValueInfoProto *vi, int is_output)
{
    const char *nm = vi->name ? vi->name : "";
    int t = ox_smap_get(&I->tmap, nm);
    if (t < 0 || I->t[t].kind != OX_ACT || I->t[t].folded) return 0;
    const int *zp = I->t[t].pad;
    if (zp[0] | zp[1] | zp[2] | zp[3]) return 0; /* a Pad's output has no layer of its size */
    const Onnx__TypeProto *ty = vi->type;
    if (!ty || ty->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !ty->tensor_type) return 0;
    const Onnx__TypeProto__Tensor *tt = ty->tensor_type;
    if (tt->has_elem_type && tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
        tt->elem_type != 0)
        return ox_fail(I, "%s %.100s has data type %s; dse computes float32",
                     is_output ? "graph output" : "value_info", nm, ox_dtype_name(tt->elem_type));
    if (!tt->shape) return 0;
    int li = I->t[t].spec < 0 ? -1 : net_find(n, I->s[I->t[t].spec].name);
    net_shape s = li < 0 ? n->input : n->layers[li].out;
    int r = I->t[t].rank, g5 = I->t[t].g5;
    int64_t want[5] = {1, s.c, s.h, s.w, 0};
    if (r == 2) want[1] = net_shape_numel(s);
    if (r == 4 && I->t[t].nhwc) want[1] = s.h, want[2] = s.w, want[3] = s.c;
    if (g5) r = 5, want[1] = g5, want[2] = s.c / g5, want[3] = s.h, want[4] = s.w;
    int K = I->t[t].rv_k, G = I->t[t].rv_g;
    if (K) want[1] = K, want[2] = G, want[3] = (int64_t)s.c / ((int64_t)K * G) * s.h * s.w;
    char got[200] = "", exp[100];
    int bad = (int)tt->shape->n_dim != r;
    for (size_t k = 0; k < tt->shape->n_dim; k++) {
        const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
        int known = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        size_t len = strlen(got);
        if (known) snprintf(got + len, sizeof got - len, "%s%lld", k ? "x" : "", (long long)dm->dim_value);
        else snprintf(got + len, sizeof got - len, "%s?", k ? "x" : "");
        if (!bad && known && dm->dim_value != want[k]) bad = 1;
    }
    if (!bad) return 0;
    if (r == 5) snprintf(exp, sizeof exp, "1x%lldx%lldx%lldx%lld", (long long)want[1],
                         (long long)want[2], (long long)want[3], (long long)want[4]);
    else if (r == 4) snprintf(exp, sizeof exp, "1x%lldx%lldx%lld", (long long)want[1], (long long)want[2],
                         (long long)want[3]);
    else snprintf(exp, sizeof exp, "1x%lld", (long long)net_shape_numel(s));
    I->nd = NULL;
    return ox_fail(I, "%s %.100s has shape %s but the layers give %s", is_output ? "graph output"
                 : "value_info", nm, got, exp);
}

/* The checks that need inferred shapes, then the weights in layer order. */
static int after_finalize(ox_imp *I, const net *n, int out_t, float **wout)
{
    const Onnx__GraphProto *g = I->g;
    int osp = I->t[out_t].spec;
    if (I->t[out_t].g5) {
        I->nd = NULL;
        return ox_fail(I, "graph output %.100s is a 5-D view of branches; dse's outputs are "
                       "[1, C, H, W] or [1, N] (reshape it back)", I->t[out_t].name);
    }
    if (net_find(n, I->s[osp].name) != n->n - 1) {
        I->nd = NULL;
        return ox_fail(I, "graph output %.100s is not the network's last layer (%s)",
                     I->t[out_t].name, n->layers[n->n - 1].name);
    }
    for (int i = 0; i < I->ns; i++) {
        const ox_spec *s = &I->s[i];
        int li = net_find(n, s->name);
        const net_layer *L = &n->layers[li];
        net_shape x = net_in_shape(n, li, 0);
        I->nd = s->node;
        I->nd_idx = s->node_idx;
        if (s->flat_n > 0 && L->out.c != s->flat_n)
            return ox_fail(I, "Reshape to [1, %lld] of a tensor of %d elements", (long long)s->flat_n,
                         L->out.c);
        if (s->flat_n == -2 && (x.h != 1 || x.w != 1))
            return ox_fail(I, "Reshape to [1, 0] keeps dimension 1 (%d) of a %dx%dx%d tensor: "
                         "not a flatten", x.c, x.c, x.h, x.w);
        if (s->flat_softmax && (x.h != 1 || x.w != 1))
            return ox_fail(I, "Softmax (opset < 13) over C*H*W of a %dx%dx%d tensor; dse's is over "
                         "the channels", x.c, x.h, x.w);
        if (s->nw != L->weights) {
            if (L->kind == NET_CONV)
                return ox_fail(I, "weight %.100s fits %lld input channels, the input has %d (groups %d)",
                             s->node->input[1],
                             (long long)(s->nw - (s->a.bias ? s->a.out_c : 0)) /
                                 ((int64_t)s->a.out_c * s->a.kh * s->a.kw) * s->a.groups,
                             x.c, s->a.groups);
            if (L->kind == NET_FC)
                return ox_fail(I, "weight %.100s has %lld inputs per output, the input has %lld",
                             s->node->input[1], (long long)(s->nw - (s->a.bias ? s->a.out_c : 0)) /
                                                    s->a.out_c, (long long)net_shape_numel(x));
            return ox_fail(I, "has %lld weight values, %s %dx%dx%d needs %lld", (long long)s->nw,
                         net_kind_name(L->kind), x.c, x.h, x.w, (long long)L->weights);
        }
    }
    I->nd = NULL;
    for (size_t i = 0; i < g->n_value_info; i++)
        if (cross_check(I, n, g->value_info[i], 0)) return -1;
    for (size_t k = 0; k < g->n_output; k++)
        if (cross_check(I, n, g->output[k], 1)) return -1;
    if (!wout) return 0;
    int64_t total = weights_total(n), off = 0;
    float *w = malloc(total ? (size_t)total * sizeof *w : 1);
    if (!w) return ox_fail(I, "out of memory for %lld weights", (long long)total);
    for (int li = 0; li < n->n; li++) {
        const ox_spec *s = &I->s[ox_smap_get(&I->lnames, n->layers[li].name)];
        if (s->nw) memcpy(w + off, s->w, (size_t)s->nw * sizeof *w);
        off += s->nw;
    }
    *wout = w;
    return 0;
}

static void imp_free(ox_imp *I)
{
    for (int i = 0; i < I->ns; i++) {
        free(I->s[i].name);
        free(I->s[i].in);
        free(I->s[i].w);
    }
    free(I->s);
    free(I->t);
    for (int i = 0; i < I->nowned; i++) free(I->owned[i]);
    free(I->owned);
    ox_smap_free(&I->tmap);
    ox_smap_free(&I->explicit_names);
    ox_smap_free(&I->lnames);
}

/* A node holding an attribute twice (ONNX requires names unique; a
 * reader taking the first would silently ignore the second). */
static int dup_attribute(ox_imp *I)
{
    const Onnx__NodeProto *nd = I->nd;
    if (nd->n_attribute > 256) return ox_fail(I, "has %zu attributes", nd->n_attribute);
    for (size_t i = 0; i < nd->n_attribute; i++)
        for (size_t j = 0; j < i; j++) {
            const char *a = nd->attribute[i]->name ? nd->attribute[i]->name : "";
            const char *b = nd->attribute[j]->name ? nd->attribute[j]->name : "";
            if (!strcmp(a, b)) return ox_fail(I, "attribute %.100s is given twice", a);
        }
    return 0;
}

/* The network's name: the graph's, unless that is empty or the default
 * an exporter gives every graph (torch's "torch_jit", "main_graph",
 * tf2onnx's "tf2onnx"...): two such networks would share one name, and a
 * calibration of one (coefficients are keyed "network/layer") would price
 * the other.  Those take the file's name without its folder and ".onnx"
 * (path NULL, a buffer: the graph's name, or "onnx" when it has none). */
static const char *net_name(const char *graph, const char *path, char *buf, size_t cap)
{
    static const char *const generic[] = {"torch_jit", "torch-jit-export", "main_graph", "tf2onnx",
                                          "onnx", "graph", "Graph", NULL};
    int gen = !graph || !graph[0];
    for (int i = 0; !gen && generic[i]; i++) gen = !strcmp(graph, generic[i]);
    if (!gen) return graph;
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    size_t k = base ? strlen(base) : 0;
    if (k > 5 && !strcmp(base + k - 5, ".onnx")) k -= 5;
    if (!k || k >= cap) return graph && graph[0] ? graph : "onnx";
    memcpy(buf, base, k);
    buf[k] = 0;
    return buf;
}

/* The whole import.  dir: folder for external data (NULL: refuse it);
 * wout: receives the weights (NULL: validate only). */
/* A graph of several outputs (a detector's heads, a segmenter's aux
 * output): dse's nets have one, so the importer joins them, each
 * flattened, in the graph's order, into one Concat layer "outputs" (its
 * floats are the outputs one after another).  Made as ONNX nodes (Flatten,
 * Concat) run through the importer like the file's own, so every rule of
 * theirs holds; the nodes live until the import ends (specs point at
 * them). */
#define JOIN_NAME "dse:outputs"
typedef struct {
    Onnx__NodeProto nd[OX_MAX_OUTPUTS + 1];
    Onnx__AttributeProto at[OX_MAX_OUTPUTS + 1], *atp[OX_MAX_OUTPUTS + 1];
    char *in[OX_MAX_OUTPUTS + 1], *out[OX_MAX_OUTPUTS + 1], *cat_in[OX_MAX_OUTPUTS];
    char names[OX_MAX_OUTPUTS][48], tnames[OX_MAX_OUTPUTS][48];
} joined;

static int join_outputs(ox_imp *I, joined *j)
{
    const Onnx__GraphProto *g = I->g;
    int k, nout = (int)g->n_output;
    I->nd = NULL;
    for (k = 0; k < nout; k++) { /* each must be a layer's output, as a single one must */
        const char *nm = g->output[k]->name ? g->output[k]->name : "";
        int t = ox_smap_get(&I->tmap, nm);
        if (t >= 0 && I->t[t].kind == OX_SYM && ox_sym_realize(I, t)) return -1;
        if (t < 0 || I->t[t].kind != OX_ACT || I->t[t].spec < 0)
            return ox_fail(I, "graph output %.100s is %s", nm,
                           t < 0 || I->t[t].kind == OX_UNDEF ? "not produced by any node"
                           : I->t[t].kind == OX_CONST      ? "a constant"
                                                           : "the graph input itself (no layers)");
    }
    for (k = 0; k <= nout; k++) {
        Onnx__NodeProto *nd = &j->nd[k];
        onnx__node_proto__init(nd);
        onnx__attribute_proto__init(&j->at[k]);
        j->at[k].name = "axis";
        j->at[k].has_type = 1, j->at[k].type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        j->at[k].has_i = 1, j->at[k].i = 1;
        j->atp[k] = &j->at[k];
        nd->n_attribute = 1, nd->attribute = &j->atp[k];
        nd->n_output = 1, nd->output = &j->out[k];
        if (k < nout) { /* Flatten of output k */
            snprintf(j->names[k], sizeof j->names[k], "outputs.%d", k);
            snprintf(j->tnames[k], sizeof j->tnames[k], JOIN_NAME ".%d", k);
            j->in[k] = g->output[k]->name ? g->output[k]->name : "";
            j->out[k] = j->tnames[k];
            j->cat_in[k] = j->tnames[k];
            nd->op_type = "Flatten", nd->name = j->names[k];
            nd->n_input = 1, nd->input = &j->in[k];
        } else {
            j->out[k] = JOIN_NAME;
            nd->op_type = "Concat", nd->name = "outputs";
            nd->n_input = (size_t)nout, nd->input = j->cat_in;
        }
        int t = tensor_slot(I, j->out[k]);
        if (t < 0) return ox_fail(I, "out of memory");
        if (I->t[t].kind != OX_UNDEF)
            return ox_fail(I, "tensor %s exists already: cannot join the graph's outputs", j->out[k]);
        if (k < nout) I->t[t].nuse++;
    }
    for (k = 0; k <= nout; k++) {
        I->nd = &j->nd[k];
        I->nd_idx = (int)g->n_node + k;
        if (ox_import_node(I)) return -1;
    }
    return 0;
}

static net *import(const uint8_t *buf, size_t len, const char *what, const char *dir,
                   float **wout, char *err)
{
    ox_imp I;
    memset(&I, 0, sizeof I);
    I.what = what;
    I.err = err;
    I.d.dir = dir;
    I.d.err = err;
    I.keep = wout != NULL;
    I.input = -1;
    net *n = NULL;
    joined jo;
    memset(&jo, 0, sizeof jo);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    if (!m) {
        ox_seterr(err, "%s: not an ONNX model (protobuf parse failed: truncated or corrupt file)",
               what);
        return NULL;
    }
    Onnx__GraphProto *g = m->graph;
    if (!g || g->n_node == 0) {
        ox_seterr(err, "%s: not an ONNX model (no graph or an empty one)", what);
        goto out;
    }
    I.g = g;
    I.opset = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = m->opset_import[i];
        if (!o->domain || !o->domain[0] || !strcmp(o->domain, "ai.onnx")) I.opset = o->version;
    }
    if (I.opset < 0 && m->n_opset_import == 0 && m->has_ir_version && m->ir_version < 3)
        I.opset = 1; /* before opset_import existed */
    if (I.opset < OX_OPSET_MIN || I.opset > OX_OPSET_MAX) {
        if (I.opset < 0) ox_seterr(err, "%s: not an ONNX model (no opset for the ONNX domain)", what);
        else ox_seterr(err, "%s: opset %lld is outside what dse imports (%d to %d)", what,
                    (long long)I.opset, OX_OPSET_MIN, OX_OPSET_MAX);
        goto out;
    }
    if (g->n_output < 1) {
        ox_seterr(err, "%s: the graph has no output", what);
        goto out;
    }
    if (g->n_output > OX_MAX_OUTPUTS) {
        ox_seterr(err, "%s: the graph has %zu outputs; dse joins at most %d", what, g->n_output,
                  OX_MAX_OUTPUTS);
        goto out;
    }
    if (g->n_sparse_initializer) {
        ox_seterr(err, "%s: sparse initializer %.100s is unsupported", what,
               g->sparse_initializer[0]->values && g->sparse_initializer[0]->values->name
                   ? g->sparse_initializer[0]->values->name : "?");
        goto out;
    }
    size_t nnames = g->n_initializer + g->n_input + 1;
    for (size_t i = 0; i < g->n_node; i++) nnames += g->node[i]->n_output;
    if (ox_smap_init(&I.tmap, (int)(nnames < 1u << 28 ? nnames : 1u << 28)) ||
        ox_smap_init(&I.explicit_names, (int)(g->n_node < 1u << 28 ? g->n_node : 1u << 28)) ||
        ox_smap_init(&I.lnames, (int)(g->n_node < 1u << 28 ? g->n_node : 1u << 28))) {
        ox_seterr(err, "%s: out of memory", what);
        goto out;
    }
    /* Tensors: initializers, node outputs (defined when their node is
     * imported), and every name read, counting its readers. */
    for (size_t i = 0; i < g->n_initializer; i++) {
        const char *nm = g->initializer[i]->name ? g->initializer[i]->name : "";
        int t = tensor_slot(&I, nm);
        if (t < 0) goto oom;
        if (I.t[t].kind == OX_CONST) {
            ox_seterr(err, "%s: initializer %.100s is given twice", what, nm);
            goto out;
        }
        I.t[t].kind = OX_CONST;
        I.t[t].tp = g->initializer[i];
    }
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        if (!nd->op_type) {
            ox_seterr(err, "%s: node #%zu has no operator type", what, i);
            goto out;
        }
        for (size_t k = 0; k < nd->n_input; k++) {
            if (!nd->input[k] || !nd->input[k][0]) continue;
            int t = tensor_slot(&I, nd->input[k]);
            if (t < 0) goto oom;
            I.t[t].nuse++;
        }
        for (size_t k = 0; k < nd->n_output; k++)
            if (nd->output[k] && nd->output[k][0] && tensor_slot(&I, nd->output[k]) < 0) goto oom;
        if (nd->name && nd->name[0] && ox_smap_put(&I.explicit_names, nd->name, (int)i) < -1) goto oom;
    }
    const char *oname = g->output[0]->name ? g->output[0]->name : "";
    int out_t = tensor_slot(&I, oname);
    if (out_t < 0) goto oom;
    I.t[out_t].nuse++;
    for (size_t k = 1; k < g->n_output; k++) {
        int t = tensor_slot(&I, g->output[k]->name ? g->output[k]->name : "");
        if (t < 0) goto oom;
        I.t[t].nuse++;
    }
    net_shape in;
    if (graph_input(&I, &in) || no_attention(&I)) goto out;
    for (size_t i = 0; i < g->n_node; i++) {
        I.nd = g->node[i];
        I.nd_idx = (int)i;
        if (dup_attribute(&I) || ox_import_node(&I)) goto out;
    }
    if (g->n_output > 1) {
        if (join_outputs(&I, &jo)) goto out;
        oname = JOIN_NAME;
        out_t = ox_smap_get(&I.tmap, oname);
    }
    I.nd = NULL;
    if (I.t[out_t].kind == OX_SYM) { /* a pattern's step as the output */
        if (ox_sym_realize(&I, out_t)) {
            /* ox_fail named the value "input"; it is the graph output */
            char msg[BASE_ERRLEN];
            const char *p = strstr(err, ": input ");
            snprintf(msg, sizeof msg, "%s", p ? p + 8 : err);
            ox_seterr(err, "%s: graph output %s", what, msg);
            goto out;
        }
    }
    if (I.t[out_t].kind != OX_ACT || I.t[out_t].spec < 0) {
        ox_seterr(err, "%s: graph output %.100s is %s", what, oname,
               I.t[out_t].kind == OX_UNDEF ? "not produced by any node"
               : I.t[out_t].kind == OX_CONST ? "a constant" : "the graph input itself (no layers)");
        goto out;
    }
    int autopad = 0;
    for (int i = 0; i < I.ns; i++) autopad |= I.s[i].autopad;
    char stem[128];
    const char *gname = net_name(g->name, dir ? what : NULL, stem, sizeof stem);
    if (!ox_printable(gname)) {
        ox_seterr(err, "%s: the graph's name is not UTF-8 text without control characters", what);
        goto out;
    }
    n = build(&I, gname, in);
    if (n && autopad) {
        fix_autopad(&I, n);
        net_free(n);
        n = build(&I, gname, in);
    }
    if (n && after_finalize(&I, n, out_t, wout)) {
        net_free(n);
        n = NULL;
    }
    goto out;
oom:
    ox_seterr(err, "%s: out of memory", what);
out:
    imp_free(&I);
    onnx__model_proto__free_unpacked(m, NULL);
    return n;
}

static net *import_file(const char *path, float **wout, size_t *flen, char *err)
{
    size_t len = 0;
    uint8_t *buf = ox_read_all(path, &len, err);
    if (!buf) return NULL;
    if (flen) *flen = len;
    char *dir = ox_dir_of(path);
    net *n = dir ? import(buf, len, path, dir, wout, err) : NULL;
    if (!dir) ox_seterr(err, "%s: out of memory", path);
    free(dir);
    free(buf);
    return n;
}

net *onnx_import_weights(const char *path, float **w, char *err)
{
    *w = NULL;
    return import_file(path, w, NULL, err);
}

net *onnx_import(const char *path, const char *weights_out, char *err)
{
    float *w = NULL;
    size_t flen = 0;
    net *n = import_file(path, weights_out ? &w : NULL, &flen, err);
    if (!n) return NULL;
    /* the model is its own weights file: its size, so that a network file
     * pointing at it notices when it is replaced (net_load) */
    n->weights_bytes = weights_out ? 0 : (int64_t)flen;
    if (weights_out && weights_save(n, w, weights_out, err)) {
        free(w);
        net_free(n);
        return NULL;
    }
    free(w);
    n->weights_path = base_strdup(weights_out ? weights_out : path);
    if (!n->weights_path) {
        ox_seterr(err, "%s: out of memory", path);
        net_free(n);
        return NULL;
    }
    return n;
}

net *onnx_import_buffer(const void *data, size_t len, const char *what, char *err)
{
    float *w = NULL;
    net *n = import(data, len, what, NULL, &w, err);
    free(w);
    return n;
}

float *onnx_read_weights(const char *path, const net *n, char *err)
{
    float *w = NULL;
    net *m = import_file(path, &w, NULL, err);
    if (!m) return NULL;
    int same = m->n == n->n;
    for (int i = 0; same && i < n->n; i++)
        same = m->layers[i].kind == n->layers[i].kind &&
               m->layers[i].weights == n->layers[i].weights &&
               !strcmp(m->layers[i].name, n->layers[i].name);
    if (!same) {
        ox_seterr(err, "%s: its layers no longer match network %s", path, n->name);
        free(w);
        w = NULL;
    }
    net_free(m);
    return w;
}

/* onnx_export.c -- any net as an ONNX model (opset 13, IR version 7),
 * written atomically; the inverse of the importer (docs/onnx.md, Export).
 *
 * Invariant: each layer is one node of the same name whose output tensor
 * has the layer's name; glue nodes the importer must not turn into layers
 * (a 4-D view of a [1, C] tensor, a Flatten before a Gemm) are marked
 * OX_IMPLICIT, so export then import gives back the same net.  Nothing is
 * left on disk on failure.
 */
#include "onnx_impl.h"
#include "weights.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT_OPSET 13
#define EXPORT_IR 7 /* IR version 7 goes with opset 13 */

/* Everything the model points to is allocated through ex_alloc and freed
 * at once; weight tensors point into the weights array (not copied). */
typedef struct {
    void **blocks;
    int nblocks, capb;
    int failed;
    Onnx__NodeProto **nodes;
    size_t nnodes, capn;
    Onnx__TensorProto **inits;
    size_t ninits, capi;
    Onnx__ValueInfoProto **vis;
    size_t nvis, capv;
    ox_smap names; /* every tensor name, to refuse clashes */
    int names_only; /* onnx_node_names: nodes and names, no weight data */
    const char *clash;
} ex;

static void *ex_alloc(ex *E, size_t size)
{
    if (E->failed) return NULL;
    if (E->nblocks == E->capb) {
        int cap = E->capb ? 2 * E->capb : 256;
        void **b = realloc(E->blocks, (size_t)cap * sizeof *b);
        if (!b) return E->failed = 1, NULL;
        E->blocks = b;
        E->capb = cap;
    }
    void *p = calloc(1, size ? size : 1);
    if (!p) return E->failed = 1, NULL;
    E->blocks[E->nblocks++] = p;
    return p;
}

static void ex_free(ex *E)
{
    for (int i = 0; i < E->nblocks; i++) free(E->blocks[i]);
    free(E->blocks);
    free(E->nodes);
    free(E->inits);
    free(E->vis);
    ox_smap_free(&E->names);
}

static char *ex_str(ex *E, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = ex_alloc(E, (size_t)len + 1);
    if (!s) return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return s;
}

static int ex_push(ex *E, void ***arr, size_t *n, size_t *cap, void *item)
{
    if (E->failed || !item) return E->failed = 1, -1;
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        void **a = realloc(*arr, c * sizeof *a);
        if (!a) return E->failed = 1, -1;
        *arr = a;
        *cap = c;
    }
    (*arr)[(*n)++] = item;
    return 0;
}

/* Claim a tensor name; a second claim is a clash. */
static const char *ex_name(ex *E, const char *name)
{
    if (!name) return NULL;
    if (ox_smap_get(&E->names, name) >= 0 || ox_smap_put(&E->names, name, 1) < 0) {
        if (!E->clash) E->clash = name;
        E->failed = 1;
    }
    return name;
}

static Onnx__AttributeProto *a_int(ex *E, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = ex_alloc(E, sizeof *a);
    if (!a) return NULL;
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    a->has_i = 1, a->i = v;
    return a;
}

static Onnx__AttributeProto *a_float(ex *E, const char *name, double v)
{
    Onnx__AttributeProto *a = ex_alloc(E, sizeof *a);
    if (!a) return NULL;
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    a->has_f = 1, a->f = (float)v;
    return a;
}

static Onnx__AttributeProto *a_str(ex *E, const char *name, const char *v)
{
    Onnx__AttributeProto *a = ex_alloc(E, sizeof *a);
    if (!a) return NULL;
    onnx__attribute_proto__init(a);
    a->name = (char *)name;
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    a->has_s = 1, a->s.len = strlen(v), a->s.data = (uint8_t *)v;
    return a;
}

static Onnx__AttributeProto *a_ints(ex *E, const char *name, int n, const int *v)
{
    Onnx__AttributeProto *a = ex_alloc(E, sizeof *a);
    int64_t *iv = ex_alloc(E, (size_t)n * sizeof *iv);
    if (!a || !iv) return NULL;
    onnx__attribute_proto__init(a);
    for (int i = 0; i < n; i++) iv[i] = v[i];
    a->name = (char *)name;
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = (size_t)n, a->ints = iv;
    return a;
}

/* A node; inputs and attributes NULL-terminated varargs-free arrays. */
static Onnx__NodeProto *ex_node(ex *E, const char *op, const char *name, const char *out,
                                int nin, const char **in, int nattr, Onnx__AttributeProto **attrs)
{
    Onnx__NodeProto *nd = ex_alloc(E, sizeof *nd);
    char **ins = ex_alloc(E, (size_t)nin * sizeof *ins);
    char **outs = ex_alloc(E, sizeof *outs);
    Onnx__AttributeProto **as = ex_alloc(E, (size_t)nattr * sizeof *as);
    if (!nd || !ins || !outs || !as) return NULL;
    onnx__node_proto__init(nd);
    for (int i = 0; i < nin; i++) ins[i] = (char *)in[i];
    for (int i = 0; i < nattr; i++) {
        if (!attrs[i]) return E->failed = 1, NULL;
        as[i] = attrs[i];
    }
    outs[0] = (char *)ex_name(E, out);
    nd->op_type = (char *)op;
    nd->name = (char *)name;
    nd->n_input = (size_t)nin, nd->input = ins;
    nd->n_output = 1, nd->output = outs;
    nd->n_attribute = (size_t)nattr, nd->attribute = as;
    ex_push(E, (void ***)&E->nodes, &E->nnodes, &E->capn, nd);
    return nd;
}

/* A float initializer over `data` (not copied), or an int64 one. */
static const char *ex_init(ex *E, const char *name, int ndims, const int64_t *dims,
                           const float *data, const int64_t *idata)
{
    Onnx__TensorProto *t = ex_alloc(E, sizeof *t);
    int64_t *d = ex_alloc(E, (size_t)(ndims ? ndims : 1) * sizeof *d);
    if (!t || !d || !name) return E->failed = 1, NULL;
    onnx__tensor_proto__init(t);
    int64_t n = 1;
    for (int i = 0; i < ndims; i++) d[i] = dims[i], n *= dims[i];
    t->n_dims = (size_t)ndims, t->dims = d;
    t->name = (char *)ex_name(E, name);
    t->has_data_type = 1;
    t->has_raw_data = 1;
    if (data) {
        t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
        t->raw_data.len = (size_t)n * 4;
        t->raw_data.data = (uint8_t *)data; /* little-endian: see onnx_export */
    } else if (!idata) {
        return E->failed = 1, NULL; /* neither: a caller's bug, not a crash */
    } else {
        t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
        uint8_t *raw = ex_alloc(E, (size_t)n * 8);
        if (!raw) return NULL;
        memcpy(raw, idata, (size_t)n * 8);
        ox_le_bytes(raw, (size_t)n, 8);
        t->raw_data.len = (size_t)n * 8;
        t->raw_data.data = raw;
    }
    ex_push(E, (void ***)&E->inits, &E->ninits, &E->capi, t);
    return t->name;
}

/* A float weight tensor: count floats from lw + off.  Only its name when
 * listing names (lw is then NULL and never offset). */
static const char *ex_weight(ex *E, const char *name, int ndims, const int64_t *dims,
                             const float *lw, int64_t off)
{
    if (E->names_only) return name ? ex_name(E, name) : (E->failed = 1, NULL);
    return ex_init(E, name, ndims, dims, lw + off, NULL);
}

static Onnx__ValueInfoProto *ex_vi(ex *E, const char *name, int rank, net_shape s)
{
    Onnx__ValueInfoProto *v = ex_alloc(E, sizeof *v);
    Onnx__TypeProto *ty = ex_alloc(E, sizeof *ty);
    Onnx__TypeProto__Tensor *tt = ex_alloc(E, sizeof *tt);
    Onnx__TensorShapeProto *sh = ex_alloc(E, sizeof *sh);
    Onnx__TensorShapeProto__Dimension **dims = ex_alloc(E, 4 * sizeof *dims);
    if (!v || !ty || !tt || !sh || !dims) return NULL;
    int64_t d[4] = {1, s.c, s.h, s.w};
    if (rank == 2) d[1] = net_shape_numel(s);
    for (int k = 0; k < rank; k++) {
        dims[k] = ex_alloc(E, sizeof *dims[k]);
        if (!dims[k]) return NULL;
        onnx__tensor_shape_proto__dimension__init(dims[k]);
        dims[k]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dims[k]->dim_value = d[k];
    }
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)rank, sh->dim = dims;
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1, tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    tt->shape = sh;
    onnx__type_proto__init(ty);
    ty->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    ty->tensor_type = tt;
    onnx__value_info_proto__init(v);
    v->name = (char *)name;
    v->type = ty;
    return v;
}

/* A value_info with the type and shape of initializer t (graph inputs that
 * are initializers too: ONNX_EXPORT_INIT_INPUTS). */
static Onnx__ValueInfoProto *ex_vi_init(ex *E, const Onnx__TensorProto *t)
{
    Onnx__ValueInfoProto *v = ex_alloc(E, sizeof *v);
    Onnx__TypeProto *ty = ex_alloc(E, sizeof *ty);
    Onnx__TypeProto__Tensor *tt = ex_alloc(E, sizeof *tt);
    Onnx__TensorShapeProto *sh = ex_alloc(E, sizeof *sh);
    Onnx__TensorShapeProto__Dimension **dims = ex_alloc(E, (t->n_dims + 1) * sizeof *dims);
    if (!v || !ty || !tt || !sh || !dims) return NULL;
    for (size_t k = 0; k < t->n_dims; k++) {
        dims[k] = ex_alloc(E, sizeof *dims[k]);
        if (!dims[k]) return NULL;
        onnx__tensor_shape_proto__dimension__init(dims[k]);
        dims[k]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        dims[k]->dim_value = t->dims[k];
    }
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = t->n_dims, sh->dim = dims;
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1, tt->elem_type = t->data_type;
    tt->shape = sh;
    onnx__type_proto__init(ty);
    ty->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    ty->tensor_type = tt;
    onnx__value_info_proto__init(v);
    v->name = t->name;
    v->type = ty;
    return v;
}

/* The rank the exported tensor of layer i (or the input, i < 0) has. */
static int rank_of(const int *rank, int i) { return i < 0 ? 4 : rank[i]; }

static int spatial_kind(net_kind k)
{
    return k == NET_CONV || k == NET_DECONV || k == NET_MAXPOOL || k == NET_AVGPOOL || k == NET_GAP ||
           k == NET_LRN || k == NET_BN || k == NET_REDUCEMEAN || k == NET_REDUCEMAX || k == NET_SHUFFLE ||
           k == NET_LAYERNORM || k == NET_SCALE || k == NET_PRELU || k == NET_UPSAMPLE ||
           k == NET_PAD || k == NET_BILINEAR || k == NET_INSTNORM || k == NET_SHUFFLEUP ||
           k == NET_GROUPNORM || k == NET_SHUFFLEDOWN || k == NET_NEAREST || k == NET_BSUM ||
           k == NET_BSOFTMAX;
    /* L2Norm is not: over the features of a 2-D tensor too (embeddings) */
}

/* A float32 scalar initializer. */
static const char *ex_scalar(ex *E, const char *name, double v)
{
    float *f = ex_alloc(E, sizeof *f);
    if (!f) return NULL;
    *f = (float)v;
    ox_le_bytes((uint8_t *)f, 1, 4);
    return ex_init(E, name, 0, NULL, f, NULL);
}

/* An int64 vector initializer. */
static const char *ex_ints(ex *E, const char *name, int n, const int64_t *v)
{
    int64_t d = n;
    return ex_init(E, name, 1, &d, NULL, v);
}

/* A node of one output, named and typed by the caller (ex_node's short form). */
static const char *ex_step(ex *E, const char *op, const char *name, const char *in0,
                           const char *in1, int nattr, Onnx__AttributeProto **attrs)
{
    const char *in[2] = {in0, in1};
    return ex_node(E, op, name, name, in1 ? 2 : 1, in, nattr, attrs) ? name : NULL;
}

/* A data movement as a view, a Transpose and the Reshape back to layer L's
 * [1, C, H, W] (ChannelShuffle, PixelUnshuffle in PyTorch's order): the
 * Reshape to `view` (n dims, LAYER.<vname>, its shape LAYER.<vname>_shape)
 * and the Transpose (LAYER.<tname>) written here; in[0], in[1] become the
 * final Reshape's inputs. */
static void ex_regroup(ex *E, const net_layer *L, const char *vname, const char *tname, int n,
                       const int64_t *view, const int *perm, const char **in)
{
    int64_t b4[4] = {1, L->out.c, L->out.h, L->out.w};
    Onnx__AttributeProto *pa = a_ints(E, "perm", n, perm);
    const char *v = ex_step(E, "Reshape", ex_str(E, "%s.%s", L->name, vname), in[0],
                            ex_ints(E, ex_str(E, "%s.%s_shape", L->name, vname), n, view), 0, NULL);
    in[0] = ex_step(E, "Transpose", ex_str(E, "%s.%s", L->name, tname), v, NULL, 1, &pa);
    in[1] = ex_ints(E, ex_str(E, "%s.shape", L->name), 4, b4);
}

/* protobuf-c writes through this straight into the file. */
typedef struct {
    ProtobufCBuffer base;
    FILE *f;
    int failed;
} file_buffer;

static void fb_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    file_buffer *fb = (file_buffer *)b;
    if (!fb->failed && len && fwrite(data, 1, len, fb->f) != len) fb->failed = 1;
}

/* The glue onnx_export puts before input k of layer i, marked OX_IMPLICIT
 * so that import makes no layer of it: a 4-D view of [1, C] for operators
 * that need NCHW, a Flatten before a Gemm.  rank: the exported rank of
 * every earlier layer's tensor.  One rule for the exporter and
 * onnx_node_names. */
enum { GLUE_NONE, GLUE_4D, GLUE_FLAT };

static int need_4d(const net *n, int i, const int *rank)
{
    const net_layer *L = &n->layers[i];
    int need4 = spatial_kind(L->kind);
    if (L->kind == NET_ADD || L->kind == NET_CONCAT || L->kind == NET_MUL)
        for (int k = 0; k < L->nin; k++) need4 |= rank_of(rank, L->in[k]) == 4;
    return need4;
}

static int glue_of(const net *n, int i, int k, const int *rank)
{
    const net_layer *L = &n->layers[i];
    int pr = rank_of(rank, L->in[k]);
    if (need_4d(n, i, rank) && pr == 2) return GLUE_4D;
    if (L->kind == NET_FC && pr == 4) return GLUE_FLAT;
    return GLUE_NONE;
}

/* The name of that glue node (and of its output tensor). */
static void glue_name(char *buf, size_t len, const char *layer, int k, int glue)
{
    if (glue == GLUE_4D) snprintf(buf, len, "%s.in%d_4d", layer, k);
    else snprintf(buf, len, "%s.flat", layer);
}

/* The exported rank of layer i's tensor. */
/* A plain unary kind (one input, no attributes, no weights) is written as
 * the first ONNX operator its row of kinds.def lists, as the importer reads
 * it (Sigmoid), with its input's rank (plain_unary_op: NULL when the kind
 * is not one). */
static int plain_unary(net_kind k)
{
    const net_kind_info_t *K = net_kind_info(k);
    return K && K->min_in == 1 && K->max_in == 1 && !K->keys[0].key && !K->wlayout && K->onnx[0];
}

static const char *plain_unary_op(ex *E, net_kind k)
{
    if (!plain_unary(k)) return NULL;
    const char *ops = net_kind_info(k)->onnx;
    return ex_str(E, "%.*s", (int)strcspn(ops, " "), ops);
}

static int out_rank(const net *n, int i, const int *rank)
{
    const net_layer *L = &n->layers[i];
    switch (L->kind) {
    case NET_FC:
    case NET_FLATTEN:
        return 2;
    case NET_RELU:
    case NET_DROPOUT:
    case NET_SOFTMAX:
    case NET_HSIGMOID:
    case NET_HSWISH:
    case NET_SLICE:
    case NET_GELU:
    case NET_LEAKYRELU:
    case NET_ELU:
    case NET_CLIP:
    case NET_L2NORM:
    case NET_MISH:
        return rank_of(rank, L->in[0]);
    case NET_ADD:
    case NET_CONCAT:
    case NET_MUL:
        return need_4d(n, i, rank) ? 4 : 2;
    default:
        return plain_unary(L->kind) ? rank_of(rank, L->in[0]) : 4;
    }
}

static int export_layer(ex *E, const net *n, int i, const float *w, int *rank)
{
    const net_layer *L = &n->layers[i];
    const net_attr *a = &L->a;
    const char *in[1024];
    Onnx__AttributeProto *at[8];
    int na = 0;
    for (int k = 0; k < L->nin; k++) {
        int p = L->in[k];
        in[k] = p == NET_INPUT ? n->input_name : n->layers[p].name;
    }
    for (int k = 0; k < L->nin; k++) {
        net_shape ps = net_in_shape(n, i, k);
        int glue = glue_of(n, i, k, rank);
        if (glue == GLUE_NONE) continue;
        size_t gl = strlen(L->name) + 32;
        char *o = ex_alloc(E, gl);
        if (!o) return -1;
        glue_name(o, gl, L->name, k, glue);
        Onnx__NodeProto *g;
        if (glue == GLUE_4D) {
            int64_t four = 4, sh[4] = {1, ps.c, 1, 1}; /* a [1, N] tensor is N x 1 x 1 */
            const char *shn = ex_init(E, ex_str(E, "%s.in%d_shape", L->name, k), 1, &four, NULL, sh);
            const char *gi[2] = {in[k], shn};
            g = ex_node(E, "Reshape", o, o, 2, gi, 0, NULL);
            if (g) ex_push(E, (void ***)&E->vis, &E->nvis, &E->capv, ex_vi(E, o, 4, ps));
        } else {
            const char *gi[1] = {in[k]};
            Onnx__AttributeProto *ax = a_int(E, "axis", 1);
            g = ex_node(E, "Flatten", o, o, 1, gi, 1, &ax);
            if (g) ex_push(E, (void ***)&E->vis, &E->nvis, &E->capv, ex_vi(E, o, 2, ps));
        }
        in[k] = o;
        if (!g) return -1;
        g->doc_string = (char *)OX_IMPLICIT;
    }
    int r = out_rank(n, i, rank);
    const char *op = NULL, *node = L->name; /* the node whose output is the layer's */
    int nin = L->nin;
    const float *lw = w;
    switch (L->kind) {
    case NET_CONV: {
        net_shape x = net_in_shape(n, i, 0);
        int64_t wd[4] = {a->out_c, x.c / a->groups, a->kh, a->kw}, bd[1] = {a->out_c};
        in[1] = ex_weight(E, ex_str(E, "%s.weight", L->name), 4, wd, lw, 0);
        nin = 2;
        if (a->bias) {
            in[2] = ex_weight(E, ex_str(E, "%s.bias", L->name), 1, bd,
                              lw, wd[0] * wd[1] * wd[2] * wd[3]);
            nin = 3;
        }
        int k2[2] = {a->kh, a->kw}, s2[2] = {a->sh, a->sw}, d2[2] = {a->dh, a->dw},
            p4[4] = {a->pt, a->pl, a->pb, a->pr};
        at[na++] = a_ints(E, "kernel_shape", 2, k2);
        at[na++] = a_ints(E, "strides", 2, s2);
        at[na++] = a_ints(E, "dilations", 2, d2);
        at[na++] = a_ints(E, "pads", 4, p4);
        at[na++] = a_int(E, "group", a->groups);
        op = "Conv";
        break;
    }
    case NET_DECONV: {
        /* ONNX's weight is [in_c][out_c/groups][kh][kw]; ours
         * w[out_c][kh][kw][in_c/groups] (kernels.h): transposed back. */
        net_shape x = net_in_shape(n, i, 0);
        int cin_g = x.c / a->groups, cout_g = a->out_c / a->groups, kk = a->kh * a->kw;
        int64_t wd[4] = {x.c, cout_g, a->kh, a->kw}, bd[1] = {a->out_c};
        int64_t nw = (int64_t)a->out_c * kk * cin_g;
        float *t = E->names_only ? NULL : ex_alloc(E, (size_t)nw * sizeof *t);
        if (t)
            for (int o = 0; o < a->out_c; o++)
                for (int q = 0; q < kk; q++)
                    for (int c = 0; c < cin_g; c++)
                        t[(((size_t)(o / cout_g) * cin_g + c) * cout_g + o % cout_g) * kk + q] =
                            lw[((size_t)o * kk + q) * cin_g + c];
        in[1] = ex_weight(E, ex_str(E, "%s.weight", L->name), 4, wd, t, 0);
        nin = 2;
        if (a->bias) {
            in[2] = ex_weight(E, ex_str(E, "%s.bias", L->name), 1, bd, lw, nw);
            nin = 3;
        }
        int k2[2] = {a->kh, a->kw}, s2[2] = {a->sh, a->sw}, d2[2] = {a->dh, a->dw},
            p4[4] = {a->pt, a->pl, a->pb, a->pr}, o2[2] = {a->oph, a->opw};
        at[na++] = a_ints(E, "kernel_shape", 2, k2);
        at[na++] = a_ints(E, "strides", 2, s2);
        at[na++] = a_ints(E, "dilations", 2, d2);
        at[na++] = a_ints(E, "pads", 4, p4);
        if (a->oph || a->opw) at[na++] = a_ints(E, "output_padding", 2, o2);
        at[na++] = a_int(E, "group", a->groups);
        op = "ConvTranspose";
        break;
    }
    case NET_SHUFFLEUP:
        at[na++] = a_int(E, "blocksize", a->up_h);
        at[na++] = a_str(E, "mode", a->ps_dcr ? "DCR" : "CRD");
        op = "DepthToSpace";
        break;
    case NET_INSTNORM: {
        int64_t c = L->out.c;
        in[1] = ex_weight(E, ex_str(E, "%s.scale", L->name), 1, &c, lw, 0);
        in[2] = ex_weight(E, ex_str(E, "%s.B", L->name), 1, &c, lw, c);
        nin = 3;
        at[na++] = a_float(E, "epsilon", a->bn_eps);
        op = "InstanceNormalization";
        break;
    }
    case NET_FC: {
        int64_t K = net_shape_numel(net_in_shape(n, i, 0));
        int64_t wd[2] = {a->out_c, K}, bd[1] = {a->out_c};
        in[1] = ex_weight(E, ex_str(E, "%s.weight", L->name), 2, wd, lw, 0);
        nin = 2;
        if (a->bias) {
            in[2] = ex_weight(E, ex_str(E, "%s.bias", L->name), 1, bd, lw, wd[0] * K);
            nin = 3;
        }
        at[na++] = a_int(E, "transB", 1);
        op = "Gemm";
        break;
    }
    case NET_RELU:
        if (a->relu_max > 0) {
            static const float zero = 0;
            float *mx = ex_alloc(E, sizeof *mx);
            if (!mx) return -1;
            *mx = (float)a->relu_max;
            ox_le_bytes((uint8_t *)mx, 1, 4);
            in[1] = ex_init(E, ex_str(E, "%s.min", L->name), 0, NULL, &zero, NULL);
            in[2] = ex_init(E, ex_str(E, "%s.max", L->name), 0, NULL, mx, NULL);
            nin = 3;
            op = "Clip";
        } else {
            op = "Relu";
        }
        break;
    case NET_LRN:
        at[na++] = a_int(E, "size", a->lrn_size);
        at[na++] = a_float(E, "alpha", a->lrn_alpha);
        at[na++] = a_float(E, "beta", a->lrn_beta);
        at[na++] = a_float(E, "bias", a->lrn_k);
        op = "LRN";
        break;
    case NET_MAXPOOL:
    case NET_AVGPOOL: {
        int k2[2] = {a->kh, a->kw}, s2[2] = {a->sh, a->sw}, p4[4] = {a->pt, a->pl, a->pb, a->pr};
        at[na++] = a_ints(E, "kernel_shape", 2, k2);
        at[na++] = a_ints(E, "strides", 2, s2);
        at[na++] = a_ints(E, "pads", 4, p4);
        at[na++] = a_int(E, "ceil_mode", a->ceil_mode);
        if (L->kind == NET_AVGPOOL) at[na++] = a_int(E, "count_include_pad", a->count_include_pad);
        op = L->kind == NET_MAXPOOL ? "MaxPool" : "AveragePool";
        break;
    }
    case NET_GAP:
        op = "GlobalAveragePool";
        break;
    case NET_BN: {
        int64_t c = L->out.c, d1[1] = {c};
        static const char *role[4] = {"scale", "shift", "mean", "var"};
        for (int k = 0; k < 4; k++)
            in[k + 1] = ex_weight(E, ex_str(E, "%s.%s", L->name, role[k]), 1, d1, lw, k * c);
        nin = 5;
        at[na++] = a_float(E, "epsilon", a->bn_eps);
        op = "BatchNormalization";
        break;
    }
    case NET_ADD:
        op = a->add_sub ? "Sub" : L->nin == 2 ? "Add" : "Sum";
        break;
    case NET_CONCAT:
        at[na++] = a_int(E, "axis", 1);
        op = "Concat";
        break;
    case NET_FLATTEN:
        at[na++] = a_int(E, "axis", 1);
        op = "Flatten";
        break;
    case NET_DROPOUT:
        op = "Dropout";
        break;
    case NET_SOFTMAX:
        at[na++] = a_int(E, "axis", 1);
        op = "Softmax";
        break;
    case NET_HSIGMOID:
        at[na++] = a_float(E, "alpha", a->hs_alpha);
        at[na++] = a_float(E, "beta", a->hs_beta);
        op = "HardSigmoid";
        break;
    case NET_HSWISH: { /* HardSwish is opset 14: x * HardSigmoid(x; 1/6, 1/2), fused back on import */
        Onnx__AttributeProto *hs[2] = {a_float(E, "alpha", 1.0 / 6), a_float(E, "beta", 0.5)};
        const char *h = ex_str(E, "%s.hsig", L->name);
        const char *gi[1] = {in[0]};
        if (!ex_node(E, "HardSigmoid", L->name, h, 1, gi, 2, hs)) return -1;
        in[1] = h;
        nin = 2;
        node = ex_str(E, "%s.mul", L->name);
        op = "Mul";
        break;
    }
    case NET_MISH: { /* Mish is opset 18: x * tanh(softplus(x)), torch.onnx's form, fused back on import */
        const char *sp = ex_step(E, "Softplus", ex_str(E, "%s.softplus", L->name), in[0], NULL, 0, NULL);
        in[1] = ex_step(E, "Tanh", ex_str(E, "%s.tanh", L->name), sp, NULL, 0, NULL);
        nin = 2;
        op = "Mul";
        break;
    }
    case NET_MUL:
        op = "Mul";
        break;
    case NET_REDUCEMEAN:
    case NET_REDUCEMAX: {
        int ax[3], nax = 0;
        if (a->rm_c) ax[nax++] = 1;
        if (a->rm_h) ax[nax++] = 2;
        if (a->rm_w) ax[nax++] = 3;
        at[na++] = a_ints(E, "axes", nax, ax);
        at[na++] = a_int(E, "keepdims", 1);
        op = L->kind == NET_REDUCEMAX ? "ReduceMax" : "ReduceMean";
        break;
    }
    case NET_SLICE: { /* the channels, then the rows and columns it crops */
        net_shape x = net_in_shape(n, i, 0);
        int64_t s[3] = {a->start}, e[3] = {(int64_t)a->start + a->out_c}, ax[3] = {1}, st[3] = {1};
        int k = 1;
        if (L->out.h != x.h) {
            s[k] = a->sl_top, e[k] = (int64_t)a->sl_top + (int64_t)(L->out.h - 1) * a->sh + 1;
            ax[k] = 2, st[k++] = a->sh;
        }
        if (L->out.w != x.w) {
            s[k] = a->sl_left, e[k] = (int64_t)a->sl_left + (int64_t)(L->out.w - 1) * a->sw + 1;
            ax[k] = 3, st[k++] = a->sw;
        }
        in[1] = ex_ints(E, ex_str(E, "%s.starts", L->name), k, s);
        in[2] = ex_ints(E, ex_str(E, "%s.ends", L->name), k, e);
        in[3] = ex_ints(E, ex_str(E, "%s.axes", L->name), k, ax);
        nin = 4;
        if (k > 1) in[nin++] = ex_ints(E, ex_str(E, "%s.steps", L->name), k, st);
        op = "Slice";
        break;
    }
    case NET_SHUFFLEDOWN: {
        if (a->ps_dcr || a->up_h == 1) { /* SpaceToDepth's own order (by 1 both are the identity) */
            at[na++] = a_int(E, "blocksize", a->up_h);
            op = "SpaceToDepth";
            break;
        }
        /* PyTorch's order, as torch.onnx writes pixel_unshuffle: [1, C, H/r, r, W/r, r],
         * the two r beside C, back to [1, C r^2, H/r, W/r] */
        net_shape y = L->out;
        int64_t r = a->up_h, v6[6] = {1, y.c / (r * r), y.h, r, y.w, r};
        static const int perm[6] = {0, 1, 3, 5, 2, 4};
        ex_regroup(E, L, "blocks", "gather", 6, v6, perm, in);
        nin = 2;
        op = "Reshape";
        break;
    }
    case NET_SHUFFLE: { /* [1, g, C/g, H, W], swap g and C/g, back to [1, C, H, W] */
        net_shape x = L->out;
        int64_t g5[5] = {1, a->groups, x.c / a->groups, x.h, x.w};
        static const int perm[5] = {0, 2, 1, 3, 4};
        ex_regroup(E, L, "group", "swap", 5, g5, perm, in);
        nin = 2;
        op = "Reshape";
        break;
    }
    case NET_BSUM: { /* torch's x.view(1, K, C, H, W).sum(1) */
        net_shape x = L->out;
        int64_t v5[5] = {1, a->groups, x.c, x.h, x.w}, one[1] = {1};
        in[0] = ex_step(E, "Reshape", ex_str(E, "%s.branches", L->name), in[0],
                        ex_ints(E, ex_str(E, "%s.branches_shape", L->name), 5, v5), 0, NULL);
        in[1] = ex_ints(E, ex_str(E, "%s.axes", L->name), 1, one);
        nin = 2;
        at[na++] = a_int(E, "keepdims", 0);
        op = "ReduceSum";
        break;
    }
    case NET_BSOFTMAX: { /* timm's radix softmax: [1, G, K, -1], K first, softmax over it */
        net_shape x = L->out;
        int64_t v4[4] = {1, a->card, a->groups, (int64_t)x.c / ((int64_t)a->card * a->groups) * x.h * x.w};
        static const int perm[4] = {0, 2, 1, 3};
        ex_regroup(E, L, "groups", "branches_first", 4, v4, perm, in);
        /* The Softmax, which the importer makes the layer of, carries its name. */
        Onnx__AttributeProto *ax = a_int(E, "axis", 1);
        const char *sm = ex_str(E, "%s.softmax", L->name), *si[1] = {in[0]};
        if (!sm || !ex_node(E, "Softmax", L->name, sm, 1, si, 1, &ax)) return -1;
        in[0] = sm;
        nin = 2;
        node = ex_str(E, "%s.back", L->name);
        op = "Reshape";
        break;
    }
    case NET_LAYERNORM: { /* LayerNormalization is opset 17: its decomposed form */
        int64_t c = L->out.c, d3[3] = {c, 1, 1};
        int one[1] = {1};
        Onnx__AttributeProto *m1[2] = {a_ints(E, "axes", 1, one), a_int(E, "keepdims", 1)};
        Onnx__AttributeProto *m2[2] = {a_ints(E, "axes", 1, one), a_int(E, "keepdims", 1)};
        const char *x = in[0];
        const char *mean = ex_step(E, "ReduceMean", ex_str(E, "%s.mean", L->name), x, NULL, 2, m1);
        const char *cent = ex_step(E, "Sub", ex_str(E, "%s.centre", L->name), x, mean, 0, NULL);
        const char *sq = ex_step(E, "Pow", ex_str(E, "%s.square", L->name), cent,
                                 ex_scalar(E, ex_str(E, "%s.two", L->name), 2), 0, NULL);
        const char *var = ex_step(E, "ReduceMean", ex_str(E, "%s.var", L->name), sq, NULL, 2, m2);
        const char *ve = ex_step(E, "Add", ex_str(E, "%s.var_eps", L->name), var,
                                 ex_scalar(E, ex_str(E, "%s.epsilon", L->name), a->bn_eps), 0, NULL);
        const char *sd = ex_step(E, "Sqrt", ex_str(E, "%s.std", L->name), ve, NULL, 0, NULL);
        /* The Div, which the importer makes the layer of, carries its name. */
        const char *nm = ex_str(E, "%s.norm", L->name), *di[2] = {cent, sd};
        if (!nm || !ex_node(E, "Div", L->name, nm, 2, di, 0, NULL)) return -1;
        const char *sc = ex_step(E, "Mul", ex_str(E, "%s.scaled", L->name), nm,
                                 ex_weight(E, ex_str(E, "%s.scale", L->name), 3, d3, lw, 0), 0, NULL);
        in[0] = sc;
        in[1] = ex_weight(E, ex_str(E, "%s.shift", L->name), 3, d3, lw, c);
        nin = 2;
        node = ex_str(E, "%s.add", L->name);
        op = "Add";
        break;
    }
    case NET_L2NORM: { /* F.normalize's form: x / Clip(ReduceL2(x over channels), eps) */
        int one[1] = {1};
        Onnx__AttributeProto *r2[2] = {a_ints(E, "axes", 1, one), a_int(E, "keepdims", 1)};
        const char *norm = ex_step(E, "ReduceL2", ex_str(E, "%s.norm", L->name), in[0], NULL, 2, r2);
        if (a->bn_eps > 0) { /* Clip's min is an input from opset 11 */
            const char *ci[2] = {norm, ex_scalar(E, ex_str(E, "%s.epsilon", L->name), a->bn_eps)};
            const char *cl = ex_str(E, "%s.floor", L->name);
            if (!cl || !ex_node(E, "Clip", cl, cl, 2, ci, 0, NULL)) return -1;
            norm = cl;
        }
        in[1] = norm;
        nin = 2;
        op = "Div";
        break;
    }
    case NET_GROUPNORM: { /* GroupNormalization is opset 18: torch.onnx's form below it */
        /* [1, G, C/G H W], InstanceNormalization (scale 1, shift 0 per
         * group), back to [1, C, H, W], then the channels' scale and shift. */
        net_shape x = L->out;
        int64_t G = a->groups, g3[3] = {1, G, -1}, b4[4] = {1, x.c, x.h, x.w}, d3[3] = {x.c, 1, 1};
        float *f = ex_alloc(E, (size_t)(2 * G) * sizeof *f);
        if (!f) return -1;
        for (int64_t g = 0; g < G; g++) f[g] = 1, f[G + g] = 0;
        ox_le_bytes((uint8_t *)f, (size_t)(2 * G), 4);
        const char *v = ex_step(E, "Reshape", ex_str(E, "%s.group", L->name), in[0],
                                ex_ints(E, ex_str(E, "%s.group_shape", L->name), 3, g3), 0, NULL);
        const char *ii[3] = {v, ex_init(E, ex_str(E, "%s.ones", L->name), 1, &G, f, NULL),
                             ex_init(E, ex_str(E, "%s.zeros", L->name), 1, &G, f + G, NULL)};
        Onnx__AttributeProto *ep[1] = {a_float(E, "epsilon", a->bn_eps)};
        /* The InstanceNormalization, which the importer makes the layer of,
         * carries its name. */
        const char *nm = ex_str(E, "%s.norm", L->name);
        if (!nm || !ii[0] || !ex_node(E, "InstanceNormalization", L->name, nm, 3, ii, 1, ep)) return -1;
        v = ex_step(E, "Reshape", ex_str(E, "%s.ungroup", L->name), nm,
                    ex_ints(E, ex_str(E, "%s.shape", L->name), 4, b4), 0, NULL);
        in[0] = ex_step(E, "Mul", ex_str(E, "%s.scaled", L->name), v,
                        ex_weight(E, ex_str(E, "%s.scale", L->name), 3, d3, lw, 0), 0, NULL);
        in[1] = ex_weight(E, ex_str(E, "%s.shift", L->name), 3, d3, lw, x.c);
        nin = 2;
        node = ex_str(E, "%s.add", L->name);
        op = "Add";
        break;
    }
    case NET_GELU: { /* Gelu is opset 20: x/2 (1 + erf(x / sqrt 2)) */
        if (a->gelu_tanh) return -2;
        const char *x = in[0];
        const char *d = ex_step(E, "Div", ex_str(E, "%s.div", L->name), x,
                                ex_scalar(E, ex_str(E, "%s.sqrt2", L->name), sqrt(2.0)), 0, NULL);
        const char *e = ex_step(E, "Erf", ex_str(E, "%s.erf", L->name), d, NULL, 0, NULL);
        const char *e1 = ex_step(E, "Add", ex_str(E, "%s.erf1", L->name), e,
                                 ex_scalar(E, ex_str(E, "%s.one", L->name), 1), 0, NULL);
        in[0] = ex_step(E, "Mul", ex_str(E, "%s.xerf1", L->name), x, e1, 0, NULL);
        in[1] = ex_scalar(E, ex_str(E, "%s.half", L->name), 0.5);
        nin = 2;
        op = "Mul";
        break;
    }
    case NET_SCALE: {
        int64_t d3[3] = {L->out.c, 1, 1};
        in[1] = ex_weight(E, ex_str(E, "%s.scale", L->name), 3, d3, lw, 0);
        nin = 2;
        op = "Mul";
        break;
    }
    case NET_LEAKYRELU:
    case NET_ELU:
        at[na++] = a_float(E, "alpha", a->act_alpha);
        op = L->kind == NET_ELU ? "Elu" : "LeakyRelu";
        break;
    case NET_PRELU: {
        int64_t d3[3] = {L->out.c, 1, 1};
        in[1] = ex_weight(E, ex_str(E, "%s.slope", L->name), 3, d3, lw, 0);
        nin = 2;
        op = "PRelu";
        break;
    }
    case NET_CLIP: /* opset 11+: min and max are inputs */
        in[1] = ex_scalar(E, ex_str(E, "%s.min", L->name), a->clip_lo);
        in[2] = ex_scalar(E, ex_str(E, "%s.max", L->name), a->clip_hi);
        nin = 3;
        op = "Clip";
        break;
    case NET_NEAREST: { /* Resize, nearest, to sizes: input floor(o H / h) (PyTorch's "nearest") */
        int64_t s4[4] = {1, L->out.c, a->up_h, a->up_w};
        in[1] = "", in[2] = "";
        in[3] = ex_ints(E, ex_str(E, "%s.sizes", L->name), 4, s4);
        nin = 4;
        at[na++] = a_str(E, "mode", "nearest");
        at[na++] = a_str(E, "coordinate_transformation_mode", "asymmetric");
        at[na++] = a_str(E, "nearest_mode", "floor");
        op = "Resize";
        break;
    }
    case NET_BILINEAR: { /* Resize, linear, to sizes [1, C, h, w] */
        int64_t s4[4] = {1, L->out.c, a->up_h, a->up_w};
        in[1] = "", in[2] = "";
        in[3] = ex_ints(E, ex_str(E, "%s.sizes", L->name), 4, s4);
        nin = 4;
        at[na++] = a_str(E, "mode", "linear");
        at[na++] = a_str(E, "coordinate_transformation_mode",
                         a->align_corners ? "align_corners" : "half_pixel");
        op = "Resize";
        break;
    }
    case NET_PAD: { /* opset 11+: pads an input, [x1_begin, x2_begin, ..., x1_end, ...] */
        int64_t p8[8] = {0, 0, a->pt, a->pl, 0, 0, a->pb, a->pr};
        in[1] = ex_ints(E, ex_str(E, "%s.pads", L->name), 8, p8);
        nin = 2;
        if (a->pad_reflect || a->pad_edge) at[na++] = a_str(E, "mode", a->pad_reflect ? "reflect" : "edge");
        if (a->pad_value != 0) { /* constant_value, a float scalar */
            in[2] = ex_scalar(E, ex_str(E, "%s.value", L->name), a->pad_value);
            nin = 3;
        }
        op = "Pad";
        break;
    }
    case NET_UPSAMPLE: { /* Resize, nearest: output index i reads input floor(i / scale) */
        float *f = ex_alloc(E, 4 * sizeof *f);
        if (!f) return -1;
        f[0] = f[1] = 1, f[2] = (float)a->up_h, f[3] = (float)a->up_w;
        ox_le_bytes((uint8_t *)f, 4, 4);
        int64_t d1 = 4;
        in[1] = "";
        in[2] = ex_init(E, ex_str(E, "%s.scales", L->name), 1, &d1, f, NULL);
        nin = 3;
        at[na++] = a_str(E, "mode", "nearest");
        at[na++] = a_str(E, "coordinate_transformation_mode", "asymmetric");
        at[na++] = a_str(E, "nearest_mode", "floor");
        op = "Resize";
        break;
    }
    default: /* a plain unary kind: the first ONNX operator its kinds.def row lists */
        op = plain_unary_op(E, L->kind);
        if (!op) return -1;
        break;
    }
    rank[i] = r;
    if (!node || !ex_node(E, op, node, L->name, nin, in, na, at)) return -1;
    if (i != n->n - 1)
        ex_push(E, (void ***)&E->vis, &E->nvis, &E->capv, ex_vi(E, L->name, r, L->out));
    return E->failed ? -1 : 0;
}

int onnx_node_names(const net *n, void (*fn)(void *ctx, int layer, const char *name), void *ctx)
{
    /* The exporter itself, without weight data: every node it writes for a
     * layer (glue, the steps of a decomposed LayerNorm, GELU or HardSwish,
     * the layer's own) is listed, so AutoDiCE's mapping.json names exactly
     * the nodes of the exported file. */
    ex E;
    memset(&E, 0, sizeof E);
    E.names_only = 1;
    int *rank = calloc((size_t)n->n + 1, sizeof *rank);
    int rc = -1;
    if (!rank || ox_smap_init(&E.names, 4 * n->n + 16)) goto out;
    ex_name(&E, n->input_name);
    for (int i = 0; i < n->n; i++) {
        size_t first = E.nnodes;
        if (export_layer(&E, n, i, NULL, rank)) goto out;
        for (size_t k = first; k < E.nnodes; k++) fn(ctx, i, E.nodes[k]->name);
    }
    rc = 0;
out:
    ex_free(&E);
    free(rank);
    return rc;
}

int onnx_export(const net *n, const char *path, char *err)
{
    return onnx_export_flags(n, path, 0, err);
}

int onnx_export_flags(const net *n, const char *path, unsigned flags, char *err)
{
    char werr[BASE_ERRLEN];
    float *w = n->weights_path ? weights_load(n, werr) : weights_generate_all(n, WEIGHTS_SEED_DEFAULT);
    if (!w) {
        if (n->weights_path) ox_seterr(err, "%s: %s", path, werr);
        else ox_seterr(err, "%s: out of memory for the weights", path);
        return -1;
    }
    ox_le_bytes((uint8_t *)w, (size_t)weights_total(n), 4);
    ex E;
    memset(&E, 0, sizeof E);
    int *rank = calloc((size_t)n->n + 1, sizeof *rank);
    int rc = -1;
    FILE *f = NULL;
    if (!rank || ox_smap_init(&E.names, 4 * n->n + 16)) {
        ox_seterr(err, "%s: out of memory", path);
        goto out;
    }
    ex_name(&E, n->input_name);
    int64_t off = 0;
    for (int i = 0; i < n->n; i++) {
        int rc = export_layer(&E, n, i, w + off, rank);
        if (rc) {
            if (rc == -2)
                ox_seterr(err, "%s: cannot export layer %s: GELU's tanh form has no operator below "
                          "opset 20 that dse imports back", path, n->layers[i].name);
            else if (E.clash)
                ox_seterr(err, "%s: cannot export layer %s: tensor name %s is used twice", path,
                       n->layers[i].name, E.clash);
            else
                ox_seterr(err, "%s: cannot export layer %s: %s", path, n->layers[i].name,
                       E.failed ? "out of memory" : "unknown layer kind");
            goto out;
        }
        off += n->layers[i].weights;
    }
    int last = n->n - 1;
    Onnx__ValueInfoProto *gin = ex_vi(&E, n->input_name, 4, n->input);
    Onnx__ValueInfoProto *gout = ex_vi(&E, n->layers[last].name, rank[last], n->layers[last].out);
    Onnx__GraphProto g;
    Onnx__ModelProto m;
    Onnx__OperatorSetIdProto op;
    Onnx__OperatorSetIdProto *ops[1] = {&op};
    if (E.failed || !gin || !gout) {
        ox_seterr(err, "%s: out of memory", path);
        goto out;
    }
    onnx__graph_proto__init(&g);
    g.name = n->name;
    g.n_node = E.nnodes, g.node = E.nodes;
    g.n_initializer = E.ninits, g.initializer = E.inits;
    /* Graph inputs: the network input, then (ONNX_EXPORT_INIT_INPUTS) every
     * initializer again, in initializer order. */
    size_t nin = 1 + ((flags & ONNX_EXPORT_INIT_INPUTS) ? E.ninits : 0);
    Onnx__ValueInfoProto **gins = ex_alloc(&E, nin * sizeof *gins);
    if (gins) {
        gins[0] = gin;
        for (size_t k = 1; k < nin; k++) gins[k] = ex_vi_init(&E, E.inits[k - 1]);
    }
    if (E.failed) {
        ox_seterr(err, "%s: out of memory", path);
        goto out;
    }
    g.n_input = nin, g.input = gins;
    g.n_output = 1, g.output = &gout;
    g.n_value_info = E.nvis, g.value_info = E.vis;
    onnx__operator_set_id_proto__init(&op);
    op.domain = (char *)"";
    op.has_version = 1, op.version = EXPORT_OPSET;
    onnx__model_proto__init(&m);
    m.has_ir_version = 1, m.ir_version = EXPORT_IR;
    m.producer_name = (char *)"dse";
    m.producer_version = (char *)"1";
    m.doc_string = n->weights_path ? (char *)"weights: the network's own"
                                   : (char *)"weights: generated (dse weights_generate, seed 1)";
    m.n_opset_import = 1, m.opset_import = ops;
    m.graph = &g;
    base_outset *os = base_outset_new();
    if (!os || !(f = base_outset_add(os, path, err))) {
        if (!os) ox_seterr(err, "%s: out of memory", path);
        base_outset_free(os);
        goto out;
    }
    file_buffer fb = {{fb_append}, f, 0};
    protobuf_c_message_pack_to_buffer(&m.base, &fb.base);
    rc = base_outset_commit(os, err); /* every write checked, then renamed into place */
    base_outset_free(os);
out:
    ex_free(&E);
    free(rank);
    free(w);
    return rc;
}

/* onnx.c -- ONNX import and export over the protobuf-c bindings generated
 * at build time from Debian's onnx.proto (model/CMakeLists.txt).
 *
 * Import maps each ONNX node to one net layer (Identity, Constant and the
 * exporter's own "dse:implicit" reshapes are aliases, a MatMul's constant
 * bias Add folds into its FC), then lets net_finalize() infer every shape:
 * the importer never computes a shape itself, it only checks afterwards
 * that the file's weights, value_info and output shapes agree with the
 * inferred ones.  Export is the inverse, opset 13.  docs/onnx.md lists
 * the mapping, the limits and the error messages.
 *
 * Invariant: an import either returns a finalised net whose weights (in
 * the layout of weights.h) were all found, typed float32 and sized exactly
 * as the net needs, or NULL with one line naming the file, the node and
 * the reason; nothing is written on failure.
 */
#include "onnx.h"
#include "weights.h"

#include "onnx.pb-c.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OPSET_MIN 1
#define OPSET_MAX 21        /* operators used here have kept their meaning */
#define ATTR_MAX (1 << 20)  /* kernel, stride, pad, dilation, group bound */
#define IMPLICIT "dse:implicit" /* doc_string of the exporter's glue nodes */
#define EXPORT_OPSET 13
#define EXPORT_IR 7         /* IR version 7 goes with opset 13 */

static void seterr(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void seterr(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, NET_ERRLEN, fmt, ap);
    va_end(ap);
    /* Names in a file are arbitrary bytes: keep the message one line. */
    for (char *p = err; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
}

static int printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) return 0;
    return 1;
}

static char *xstrdup(const char *s)
{
    size_t k = strlen(s) + 1;
    char *d = malloc(k);
    if (d) memcpy(d, s, k);
    return d;
}

/* Whole file into memory; NULL with err. */
static uint8_t *read_all(const char *path, size_t *len, char *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        seterr(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            uint8_t *b = realloc(buf, cap);
            if (!b) {
                seterr(err, "%s: out of memory", path);
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = b;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        seterr(err, "%s: read error", path);
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* The shortest decimal that rounds to f, as a double: ONNX stores float32
 * attributes, the net doubles; 1e-4 must come back as 1e-4. */
static double float_dec(float f)
{
    char buf[40];
    if (!isfinite(f)) return f;
    for (int p = 1; p <= 9; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, (double)f);
        double d = strtod(buf, NULL);
        if ((float)d == f) return d;
    }
    return f;
}

/* ---- a string -> int map (open addressing), for tensor and layer names ---- */

typedef struct {
    const char **key;
    int *val;
    int cap, count;
} smap;

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static int smap_init(smap *m, int n)
{
    m->cap = 16;
    while (m->cap < 2 * n + 16) m->cap *= 2;
    m->key = calloc((size_t)m->cap, sizeof *m->key);
    m->val = calloc((size_t)m->cap, sizeof *m->val);
    m->count = 0;
    return m->key && m->val ? 0 : -1;
}

static void smap_free(smap *m)
{
    free(m->key);
    free(m->val);
}

static int smap_get(const smap *m, const char *k)
{
    for (uint32_t i = hash(k) & (uint32_t)(m->cap - 1);; i = (i + 1) & (uint32_t)(m->cap - 1)) {
        if (!m->key[i]) return -1;
        if (!strcmp(m->key[i], k)) return m->val[i];
    }
}

/* Insert k (not copied: must outlive the map) unless present; the value. */
static int smap_put(smap *m, const char *k, int v)
{
    if (2 * (m->count + 1) > m->cap) {
        smap bigger;
        bigger.cap = m->cap * 2;
        bigger.key = calloc((size_t)bigger.cap, sizeof *bigger.key);
        bigger.val = calloc((size_t)bigger.cap, sizeof *bigger.val);
        bigger.count = 0;
        if (!bigger.key || !bigger.val) {
            smap_free(&bigger);
            return -2;
        }
        for (int i = 0; i < m->cap; i++)
            if (m->key[i]) smap_put(&bigger, m->key[i], m->val[i]);
        smap_free(m);
        *m = bigger;
    }
    uint32_t i = hash(k) & (uint32_t)(m->cap - 1);
    for (; m->key[i]; i = (i + 1) & (uint32_t)(m->cap - 1))
        if (!strcmp(m->key[i], k)) return m->val[i];
    m->key[i] = k;
    m->val[i] = v;
    m->count++;
    return v;
}

/* ---- tensor data: float_data / int64_data / raw_data / external files ---- */

typedef struct {
    const char *dir; /* folder for external data, NULL to refuse it */
    char *err;
    char ctx[400];   /* "file: node X (Op): input W" prefix for messages */
} dctx;

static int dfail(dctx *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int dfail(dctx *d, const char *fmt, ...)
{
    char msg[NET_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    seterr(d->err, "%s: %s", d->ctx, msg);
    return -1;
}

static int64_t tp_numel(dctx *d, const Onnx__TensorProto *t)
{
    int64_t n = 1;
    if (t->n_dims > 8) return dfail(d, "tensor of rank %zu (at most 8)", t->n_dims);
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || t->dims[i] > INT32_MAX)
            return dfail(d, "tensor dimension %lld out of range", (long long)t->dims[i]);
        n *= t->dims[i];
        if (n > INT32_MAX) return dfail(d, "tensor has more than 2^31-1 elements");
    }
    return n;
}

static const char *dtype_name(int t)
{
    static const char *names[] = {"undefined", "float32", "uint8", "int8", "uint16", "int16",
                                  "int32", "int64", "string", "bool", "float16", "float64",
                                  "uint32", "uint64", "complex64", "complex128", "bfloat16"};
    return t >= 0 && t < (int)(sizeof names / sizeof names[0]) ? names[t] : "unknown";
}

static const char *ext_key(const Onnx__TensorProto *t, const char *k)
{
    for (size_t i = 0; i < t->n_external_data; i++)
        if (t->external_data[i]->key && !strcmp(t->external_data[i]->key, k))
            return t->external_data[i]->value;
    return NULL;
}

/* Read `bytes` bytes of an external-data tensor (dst NULL: only check that
 * the file holds them). */
static int ext_read(dctx *d, const Onnx__TensorProto *t, size_t bytes, uint8_t *dst)
{
    const char *loc = ext_key(t, "location"), *off = ext_key(t, "offset"),
               *len = ext_key(t, "length");
    if (!loc || !loc[0]) return dfail(d, "external data without a location");
    if (!d->dir) return dfail(d, "external data %s cannot be read from memory", loc);
    if (loc[0] == '/' || strstr(loc, ".."))
        return dfail(d, "external data location %s leaves the model's folder", loc);
    char *end;
    long long o = 0, l = (long long)bytes;
    if (off && ((o = strtoll(off, &end, 10)) < 0 || *end || !off[0]))
        return dfail(d, "external data offset \"%s\" is not a byte offset", off);
    if (len && ((l = strtoll(len, &end, 10)) < 0 || *end || !len[0]))
        return dfail(d, "external data length \"%s\" is not a byte count", len);
    if ((size_t)l != bytes)
        return dfail(d, "external data length %lld, the tensor needs %zu bytes", l, bytes);
    size_t pl = strlen(d->dir) + strlen(loc) + 2;
    char *p = malloc(pl);
    if (!p) return dfail(d, "out of memory");
    snprintf(p, pl, "%s/%s", d->dir, loc);
    struct stat st;
    FILE *f = NULL;
    int rc = -1;
    if (stat(p, &st) != 0) {
        dfail(d, "external data file %s is missing", p);
    } else if ((long long)st.st_size < o + l) {
        dfail(d, "external data file %s has %lld bytes, the tensor needs %lld at offset %lld",
              p, (long long)st.st_size, l, o);
    } else if (!dst) {
        rc = 0;
    } else if (!(f = fopen(p, "rb")) || fseek(f, (long)o, SEEK_SET) != 0 ||
               fread(dst, 1, bytes, f) != bytes) {
        dfail(d, "cannot read external data file %s", p);
    } else {
        rc = 0;
    }
    if (f) fclose(f);
    free(p);
    return rc;
}

static int host_le(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

static void le_bytes(uint8_t *p, size_t count, size_t width)
{
    if (host_le()) return;
    for (size_t i = 0; i < count; i++)
        for (size_t a = 0, b = width - 1; a < b; a++, b--) {
            uint8_t t = p[i * width + a];
            p[i * width + a] = p[i * width + b];
            p[i * width + b] = t;
        }
}

/* Float32 values of t into dst (count = numel; dst NULL: validate only). */
static int tp_floats(dctx *d, const Onnx__TensorProto *t, float *dst, int64_t *count)
{
    int64_t n = tp_numel(d, t);
    if (n < 0) return -1;
    *count = n;
    if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return dfail(d, "data type %s, dse needs float32", dtype_name(t->data_type));
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        if (ext_read(d, t, (size_t)n * 4, (uint8_t *)dst)) return -1;
        if (dst) le_bytes((uint8_t *)dst, (size_t)n, 4);
        return 0;
    }
    if (t->has_raw_data) {
        if (t->raw_data.len != (size_t)n * 4)
            return dfail(d, "raw data has %zu bytes, %lld float32 values need %lld", t->raw_data.len,
                         (long long)n, (long long)n * 4);
        if (dst && n) {
            memcpy(dst, t->raw_data.data, (size_t)n * 4);
            le_bytes((uint8_t *)dst, (size_t)n, 4);
        }
        return 0;
    }
    if (t->n_float_data != (size_t)n)
        return dfail(d, "has %zu values, its shape needs %lld", t->n_float_data, (long long)n);
    if (dst && n) memcpy(dst, t->float_data, (size_t)n * sizeof *dst);
    return 0;
}

/* Integer values (int64 or int32) of a small tensor, at most max of them. */
static int tp_ints(dctx *d, const Onnx__TensorProto *t, int64_t *dst, int max, int *count)
{
    int64_t n = tp_numel(d, t);
    if (n < 0) return -1;
    if (n > max) return dfail(d, "has %lld values, at most %d expected", (long long)n, max);
    *count = (int)n;
    int ty = t->data_type;
    size_t w = ty == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ? 8
               : ty == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? 4 : 0;
    if (!w) return dfail(d, "data type %s, an integer tensor was expected", dtype_name(ty));
    uint8_t raw[64];
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        if (ext_read(d, t, (size_t)n * w, raw)) return -1;
    } else if (t->has_raw_data) {
        if (t->raw_data.len != (size_t)n * w)
            return dfail(d, "raw data has %zu bytes, %lld values need %zu", t->raw_data.len,
                         (long long)n, (size_t)n * w);
        memcpy(raw, t->raw_data.data, (size_t)n * w);
    } else {
        size_t have = w == 8 ? t->n_int64_data : t->n_int32_data;
        if (have != (size_t)n)
            return dfail(d, "has %zu values, its shape needs %lld", have, (long long)n);
        for (int i = 0; i < n; i++) dst[i] = w == 8 ? t->int64_data[i] : t->int32_data[i];
        return 0;
    }
    le_bytes(raw, (size_t)n, w);
    for (int i = 0; i < n; i++) {
        if (w == 8) {
            int64_t v;
            memcpy(&v, raw + 8 * i, 8);
            dst[i] = v;
        } else {
            int32_t v;
            memcpy(&v, raw + 4 * i, 4);
            dst[i] = v;
        }
    }
    return 0;
}

/* ---- import ---- */

enum { T_UNDEF, T_ACT, T_CONST };

typedef struct {
    const char *name;
    int kind;
    int spec;      /* T_ACT: producing spec, -1 for the network input */
    int rank;      /* T_ACT: 2 or 4 */
    int flat;      /* T_ACT: the exporter's implicit flatten (only Gemm may read it) */
    int pad[4];    /* T_ACT: zero padding (top, left, bottom, right) still to apply:
                    * a Pad node, folded into the Conv or AveragePool reading it */
    const Onnx__TensorProto *tp; /* T_CONST */
    int nuse;      /* node inputs reading it, plus one if it is the graph output */
} tens;

typedef struct {
    char *name;          /* unique layer name */
    const Onnx__NodeProto *node;
    int node_idx;
    net_kind kind;
    net_attr a;
    int nin;
    int *in;             /* tensor indices */
    float *w;            /* weights in weights.h layout (NULL if not kept) */
    int64_t nw;          /* their count, kept or not */
    int autopad;         /* 1 SAME_UPPER, 2 SAME_LOWER: pads from the input size */
    int64_t flat_n;      /* Reshape: required features (>0), -2: = input channels */
    int flat_softmax;    /* Softmax < opset 13 on 4-D: ours only when H = W = 1 */
    int bias_open;       /* FC without bias that a following Add may give one */
    int out;             /* tensor holding the layer's result */
} spec;

typedef struct {
    const char *what;    /* file name for messages */
    char *err;
    dctx d;
    int keep;            /* keep weight values (else only validate them) */
    Onnx__GraphProto *g;
    int64_t opset;
    tens *t;
    int nt, capt;
    smap tmap;           /* tensor name -> index */
    spec *s;
    int ns, caps;
    smap explicit_names; /* node names given in the file */
    smap lnames;         /* layer names handed out */
    char **owned_names;  /* generated layer names (freed with the specs) */
    Onnx__TensorProto **owned; /* tensors made from Constant attributes */
    int nowned;
    int input;           /* tensor index of the network input */
    const Onnx__NodeProto *nd; /* node being imported */
    int nd_idx;
} imp;

static int nfail(imp *I, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int nfail(imp *I, const char *fmt, ...)
{
    char msg[NET_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const Onnx__NodeProto *nd = I->nd;
    if (nd && nd->name && nd->name[0])
        seterr(I->err, "%s: node %.100s (%.40s): %s", I->what, nd->name, nd->op_type, msg);
    else if (nd)
        seterr(I->err, "%s: node #%d (%.40s): %s", I->what, I->nd_idx, nd->op_type, msg);
    else
        seterr(I->err, "%s: %s", I->what, msg);
    return -1;
}

/* Prefix the data-decoding context with the current node and a role. */
static dctx *dc(imp *I, const char *role, const char *tname)
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

static int tensor_slot(imp *I, const char *name)
{
    int k = smap_get(&I->tmap, name);
    if (k >= 0) return k;
    if (I->nt == I->capt) {
        int cap = I->capt ? 2 * I->capt : 64;
        tens *t = realloc(I->t, (size_t)cap * sizeof *t);
        if (!t) return -1;
        I->t = t;
        I->capt = cap;
    }
    memset(&I->t[I->nt], 0, sizeof I->t[0]);
    I->t[I->nt].name = name;
    I->t[I->nt].spec = -1;
    if (smap_put(&I->tmap, name, I->nt) < 0) return -1;
    return I->nt++;
}

/* ---- attributes ---- */

static const Onnx__AttributeProto *att(const Onnx__NodeProto *nd, const char *name)
{
    for (size_t i = 0; i < nd->n_attribute; i++)
        if (nd->attribute[i]->name && !strcmp(nd->attribute[i]->name, name))
            return nd->attribute[i];
    return NULL;
}

/* Every attribute must be one this importer understands: an unknown one
 * could change the meaning of the node. */
static int check_attrs(imp *I, const char *allowed)
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
        if (!ok) return nfail(I, "unsupported attribute %.100s", a);
        if (nd->attribute[i]->ref_attr_name && nd->attribute[i]->ref_attr_name[0])
            return nfail(I, "attribute %.100s refers to a function attribute", a);
    }
    return 0;
}

static int att_int(imp *I, const char *name, int64_t def, int64_t *out)
{
    const Onnx__AttributeProto *a = att(I->nd, name);
    *out = def;
    if (!a) return 0;
    if (!(a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) && !a->has_i)
        return nfail(I, "attribute %s must be an integer", name);
    *out = a->i;
    return 0;
}

static int att_float(imp *I, const char *name, double def, double *out)
{
    const Onnx__AttributeProto *a = att(I->nd, name);
    *out = def;
    if (!a) return 0;
    if (!(a->has_type && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) && !a->has_f)
        return nfail(I, "attribute %s must be a float", name);
    *out = float_dec(a->f);
    return 0;
}

/* An ints attribute of exactly `want` values, each in [lo, ATTR_MAX];
 * absent: *present = 0. */
static int att_ints(imp *I, const char *name, int want, int lo, int *v, int *present)
{
    const Onnx__AttributeProto *a = att(I->nd, name);
    *present = 0;
    if (!a) return 0;
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
        return nfail(I, "attribute %s must be a list of integers", name);
    if ((int)a->n_ints != want)
        return nfail(I, "attribute %s has %zu values, a 2-D (NCHW) operator needs %d", name,
                     a->n_ints, want);
    for (int i = 0; i < want; i++) {
        if (a->ints[i] < lo || a->ints[i] > ATTR_MAX)
            return nfail(I, "attribute %s value %lld out of range [%d, %d]", name,
                         (long long)a->ints[i], lo, ATTR_MAX);
        v[i] = (int)a->ints[i];
    }
    *present = 1;
    return 0;
}

/* A string attribute equal to one of `choices` (space separated); index. */
static int att_choice(imp *I, const char *name, const char *choices, int *idx)
{
    const Onnx__AttributeProto *a = att(I->nd, name);
    *idx = 0;
    if (!a) return 0;
    if (!a->has_s) return nfail(I, "attribute %s must be a string", name);
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
    return nfail(I, "attribute %s = \"%.*s\" is not one of: %s", name,
                 (int)(a->s.len > 40 ? 40 : a->s.len), (const char *)a->s.data, choices);
}

/* ---- node inputs ---- */

static const char *in_name(imp *I, size_t k)
{
    return k < I->nd->n_input && I->nd->input[k] ? I->nd->input[k] : "";
}

static int in_count(imp *I)
{
    int n = (int)I->nd->n_input;
    while (n > 0 && !in_name(I, (size_t)n - 1)[0]) n--;
    return n;
}

/* Input k as an activation; its tensor index. */
static int in_act(imp *I, size_t k)
{
    const char *name = in_name(I, k);
    if (!name[0]) return nfail(I, "input %zu is missing", k);
    int t = smap_get(&I->tmap, name);
    if (t < 0 || I->t[t].kind == T_UNDEF)
        return nfail(I, "input %.100s is not produced by an earlier node, an initializer or the "
                     "graph input", name);
    if (I->t[t].kind == T_CONST)
        return nfail(I, "input %.100s is a constant; dse needs an activation here", name);
    if (I->t[t].flat && strcmp(I->nd->op_type, "Gemm") && strcmp(I->nd->op_type, "MatMul"))
        return nfail(I, "input %.100s is a " IMPLICIT " flatten, which only a Gemm may read", name);
    const int *p = I->t[t].pad;
    if ((p[0] | p[1] | p[2] | p[3]) && strcmp(I->nd->op_type, "Conv") &&
        strcmp(I->nd->op_type, "AveragePool"))
        return nfail(I, "input %.100s is zero-padded by a Pad node; dse folds such padding only "
                     "into a Conv or AveragePool", name);
    return t;
}

/* Input k as a constant (initializer or Constant output); NULL if absent
 * and optional (*bad = 0), or on error (*bad = 1). */
static const Onnx__TensorProto *in_const(imp *I, size_t k, int required, int *bad)
{
    const char *name = in_name(I, k);
    *bad = 0;
    if (!name[0]) {
        if (required) *bad = 1, nfail(I, "input %zu is missing", k);
        return NULL;
    }
    int t = smap_get(&I->tmap, name);
    if (t < 0 || I->t[t].kind == T_UNDEF) {
        *bad = 1;
        nfail(I, "input %.100s is not produced by an earlier node, an initializer or the "
              "graph input", name);
        return NULL;
    }
    if (I->t[t].kind != T_CONST) {
        *bad = 1;
        nfail(I, "input %.100s must be a constant (an initializer), not a computed tensor", name);
        return NULL;
    }
    return I->t[t].tp;
}

/* Floats of a constant into a fresh array (NULL when values are not kept
 * or on error: check *bad). */
static float *const_floats(imp *I, const Onnx__TensorProto *t, const char *role, size_t k,
                           int keep, int64_t *count, int *bad)
{
    dctx *d = dc(I, role, in_name(I, k));
    *bad = 0;
    if (tp_floats(d, t, NULL, count)) {
        *bad = 1;
        return NULL;
    }
    if (!keep) return NULL;
    float *v = malloc(*count ? (size_t)*count * sizeof *v : 1);
    if (!v) {
        *bad = 1;
        nfail(I, "out of memory");
        return NULL;
    }
    if (tp_floats(d, t, v, count)) {
        free(v);
        *bad = 1;
        return NULL;
    }
    return v;
}

/* A scalar float constant (one element, any rank). */
static int const_scalar(imp *I, size_t k, const char *role, int *present, double *v)
{
    int bad;
    const Onnx__TensorProto *t = in_const(I, k, 0, &bad);
    *present = 0;
    if (bad) return -1;
    if (!t) return 0;
    int64_t n;
    float *f = const_floats(I, t, role, k, 1, &n, &bad);
    if (bad) return -1;
    if (n != 1) {
        free(f);
        return nfail(I, "%s %.100s has %lld values, a scalar was expected", role, in_name(I, k),
                     (long long)n);
    }
    *v = float_dec(f[0]);
    free(f);
    *present = 1;
    return 0;
}

/* Extra outputs (MaxPool indices, Dropout mask, BN training statistics)
 * are fine as long as nothing reads them. */
static int extra_outputs_unused(imp *I)
{
    for (size_t k = 1; k < I->nd->n_output; k++) {
        const char *o = I->nd->output[k];
        if (!o || !o[0]) continue;
        int t = smap_get(&I->tmap, o);
        if (t >= 0 && I->t[t].nuse > 0)
            return nfail(I, "output %zu (%.100s) is used; dse supports only the first output", k, o);
    }
    return 0;
}

/* Define node output 0 as tensor `src`'s alias (no layer). */
static int alias(imp *I, int src, int rank, int flat)
{
    if (I->nd->n_output < 1 || !I->nd->output[0] || !I->nd->output[0][0])
        return nfail(I, "has no output");
    int t = smap_get(&I->tmap, I->nd->output[0]);
    if (I->t[t].kind != T_UNDEF)
        return nfail(I, "output %.100s is produced twice", I->nd->output[0]);
    tens *o = &I->t[t], *s = &I->t[src];
    o->kind = s->kind;
    o->spec = s->spec;
    o->rank = rank ? rank : s->rank;
    o->flat = flat;
    memcpy(o->pad, s->pad, sizeof o->pad);
    o->tp = s->tp;
    if (o->kind == T_ACT && o->spec >= 0 && I->s[o->spec].out == src) I->s[o->spec].out = t;
    return 0;
}

/* A unique layer name for the current node: its own name, else Op_index;
 * a clash (duplicate, the input's name, another node's name) gets _2, _3... */
static char *layer_name(imp *I)
{
    const Onnx__NodeProto *nd = I->nd;
    char base[160], cand[200];
    int own = nd->name && nd->name[0];
    if (own && !printable(nd->name)) {
        nfail(I, "node name contains control characters");
        return NULL;
    }
    if (own) snprintf(base, sizeof base, "%.150s", nd->name);
    else snprintf(base, sizeof base, "%.60s_%d", nd->op_type, I->nd_idx);
    snprintf(cand, sizeof cand, "%s", base);
    const char *inname = I->t[I->input].name;
    for (int k = 2;; k++) {
        int clash = smap_get(&I->lnames, cand) >= 0 || !strcmp(cand, inname) ||
                    ((!own || k > 2) && smap_get(&I->explicit_names, cand) >= 0);
        if (!clash) break;
        snprintf(cand, sizeof cand, "%s_%d", base, k);
    }
    char *name = xstrdup(cand);
    if (!name || smap_put(&I->lnames, name, I->ns) < 0) {
        free(name);
        nfail(I, "out of memory");
        return NULL;
    }
    return name;
}

/* A new layer for the current node, reading activations ins[0..nin). */
static spec *new_spec(imp *I, net_kind kind, const net_attr *a, int nin, const int *ins, int rank)
{
    const Onnx__NodeProto *nd = I->nd;
    if (nd->n_output < 1 || !nd->output[0] || !nd->output[0][0]) {
        nfail(I, "has no output");
        return NULL;
    }
    int t = smap_get(&I->tmap, nd->output[0]);
    if (I->t[t].kind != T_UNDEF) {
        nfail(I, "output %.100s is produced twice", nd->output[0]);
        return NULL;
    }
    if (extra_outputs_unused(I)) return NULL;
    if (I->ns == I->caps) {
        int cap = I->caps ? 2 * I->caps : 64;
        spec *s = realloc(I->s, (size_t)cap * sizeof *s);
        if (!s) {
            nfail(I, "out of memory");
            return NULL;
        }
        I->s = s;
        I->caps = cap;
    }
    spec *s = &I->s[I->ns];
    memset(s, 0, sizeof *s);
    s->name = layer_name(I); /* sets err on failure */
    if (!s->name) return NULL;
    s->in = malloc((size_t)nin * sizeof *s->in);
    if (!s->in) {
        free(s->name);
        nfail(I, "out of memory");
        return NULL;
    }
    memcpy(s->in, ins, (size_t)nin * sizeof *ins);
    s->nin = nin;
    s->node = nd;
    s->node_idx = I->nd_idx;
    s->kind = kind;
    s->a = a ? *a : net_attr_default(kind);
    s->out = t;
    I->t[t].kind = T_ACT;
    I->t[t].spec = I->ns;
    I->t[t].rank = rank;
    I->ns++;
    return s;
}

/* Append `extra` floats to s->w (kept) and the count. */
static int spec_append(imp *I, spec *s, const float *v, int64_t count)
{
    if (I->keep) {
        float *w = realloc(s->w, (size_t)(s->nw + count) * sizeof *w + 1);
        if (!w) return nfail(I, "out of memory");
        s->w = w;
        if (count) memcpy(w + s->nw, v, (size_t)count * sizeof *w);
    }
    s->nw += count;
    return 0;
}

static int act_rank(imp *I, int t, int want, const char *what)
{
    if (I->t[t].rank != want)
        return nfail(I, "%s %.100s is %d-D; dse needs %d-D here", what, I->t[t].name,
                     I->t[t].rank, want);
    return 0;
}

/* kernel_shape / strides / pads / dilations / auto_pad of Conv and pools. */
static int window_attrs(imp *I, net_attr *a, int *autopad, int pool)
{
    int k[2], s[2], p[4], d[2], has_k, has_s, has_p, has_d, ap;
    if (att_ints(I, "kernel_shape", 2, 1, k, &has_k) || att_ints(I, "strides", 2, 1, s, &has_s) ||
        att_ints(I, "pads", 4, 0, p, &has_p) || att_ints(I, "dilations", 2, 1, d, &has_d) ||
        att_choice(I, "auto_pad", "NOTSET SAME_UPPER SAME_LOWER VALID", &ap))
        return -1;
    if (pool && !has_k) return nfail(I, "kernel_shape is required");
    if (has_k) a->kh = k[0], a->kw = k[1];
    a->sh = has_s ? s[0] : 1, a->sw = has_s ? s[1] : 1;
    if (has_d) {
        if (pool && (d[0] != 1 || d[1] != 1))
            return nfail(I, "dilations %dx%d: dse pools have no dilation", d[0], d[1]);
        a->dh = d[0], a->dw = d[1];
    }
    if (ap && has_p) return nfail(I, "auto_pad and explicit pads together");
    if (has_p) a->pt = p[0], a->pl = p[1], a->pb = p[2], a->pr = p[3];
    *autopad = ap == 1 || ap == 2 ? ap : 0;
    return 0;
}

/* SAME padding before the input size is known: a total of eff-1 gives
 * ceil(in/stride) outputs, SAME's count, whatever the input size, so the
 * first net_finalize infers the right shapes; fix_autopad then splits the
 * exact total once the input sizes are known. */
static void same_guess(net_attr *a, int autopad)
{
    int eh = a->dh * (a->kh - 1), ew = a->dw * (a->kw - 1);
    a->pt = autopad == 1 ? eh / 2 : eh - eh / 2, a->pb = eh - a->pt;
    a->pl = autopad == 1 ? ew / 2 : ew - ew / 2, a->pr = ew - a->pl;
}

/* Add the zero padding of a Pad node feeding this Conv / AveragePool. */
static int fold_pad(imp *I, int x, net_attr *a, int autopad)
{
    const int *p = I->t[x].pad;
    if (!(p[0] | p[1] | p[2] | p[3])) return 0;
    if (autopad) return nfail(I, "a Pad before a node with auto_pad is unsupported");
    int64_t v[4] = {(int64_t)a->pt + p[0], (int64_t)a->pl + p[1], (int64_t)a->pb + p[2],
                    (int64_t)a->pr + p[3]};
    for (int k = 0; k < 4; k++)
        if (v[k] > ATTR_MAX) return nfail(I, "padding %lld out of range", (long long)v[k]);
    a->pt = (int)v[0], a->pl = (int)v[1], a->pb = (int)v[2], a->pr = (int)v[3];
    return 0;
}

/* Pad with zeros on H and W only: no layer, the padding travels with the
 * tensor to the Conv or AveragePool that reads it (fold_pad). */
static int op_pad(imp *I)
{
    int old = I->opset < 11;
    if (check_attrs(I, old ? "mode pads value" : "mode")) return -1;
    int x = in_act(I, 0), mode, n = 0;
    if (x < 0) return -1;
    if (att_choice(I, "mode", "constant reflect edge wrap", &mode)) return -1;
    if (mode) return nfail(I, "only constant (zero) padding is supported");
    int64_t v[8];
    double value = 0;
    if (old) {
        const Onnx__AttributeProto *a = att(I->nd, "pads");
        if (!a || a->n_ints > 8) return nfail(I, "attribute pads is required (at most 8 values)");
        n = (int)a->n_ints;
        for (int k = 0; k < n; k++) v[k] = a->ints[k];
        if (att_float(I, "value", 0, &value)) return -1;
    } else {
        int bad, has;
        const Onnx__TensorProto *pt = in_const(I, 1, 1, &bad);
        if (bad || tp_ints(dc(I, "pads", in_name(I, 1)), pt, v, 8, &n)) return -1;
        if (const_scalar(I, 2, "constant_value", &has, &value)) return -1;
        if (in_count(I) > 3) return nfail(I, "the axes input is unsupported");
    }
    int r = I->t[x].rank;
    if (n != 2 * r) return nfail(I, "%d pads for a %d-D tensor", n, r);
    if (value != 0) return nfail(I, "padding with %g: dse pads with zeros only", value);
    for (int k = 0; k < n; k++)
        if (v[k] < 0 || v[k] > ATTR_MAX) return nfail(I, "pad %lld out of range (no cropping)",
                                                      (long long)v[k]);
    int spatial = r == 4 ? (int)(v[2] | v[3] | v[6] | v[7]) : 0;
    if (v[0] || v[1] || v[r] || v[r + 1])
        return nfail(I, "padding the batch or channel axis is unsupported");
    if (alias(I, x, 0, 0)) return -1;
    if (spatial) {
        int *p = I->t[smap_get(&I->tmap, I->nd->output[0])].pad;
        int64_t sum[4] = {p[0] + v[2], p[1] + v[3], p[2] + v[6], p[3] + v[7]};
        for (int k = 0; k < 4; k++)
            if (sum[k] > ATTR_MAX) return nfail(I, "padding out of range");
        p[0] = (int)sum[0], p[1] = (int)sum[1], p[2] = (int)sum[2], p[3] = (int)sum[3];
    }
    return 0;
}

static int op_conv(imp *I)
{
    if (check_attrs(I, "auto_pad dilations group kernel_shape pads strides")) return -1;
    int x = in_act(I, 0), bad;
    if (x < 0 || act_rank(I, x, 4, "input")) return -1;
    const Onnx__TensorProto *W = in_const(I, 1, 1, &bad), *B;
    if (bad) return -1;
    B = in_const(I, 2, 0, &bad);
    if (bad) return -1;
    if (W->n_dims != 4)
        return nfail(I, "weight %.100s is %zu-D; a 2-D convolution has a 4-D weight", in_name(I, 1),
                     W->n_dims);
    net_attr a = net_attr_default(NET_CONV);
    int64_t g;
    int autopad;
    if (window_attrs(I, &a, &autopad, 0) || att_int(I, "group", 1, &g)) return -1;
    if (g < 1 || g > ATTR_MAX) return nfail(I, "group %lld out of range", (long long)g);
    a.groups = (int)g;
    for (int i = 0; i < 4; i++)
        if (W->dims[i] < 1 || W->dims[i] > INT32_MAX)
            return nfail(I, "weight %.100s has dimension %lld", in_name(I, 1), (long long)W->dims[i]);
    if (att(I->nd, "kernel_shape") && (a.kh != W->dims[2] || a.kw != W->dims[3]))
        return nfail(I, "kernel_shape %dx%d but weight %.100s is %lldx%lld", a.kh, a.kw,
                     in_name(I, 1), (long long)W->dims[2], (long long)W->dims[3]);
    a.kh = (int)W->dims[2], a.kw = (int)W->dims[3];
    a.out_c = (int)W->dims[0];
    if (autopad) same_guess(&a, autopad);
    if (fold_pad(I, x, &a, autopad)) return -1;
    a.bias = B != NULL;
    spec *s = new_spec(I, NET_CONV, &a, 1, &x, 4);
    if (!s) return -1;
    s->autopad = autopad;
    int64_t n;
    float *w = const_floats(I, W, "weight", 1, I->keep, &n, &bad);
    if (bad || spec_append(I, s, w, n)) return free(w), -1;
    free(w);
    if (B) {
        w = const_floats(I, B, "bias", 2, I->keep, &n, &bad);
        if (bad) return -1;
        if (B->n_dims != 1 || n != a.out_c) {
            free(w);
            return nfail(I, "bias %.100s has %lld values, the weight has %d output channels",
                         in_name(I, 2), (long long)n, a.out_c);
        }
        if (spec_append(I, s, w, n)) return free(w), -1;
        free(w);
    }
    return 0;
}

static int op_pool(imp *I, net_kind kind)
{
    int mp = kind == NET_MAXPOOL;
    if (check_attrs(I, mp ? "auto_pad ceil_mode dilations kernel_shape pads storage_order strides"
                          : "auto_pad ceil_mode count_include_pad kernel_shape pads strides"))
        return -1;
    int x = in_act(I, 0);
    if (x < 0 || act_rank(I, x, 4, "input")) return -1;
    net_attr a = net_attr_default(kind);
    int autopad;
    int64_t ceil, cip = 0;
    if (window_attrs(I, &a, &autopad, 1) || att_int(I, "ceil_mode", 0, &ceil) ||
        (!mp && att_int(I, "count_include_pad", 0, &cip)))
        return -1;
    if ((ceil != 0 && ceil != 1) || (cip != 0 && cip != 1))
        return nfail(I, "ceil_mode and count_include_pad must be 0 or 1");
    if (autopad) same_guess(&a, autopad);
    a.ceil_mode = autopad ? 0 : (int)ceil;
    a.count_include_pad = (int)cip;
    const int *zp = I->t[x].pad;
    if (zp[0] | zp[1] | zp[2] | zp[3]) {
        /* Zeros padded in, then averaged over the whole window: that is
         * count_include_pad, provided the pool adds no padding of its own
         * that it would not count. */
        if (ceil || (!cip && (a.pt | a.pl | a.pb | a.pr)))
            return nfail(I, "a Pad before an AveragePool with ceil_mode or uncounted pads of "
                         "its own is unsupported");
        a.count_include_pad = 1;
    }
    if (fold_pad(I, x, &a, autopad)) return -1;
    spec *s = new_spec(I, kind, &a, 1, &x, 4);
    if (!s) return -1;
    s->autopad = autopad;
    return 0;
}

static int op_simple(imp *I, net_kind kind, const char *attrs, int rank4)
{
    if (check_attrs(I, attrs)) return -1;
    int x = in_act(I, 0);
    if (x < 0 || (rank4 && act_rank(I, x, 4, "input"))) return -1;
    return new_spec(I, kind, NULL, 1, &x, I->t[x].rank) ? 0 : -1;
}

static int op_lrn(imp *I)
{
    if (check_attrs(I, "alpha beta bias size")) return -1;
    int x = in_act(I, 0);
    if (x < 0 || act_rank(I, x, 4, "input")) return -1;
    net_attr a = net_attr_default(NET_LRN);
    int64_t size;
    if (!att(I->nd, "size")) return nfail(I, "attribute size is required");
    if (att_int(I, "size", 0, &size) || att_float(I, "alpha", 1e-4, &a.lrn_alpha) ||
        att_float(I, "beta", 0.75, &a.lrn_beta) || att_float(I, "bias", 1.0, &a.lrn_k))
        return -1;
    if (size < 1 || size > ATTR_MAX) return nfail(I, "size %lld out of range", (long long)size);
    a.lrn_size = (int)size;
    return new_spec(I, NET_LRN, &a, 1, &x, 4) ? 0 : -1;
}

static int op_bn(imp *I)
{
    if (check_attrs(I, "epsilon momentum training_mode spatial is_test consumed_inputs")) return -1;
    int64_t tm, spatial;
    net_attr a = net_attr_default(NET_BN);
    if (att_int(I, "training_mode", 0, &tm) || att_int(I, "spatial", 1, &spatial) ||
        att_float(I, "epsilon", 1e-5, &a.bn_eps))
        return -1;
    if (tm) return nfail(I, "training_mode=1: dse imports inference graphs only");
    if (spatial != 1) return nfail(I, "spatial=0 (per-activation statistics) is unsupported");
    if (!(a.bn_eps >= 0)) return nfail(I, "epsilon must be non-negative");
    int x = in_act(I, 0);
    if (x < 0) return -1;
    static const char *role[4] = {"scale", "shift", "mean", "variance"};
    const Onnx__TensorProto *p[4];
    for (int k = 0; k < 4; k++) {
        int bad;
        p[k] = in_const(I, (size_t)k + 1, 1, &bad);
        if (bad) return -1;
    }
    spec *s = new_spec(I, NET_BN, &a, 1, &x, I->t[x].rank);
    if (!s) return -1;
    int64_t c0 = -1;
    for (int k = 0; k < 4; k++) {
        int64_t n;
        int bad;
        float *v = const_floats(I, p[k], role[k], (size_t)k + 1, I->keep, &n, &bad);
        if (bad) return -1;
        if (p[k]->n_dims != 1 || (c0 >= 0 && n != c0)) {
            free(v);
            return nfail(I, "%s %.100s must be a vector of one value per channel", role[k],
                         in_name(I, (size_t)k + 1));
        }
        c0 = n;
        if (spec_append(I, s, v, n)) return free(v), -1;
        free(v);
    }
    return 0;
}

static int op_clip(imp *I)
{
    int x = in_act(I, 0);
    if (x < 0) return -1;
    double lo = -INFINITY, hi = INFINITY;
    if (I->opset < 11) {
        if (check_attrs(I, "min max consumed_inputs") || att_float(I, "min", -FLT_MAX, &lo) ||
            att_float(I, "max", FLT_MAX, &hi))
            return -1;
        if (in_count(I) > 1) return nfail(I, "min/max inputs need opset 11 or later");
    } else {
        int has;
        if (check_attrs(I, "") || const_scalar(I, 1, "min", &has, &lo)) return -1;
        if (!has) lo = -INFINITY;
        if (const_scalar(I, 2, "max", &has, &hi)) return -1;
        if (!has) hi = INFINITY;
    }
    if (lo != 0)
        return nfail(I, "Clip with min %g: dse supports only min 0 (a ReLU, e.g. ReLU6)", lo);
    if (!(hi > 0)) return nfail(I, "Clip with max %g: dse needs max > 0", hi);
    net_attr a = net_attr_default(NET_RELU);
    a.relu_max = hi >= FLT_MAX ? 0 : hi;
    return new_spec(I, NET_RELU, &a, 1, &x, I->t[x].rank) ? 0 : -1;
}

static int op_dropout(imp *I)
{
    if (check_attrs(I, "ratio seed is_test consumed_inputs")) return -1;
    int x = in_act(I, 0), bad;
    if (x < 0) return -1;
    in_const(I, 1, 0, &bad); /* ratio: irrelevant at inference */
    if (bad) return -1;
    const Onnx__TensorProto *tm = in_const(I, 2, 0, &bad);
    if (bad) return -1;
    if (tm) {
        /* training_mode is a bool scalar: stored as int32 data or one raw byte. */
        int on = (tm->n_int32_data > 0 && tm->int32_data[0]) ||
                 (tm->has_raw_data && tm->raw_data.len > 0 && tm->raw_data.data[0]);
        if (on) return nfail(I, "training_mode=true: dse imports inference graphs only");
    }
    return new_spec(I, NET_DROPOUT, NULL, 1, &x, I->t[x].rank) ? 0 : -1;
}

static int op_softmax(imp *I)
{
    if (check_attrs(I, "axis")) return -1;
    int x = in_act(I, 0);
    if (x < 0) return -1;
    int r = I->t[x].rank;
    int64_t axis;
    if (att_int(I, "axis", I->opset < 13 ? 1 : -1, &axis)) return -1;
    if (axis < 0) axis += r;
    if (axis != 1)
        return nfail(I, "Softmax over axis %lld of a %d-D tensor; dse's is over the channels "
                     "(axis 1)", (long long)axis, r);
    spec *s = new_spec(I, NET_SOFTMAX, NULL, 1, &x, r);
    if (!s) return -1;
    s->flat_softmax = I->opset < 13 && r == 4;
    return 0;
}

static int op_flatten(imp *I)
{
    if (check_attrs(I, "axis")) return -1;
    int x = in_act(I, 0);
    if (x < 0) return -1;
    int r = I->t[x].rank;
    int64_t axis;
    if (att_int(I, "axis", 1, &axis)) return -1;
    if (axis < 0) axis += r;
    /* With batch 1, axis 0 gives [1, N] too. */
    if (axis != 1 && axis != 0)
        return nfail(I, "Flatten at axis %lld of a %d-D tensor; dse flattens at axis 1",
                     (long long)axis, r);
    if (I->nd->doc_string && !strcmp(I->nd->doc_string, IMPLICIT)) return alias(I, x, 2, r == 4);
    return new_spec(I, NET_FLATTEN, NULL, 1, &x, 2) ? 0 : -1;
}

static int op_reshape(imp *I)
{
    if (check_attrs(I, "allowzero")) return -1;
    int x = in_act(I, 0), bad, n = 0;
    if (x < 0) return -1;
    const Onnx__TensorProto *sh = in_const(I, 1, 1, &bad);
    if (bad) return -1;
    int64_t v[8], allowzero;
    if (att_int(I, "allowzero", 0, &allowzero) || tp_ints(dc(I, "shape", in_name(I, 1)), sh, v, 8, &n))
        return -1;
    int r = I->t[x].rank;
    if (I->nd->doc_string && !strcmp(I->nd->doc_string, IMPLICIT)) {
        /* The exporter's [1, C, 1, 1] view of a [1, C] tensor. */
        if (r != 2 || n != 4 || v[0] != 1 || v[2] != 1 || v[3] != 1 || v[1] < 1)
            return nfail(I, IMPLICIT " Reshape must view [1, C] as [1, C, 1, 1]");
        return alias(I, x, 4, 0);
    }
    if (n != 2)
        return nfail(I, "Reshape to %d-D: dse supports only flattening Reshapes to [1, N]", n);
    if (allowzero && (v[0] == 0 || v[1] == 0))
        return nfail(I, "Reshape with allowzero to an empty tensor");
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
        return nfail(I, "Reshape to [%lld, %lld]: dse supports only [1, -1] or [1, N] (batch 1)",
                     (long long)v[0], (long long)v[1]);
    spec *s = new_spec(I, NET_FLATTEN, NULL, 1, &x, 2);
    if (!s) return -1;
    s->flat_n = flat;
    return 0;
}

/* An FC's bias: N values, or one broadcast, times beta; appended in one
 * go (per-value appends would copy the weights N times). */
static int append_bias(imp *I, spec *s, const float *c, int64_t n, int64_t N, double beta)
{
    if (!I->keep) {
        s->nw += N;
        return 0;
    }
    float *b = malloc((size_t)N * sizeof *b + 1);
    if (!b) return nfail(I, "out of memory");
    for (int64_t o = 0; o < N; o++) b[o] = (float)(beta * c[n == 1 ? 0 : o]);
    int rc = spec_append(I, s, b, N);
    free(b);
    return rc;
}

/* Gemm and MatMul with a constant right operand: an FC layer. */
static int op_fc(imp *I, int gemm)
{
    if (check_attrs(I, gemm ? "alpha beta transA transB broadcast" : "")) return -1;
    int x = in_act(I, 0), bad;
    if (x < 0 || act_rank(I, x, 2, "input")) return -1;
    const Onnx__TensorProto *B = in_const(I, 1, 1, &bad), *C = NULL;
    if (bad) return -1;
    int64_t ta = 0, tb = 0;
    double alpha = 1, beta = 1;
    if (gemm) {
        if (att_int(I, "transA", 0, &ta) || att_int(I, "transB", 0, &tb) ||
            att_float(I, "alpha", 1, &alpha) || att_float(I, "beta", 1, &beta))
            return -1;
        C = in_const(I, 2, 0, &bad);
        if (bad) return -1;
        if (beta == 0) C = NULL;
    }
    if (B->n_dims != 2)
        return nfail(I, "weight %.100s is %zu-D; dse needs a 2-D weight", in_name(I, 1), B->n_dims);
    if (B->dims[0] < 1 || B->dims[1] < 1 || B->dims[0] > INT32_MAX || B->dims[1] > INT32_MAX)
        return nfail(I, "weight %.100s has an empty or huge dimension", in_name(I, 1));
    int64_t K = tb ? B->dims[1] : B->dims[0], N = tb ? B->dims[0] : B->dims[1];
    if (ta && K != 1)
        return nfail(I, "transA=1 (a transposed input) is unsupported; dse's input is one row");
    net_attr a = net_attr_default(NET_FC);
    a.out_c = (int)N;
    a.bias = C != NULL;
    spec *s = new_spec(I, NET_FC, &a, 1, &x, 2);
    if (!s) return -1;
    s->bias_open = C == NULL;
    int64_t n;
    float *w = const_floats(I, B, "weight", 1, I->keep, &n, &bad);
    if (bad) return -1;
    if (I->keep) {
        /* Ours is W[out][in]: B as given when transB=1, transposed otherwise. */
        float *t = malloc((size_t)n * sizeof *t + 1);
        if (!t) return free(w), nfail(I, "out of memory");
        for (int64_t o = 0; o < N; o++)
            for (int64_t k = 0; k < K; k++)
                t[o * K + k] = (float)(alpha * (tb ? w[o * K + k] : w[k * N + o]));
        free(w);
        w = t;
    }
    if (spec_append(I, s, w, n)) return free(w), -1;
    free(w);
    if (C) {
        w = const_floats(I, C, "bias", 2, 1, &n, &bad);
        if (bad) return -1;
        if (n != N && n != 1) {
            free(w);
            return nfail(I, "bias %.100s has %lld values; dse needs %lld (one per output) or 1",
                         in_name(I, 2), (long long)n, (long long)N);
        }
        int rc = append_bias(I, s, w, n, N, beta);
        free(w);
        if (rc) return -1;
    }
    return 0;
}

/* Add and Sum: of activations, a NET_ADD; Add of an FC without bias and a
 * constant, that FC's bias (MatMul + Add is how frameworks spell Gemm). */
static int op_add(imp *I, int sum)
{
    if (check_attrs(I, sum ? "consumed_inputs" : "broadcast axis consumed_inputs")) return -1;
    int nin = in_count(I);
    if (nin < 2) return nfail(I, "needs at least two inputs");
    if (!sum && nin != 2) return nfail(I, "Add takes two inputs");
    int cst = -1;
    for (int k = 0; k < nin; k++) {
        int t = smap_get(&I->tmap, in_name(I, (size_t)k));
        if (t >= 0 && I->t[t].kind == T_CONST) cst = k;
    }
    if (cst >= 0) {
        int other = smap_get(&I->tmap, in_name(I, (size_t)(1 - cst)));
        if (sum || other < 0 || I->t[other].kind != T_ACT || I->t[other].spec < 0)
            return nfail(I, "adding constant %.100s is only supported as the bias of a MatMul",
                         in_name(I, (size_t)cst));
        spec *s = &I->s[I->t[other].spec];
        if (s->kind != NET_FC || !s->bias_open || s->out != other || I->t[other].nuse != 1)
            return nfail(I, "adding constant %.100s is only supported as the bias of a MatMul "
                         "whose result nothing else reads", in_name(I, (size_t)cst));
        int bad;
        int64_t n;
        const Onnx__TensorProto *C = in_const(I, (size_t)cst, 1, &bad);
        if (bad) return -1;
        float *w = const_floats(I, C, "bias", (size_t)cst, 1, &n, &bad);
        if (bad) return -1;
        int64_t N = s->a.out_c;
        if (n != N && n != 1) {
            free(w);
            return nfail(I, "bias %.100s has %lld values; dse needs %lld (one per output) or 1",
                         in_name(I, (size_t)cst), (long long)n, (long long)N);
        }
        int rc = append_bias(I, s, w, n, N, 1);
        free(w);
        if (rc) return -1;
        s->a.bias = 1;
        s->bias_open = 0;
        if (extra_outputs_unused(I)) return -1;
        return alias(I, other, 2, 0);
    }
    int ins[64];
    if (nin > 64) return nfail(I, "more than 64 inputs");
    for (int k = 0; k < nin; k++) {
        if ((ins[k] = in_act(I, (size_t)k)) < 0) return -1;
        if (I->t[ins[k]].rank != I->t[ins[0]].rank)
            return nfail(I, "adds a %d-D and a %d-D tensor; dse adds tensors of one shape",
                         I->t[ins[0]].rank, I->t[ins[k]].rank);
    }
    return new_spec(I, NET_ADD, NULL, nin, ins, I->t[ins[0]].rank) ? 0 : -1;
}

static int op_concat(imp *I)
{
    if (check_attrs(I, "axis")) return -1;
    int nin = in_count(I), ins[1024];
    int64_t axis;
    if (nin < 1) return nfail(I, "has no inputs");
    if (nin > 1024) return nfail(I, "more than 1024 inputs");
    if (!att(I->nd, "axis")) return nfail(I, "attribute axis is required");
    if (att_int(I, "axis", 1, &axis)) return -1;
    for (int k = 0; k < nin; k++) {
        if ((ins[k] = in_act(I, (size_t)k)) < 0) return -1;
        if (I->t[ins[k]].rank != I->t[ins[0]].rank)
            return nfail(I, "concatenates a %d-D and a %d-D tensor", I->t[ins[0]].rank,
                         I->t[ins[k]].rank);
    }
    int r = I->t[ins[0]].rank;
    if (axis < 0) axis += r;
    if (axis != 1)
        return nfail(I, "Concat along axis %lld; dse concatenates channels (axis 1)",
                     (long long)axis);
    if (nin == 1) return alias(I, ins[0], 0, 0);
    return new_spec(I, NET_CONCAT, NULL, nin, ins, r) ? 0 : -1;
}

static int own_tensor(imp *I, Onnx__TensorProto *t)
{
    Onnx__TensorProto **o = realloc(I->owned, (size_t)(I->nowned + 1) * sizeof *o);
    if (!o) {
        free(t);
        return nfail(I, "out of memory");
    }
    I->owned = o;
    I->owned[I->nowned++] = t;
    return 0;
}

static int op_constant(imp *I)
{
    const Onnx__NodeProto *nd = I->nd;
    if (check_attrs(I, "value value_float value_floats value_int value_ints")) return -1;
    if (nd->n_attribute != 1) return nfail(I, "needs exactly one value attribute");
    const Onnx__AttributeProto *a = nd->attribute[0];
    const Onnx__TensorProto *tp = NULL;
    if (!strcmp(a->name, "value")) {
        if (!a->t) return nfail(I, "attribute value has no tensor");
        tp = a->t;
    } else {
        /* Wrap the attribute's values (not copied: the model outlives this). */
        Onnx__TensorProto *t = malloc(sizeof *t);
        if (!t) return nfail(I, "out of memory");
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
    if (nd->n_output < 1 || !nd->output[0] || !nd->output[0][0]) return nfail(I, "has no output");
    int t = smap_get(&I->tmap, nd->output[0]);
    if (I->t[t].kind != T_UNDEF) return nfail(I, "output %.100s is produced twice", nd->output[0]);
    I->t[t].kind = T_CONST;
    I->t[t].tp = tp;
    return 0;
}

static int op_identity(imp *I)
{
    if (check_attrs(I, "")) return -1;
    const char *name = in_name(I, 0);
    int t = smap_get(&I->tmap, name);
    if (!name[0] || t < 0 || I->t[t].kind == T_UNDEF)
        return nfail(I, "input %.100s is not produced by an earlier node, an initializer or the "
                     "graph input", name);
    return alias(I, t, 0, I->t[t].flat);
}

static int import_node(imp *I)
{
    const Onnx__NodeProto *nd = I->nd;
    const char *op = nd->op_type ? nd->op_type : "";
    if (nd->domain && nd->domain[0] && strcmp(nd->domain, "ai.onnx"))
        return nfail(I, "operator %.60s of domain %.60s is unsupported", op, nd->domain);
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
    return nfail(I, "unsupported operator %.60s", op);
}

/* The network input: the one graph input without an initializer. */
static int graph_input(imp *I, net_shape *shape)
{
    const Onnx__GraphProto *g = I->g;
    const Onnx__ValueInfoProto *in = NULL;
    int count = 0;
    for (size_t i = 0; i < g->n_input; i++) {
        const char *nm = g->input[i]->name ? g->input[i]->name : "";
        int t = smap_get(&I->tmap, nm);
        if (t >= 0 && I->t[t].kind == T_CONST) continue; /* IR < 4 lists initializers */
        if (!in) in = g->input[i];
        count++;
    }
    if (count == 0) return nfail(I, "the graph has no input (every input is an initializer)");
    if (count > 1)
        return nfail(I, "the graph has %d inputs (first %.100s); dse needs exactly one", count,
                     in->name);
    const char *nm = in->name ? in->name : "";
    if (!nm[0]) return nfail(I, "the graph input has no name");
    if (!printable(nm)) return nfail(I, "the graph input's name contains control characters");
    const Onnx__TypeProto *ty = in->type;
    if (!ty || ty->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !ty->tensor_type)
        return nfail(I, "input %.100s is not a tensor", nm);
    const Onnx__TypeProto__Tensor *tt = ty->tensor_type;
    if (tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return nfail(I, "input %.100s has data type %s; dse needs float32", nm,
                     dtype_name(tt->elem_type));
    if (!tt->shape) return nfail(I, "input %.100s has no shape (dynamic shape)", nm);
    int r = (int)tt->shape->n_dim;
    if (r != 2 && r != 4)
        return nfail(I, "input %.100s is %d-D; dse needs [1, C, H, W] or [1, N]", nm, r);
    int64_t d[4];
    for (int k = 0; k < r; k++) {
        const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[k];
        if (dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            return nfail(I, "input %.100s has a dynamic shape: dimension %d is %s%.60s%s", nm, k,
                         dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                             ? "symbolic \"" : "unknown",
                         dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                             ? dm->dim_param : "",
                         dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                             ? "\"" : "");
        d[k] = dm->dim_value;
        if (d[k] < 1 || d[k] > INT32_MAX)
            return nfail(I, "input %.100s has dimension %d = %lld", nm, k, (long long)d[k]);
    }
    if (d[0] != 1)
        return nfail(I, "input %.100s has batch %lld; dse needs batch 1", nm, (long long)d[0]);
    *shape = r == 4 ? (net_shape){(int)d[1], (int)d[2], (int)d[3]} : (net_shape){(int)d[1], 1, 1};
    int t = tensor_slot(I, nm);
    if (t < 0) return nfail(I, "out of memory");
    I->t[t].kind = T_ACT;
    I->t[t].spec = -1;
    I->t[t].rank = r;
    I->input = t;
    return 0;
}

static const char *layer_of(imp *I, int t)
{
    return I->t[t].spec < 0 ? I->t[I->input].name : I->s[I->t[t].spec].name;
}

/* Build and finalise the net from the specs. */
static net *build(imp *I, const char *name, net_shape in)
{
    net *n = net_new(name, I->t[I->input].name, in);
    if (!n) return nfail(I, "out of memory"), NULL;
    for (int i = 0; i < I->ns; i++) {
        const spec *s = &I->s[i];
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
static void fix_autopad(imp *I, const net *n)
{
    for (int i = 0; i < I->ns; i++) {
        spec *s = &I->s[i];
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
static int cross_check(imp *I, const net *n, const Onnx__ValueInfoProto *vi, int is_output)
{
    const char *nm = vi->name ? vi->name : "";
    int t = smap_get(&I->tmap, nm);
    if (t < 0 || I->t[t].kind != T_ACT) return 0;
    const int *zp = I->t[t].pad;
    if (zp[0] | zp[1] | zp[2] | zp[3]) return 0; /* a Pad's output has no layer of its size */
    const Onnx__TypeProto *ty = vi->type;
    if (!ty || ty->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !ty->tensor_type) return 0;
    const Onnx__TypeProto__Tensor *tt = ty->tensor_type;
    if (tt->has_elem_type && tt->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT &&
        tt->elem_type != 0)
        return nfail(I, "%s %.100s has data type %s; dse computes float32",
                     is_output ? "graph output" : "value_info", nm, dtype_name(tt->elem_type));
    if (!tt->shape) return 0;
    int li = I->t[t].spec < 0 ? -1 : net_find(n, I->s[I->t[t].spec].name);
    net_shape s = li < 0 ? n->input : n->layers[li].out;
    int r = I->t[t].rank;
    int64_t want[4] = {1, s.c, s.h, s.w};
    if (r == 2) want[1] = net_shape_numel(s);
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
    if (r == 4) snprintf(exp, sizeof exp, "1x%dx%dx%d", s.c, s.h, s.w);
    else snprintf(exp, sizeof exp, "1x%lld", (long long)net_shape_numel(s));
    I->nd = NULL;
    return nfail(I, "%s %.100s has shape %s but the layers give %s", is_output ? "graph output"
                 : "value_info", nm, got, exp);
}

/* The checks that need inferred shapes, then the weights in layer order. */
static int after_finalize(imp *I, const net *n, int out_t, float **wout)
{
    const Onnx__GraphProto *g = I->g;
    int osp = I->t[out_t].spec;
    if (net_find(n, I->s[osp].name) != n->n - 1) {
        I->nd = NULL;
        return nfail(I, "graph output %.100s is not the network's last layer (%s)",
                     I->t[out_t].name, n->layers[n->n - 1].name);
    }
    for (int i = 0; i < I->ns; i++) {
        const spec *s = &I->s[i];
        int li = net_find(n, s->name);
        const net_layer *L = &n->layers[li];
        net_shape x = net_in_shape(n, li, 0);
        I->nd = s->node;
        I->nd_idx = s->node_idx;
        if (s->flat_n > 0 && L->out.c != s->flat_n)
            return nfail(I, "Reshape to [1, %lld] of a tensor of %d elements", (long long)s->flat_n,
                         L->out.c);
        if (s->flat_n == -2 && (x.h != 1 || x.w != 1))
            return nfail(I, "Reshape to [1, 0] keeps dimension 1 (%d) of a %dx%dx%d tensor: "
                         "not a flatten", x.c, x.c, x.h, x.w);
        if (s->flat_softmax && (x.h != 1 || x.w != 1))
            return nfail(I, "Softmax (opset < 13) over C*H*W of a %dx%dx%d tensor; dse's is over "
                         "the channels", x.c, x.h, x.w);
        if (s->nw != L->weights) {
            if (L->kind == NET_CONV)
                return nfail(I, "weight %.100s fits %lld input channels, the input has %d (groups %d)",
                             s->node->input[1],
                             (long long)(s->nw - (s->a.bias ? s->a.out_c : 0)) /
                                 ((int64_t)s->a.out_c * s->a.kh * s->a.kw) * s->a.groups,
                             x.c, s->a.groups);
            if (L->kind == NET_FC)
                return nfail(I, "weight %.100s has %lld inputs per output, the input has %lld",
                             s->node->input[1], (long long)(s->nw - (s->a.bias ? s->a.out_c : 0)) /
                                                    s->a.out_c, (long long)net_shape_numel(x));
            return nfail(I, "has %lld weight values, %s %dx%dx%d needs %lld", (long long)s->nw,
                         net_kind_name(L->kind), x.c, x.h, x.w, (long long)L->weights);
        }
    }
    I->nd = NULL;
    for (size_t i = 0; i < g->n_value_info; i++)
        if (cross_check(I, n, g->value_info[i], 0)) return -1;
    if (cross_check(I, n, g->output[0], 1)) return -1;
    if (!wout) return 0;
    int64_t total = weights_total(n), off = 0;
    float *w = malloc(total ? (size_t)total * sizeof *w : 1);
    if (!w) return nfail(I, "out of memory for %lld weights", (long long)total);
    for (int li = 0; li < n->n; li++) {
        const spec *s = &I->s[smap_get(&I->lnames, n->layers[li].name)];
        if (s->nw) memcpy(w + off, s->w, (size_t)s->nw * sizeof *w);
        off += s->nw;
    }
    *wout = w;
    return 0;
}

static void imp_free(imp *I)
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
    smap_free(&I->tmap);
    smap_free(&I->explicit_names);
    smap_free(&I->lnames);
}

/* The whole import.  dir: folder for external data (NULL: refuse it);
 * wout: receives the weights (NULL: validate only). */
static net *import(const uint8_t *buf, size_t len, const char *what, const char *dir,
                   float **wout, char *err)
{
    imp I;
    memset(&I, 0, sizeof I);
    I.what = what;
    I.err = err;
    I.d.dir = dir;
    I.d.err = err;
    I.keep = wout != NULL;
    I.input = -1;
    net *n = NULL;
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
    if (!m) {
        seterr(err, "%s: not an ONNX model (protobuf parse failed: truncated or corrupt file)",
               what);
        return NULL;
    }
    Onnx__GraphProto *g = m->graph;
    if (!g || g->n_node == 0) {
        seterr(err, "%s: not an ONNX model (no graph or an empty one)", what);
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
    if (I.opset < OPSET_MIN || I.opset > OPSET_MAX) {
        if (I.opset < 0) seterr(err, "%s: not an ONNX model (no opset for the ONNX domain)", what);
        else seterr(err, "%s: opset %lld is outside what dse imports (%d to %d)", what,
                    (long long)I.opset, OPSET_MIN, OPSET_MAX);
        goto out;
    }
    if (g->n_output != 1) {
        seterr(err, "%s: the graph has %zu outputs; dse needs exactly one", what, g->n_output);
        goto out;
    }
    if (g->n_sparse_initializer) {
        seterr(err, "%s: sparse initializer %.100s is unsupported", what,
               g->sparse_initializer[0]->values && g->sparse_initializer[0]->values->name
                   ? g->sparse_initializer[0]->values->name : "?");
        goto out;
    }
    size_t nnames = g->n_initializer + g->n_input + 1;
    for (size_t i = 0; i < g->n_node; i++) nnames += g->node[i]->n_output;
    if (smap_init(&I.tmap, (int)(nnames < 1u << 28 ? nnames : 1u << 28)) ||
        smap_init(&I.explicit_names, (int)(g->n_node < 1u << 28 ? g->n_node : 1u << 28)) ||
        smap_init(&I.lnames, (int)(g->n_node < 1u << 28 ? g->n_node : 1u << 28))) {
        seterr(err, "%s: out of memory", what);
        goto out;
    }
    /* Tensors: initializers, node outputs (defined when their node is
     * imported), and every name read, counting its readers. */
    for (size_t i = 0; i < g->n_initializer; i++) {
        const char *nm = g->initializer[i]->name ? g->initializer[i]->name : "";
        int t = tensor_slot(&I, nm);
        if (t < 0) goto oom;
        if (I.t[t].kind == T_CONST) {
            seterr(err, "%s: initializer %.100s is given twice", what, nm);
            goto out;
        }
        I.t[t].kind = T_CONST;
        I.t[t].tp = g->initializer[i];
    }
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        if (!nd->op_type) {
            seterr(err, "%s: node #%zu has no operator type", what, i);
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
        if (nd->name && nd->name[0] && smap_put(&I.explicit_names, nd->name, (int)i) < -1) goto oom;
    }
    const char *oname = g->output[0]->name ? g->output[0]->name : "";
    int out_t = tensor_slot(&I, oname);
    if (out_t < 0) goto oom;
    I.t[out_t].nuse++;
    net_shape in;
    if (graph_input(&I, &in)) goto out;
    for (size_t i = 0; i < g->n_node; i++) {
        I.nd = g->node[i];
        I.nd_idx = (int)i;
        if (import_node(&I)) goto out;
    }
    I.nd = NULL;
    if (I.t[out_t].kind != T_ACT || I.t[out_t].spec < 0) {
        seterr(err, "%s: graph output %.100s is %s", what, oname,
               I.t[out_t].kind == T_UNDEF ? "not produced by any node"
               : I.t[out_t].kind == T_CONST ? "a constant" : "the graph input itself (no layers)");
        goto out;
    }
    int autopad = 0;
    for (int i = 0; i < I.ns; i++) autopad |= I.s[i].autopad;
    const char *gname = g->name && g->name[0] ? g->name : "onnx";
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
    seterr(err, "%s: out of memory", what);
out:
    imp_free(&I);
    onnx__model_proto__free_unpacked(m, NULL);
    return n;
}

/* Folder of path ("." if none); caller frees. */
static char *dir_of(const char *path)
{
    const char *s = strrchr(path, '/');
    if (!s) return xstrdup(".");
    if (s == path) return xstrdup("/");
    char *d = malloc((size_t)(s - path) + 1);
    if (!d) return NULL;
    memcpy(d, path, (size_t)(s - path));
    d[s - path] = 0;
    return d;
}

static net *import_file(const char *path, float **wout, char *err)
{
    size_t len = 0;
    uint8_t *buf = read_all(path, &len, err);
    if (!buf) return NULL;
    char *dir = dir_of(path);
    net *n = dir ? import(buf, len, path, dir, wout, err) : NULL;
    if (!dir) seterr(err, "%s: out of memory", path);
    free(dir);
    free(buf);
    return n;
}

net *onnx_import(const char *path, const char *weights_out, char *err)
{
    float *w = NULL;
    net *n = import_file(path, weights_out ? &w : NULL, err);
    if (!n) return NULL;
    if (weights_out && weights_save(n, w, weights_out, err)) {
        free(w);
        net_free(n);
        return NULL;
    }
    free(w);
    n->weights_path = xstrdup(weights_out ? weights_out : path);
    if (!n->weights_path) {
        seterr(err, "%s: out of memory", path);
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
    net *m = import_file(path, &w, err);
    if (!m) return NULL;
    int same = m->n == n->n;
    for (int i = 0; same && i < n->n; i++)
        same = m->layers[i].kind == n->layers[i].kind &&
               m->layers[i].weights == n->layers[i].weights &&
               !strcmp(m->layers[i].name, n->layers[i].name);
    if (!same) {
        seterr(err, "%s: its layers no longer match network %s", path, n->name);
        free(w);
        w = NULL;
    }
    net_free(m);
    return w;
}

float *onnx_read_tensor(const char *pb_path, int64_t dims[8], int *ndims, char *err)
{
    size_t len = 0;
    uint8_t *buf = read_all(pb_path, &len, err);
    if (!buf) return NULL;
    Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, len, buf);
    free(buf);
    if (!t) {
        seterr(err, "%s: not a serialised ONNX TensorProto", pb_path);
        return NULL;
    }
    dctx d;
    char *dir = dir_of(pb_path);
    d.dir = dir;
    d.err = err;
    snprintf(d.ctx, sizeof d.ctx, "%s: tensor %.100s", pb_path, t->name ? t->name : "");
    float *v = NULL;
    int64_t n = 0;
    if (!dir) {
        seterr(err, "%s: out of memory", pb_path);
    } else if (tp_floats(&d, t, NULL, &n) == 0) {
        if (!(v = malloc(n ? (size_t)n * sizeof *v : 1))) {
            seterr(err, "%s: out of memory", pb_path);
        } else if (tp_floats(&d, t, v, &n) != 0) {
            free(v);
            v = NULL;
        } else {
            *ndims = (int)t->n_dims;
            for (size_t k = 0; k < t->n_dims; k++) dims[k] = t->dims[k];
        }
    }
    free(dir);
    onnx__tensor_proto__free_unpacked(t, NULL);
    return v;
}

/* ---- export ---- */

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
    smap names; /* every tensor name, to refuse clashes */
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

static char *ex_str(ex *E, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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
    if (smap_get(&E->names, name) >= 0 || smap_put(&E->names, name, 1) < 0) {
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
    } else {
        t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
        uint8_t *raw = ex_alloc(E, (size_t)n * 8);
        if (!raw) return NULL;
        memcpy(raw, idata, (size_t)n * 8);
        le_bytes(raw, (size_t)n, 8);
        t->raw_data.len = (size_t)n * 8;
        t->raw_data.data = raw;
    }
    ex_push(E, (void ***)&E->inits, &E->ninits, &E->capi, t);
    return t->name;
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

/* The rank the exported tensor of layer i (or the input, i < 0) has. */
static int rank_of(const int *rank, int i) { return i < 0 ? 4 : rank[i]; }

static int spatial_kind(net_kind k)
{
    return k == NET_CONV || k == NET_MAXPOOL || k == NET_AVGPOOL || k == NET_GAP ||
           k == NET_LRN || k == NET_BN;
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

static int export_layer(ex *E, const net *n, int i, const float *w, int *rank)
{
    const net_layer *L = &n->layers[i];
    const net_attr *a = &L->a;
    const char *in[1024];
    Onnx__AttributeProto *at[8];
    int na = 0, r = 4;
    for (int k = 0; k < L->nin; k++) {
        int p = L->in[k];
        in[k] = p == NET_INPUT ? n->input_name : n->layers[p].name;
    }
    /* Glue, marked IMPLICIT so that import makes no layer of it: a 4-D view
     * of [1, C] for operators that need NCHW, a Flatten before a Gemm. */
    int need4 = spatial_kind(L->kind);
    if (L->kind == NET_ADD || L->kind == NET_CONCAT)
        for (int k = 0; k < L->nin; k++) need4 |= rank_of(rank, L->in[k]) == 4;
    for (int k = 0; k < L->nin; k++) {
        int pr = rank_of(rank, L->in[k]);
        net_shape ps = net_in_shape(n, i, k);
        Onnx__NodeProto *g = NULL;
        if (need4 && pr == 2) {
            int64_t four = 4, sh[4] = {1, ps.c, 1, 1}; /* a [1, N] tensor is N x 1 x 1 */
            const char *shn = ex_init(E, ex_str(E, "%s.in%d_shape", L->name, k), 1, &four, NULL, sh);
            const char *gi[2] = {in[k], shn};
            const char *o = ex_str(E, "%s.in%d_4d", L->name, k);
            g = ex_node(E, "Reshape", o, o, 2, gi, 0, NULL);
            if (g) ex_push(E, (void ***)&E->vis, &E->nvis, &E->capv, ex_vi(E, o, 4, ps));
            in[k] = o;
        } else if (L->kind == NET_FC && pr == 4) {
            const char *o = ex_str(E, "%s.flat", L->name);
            const char *gi[1] = {in[k]};
            Onnx__AttributeProto *ax = a_int(E, "axis", 1);
            g = ex_node(E, "Flatten", o, o, 1, gi, 1, &ax);
            if (g) ex_push(E, (void ***)&E->vis, &E->nvis, &E->capv, ex_vi(E, o, 2, ps));
            in[k] = o;
        } else {
            continue;
        }
        if (!g) return -1;
        g->doc_string = (char *)IMPLICIT;
    }
    const char *op = NULL;
    int nin = L->nin;
    const float *lw = w;
    switch (L->kind) {
    case NET_CONV: {
        net_shape x = net_in_shape(n, i, 0);
        int64_t wd[4] = {a->out_c, x.c / a->groups, a->kh, a->kw}, bd[1] = {a->out_c};
        in[1] = ex_init(E, ex_str(E, "%s.weight", L->name), 4, wd, lw, NULL);
        nin = 2;
        if (a->bias) {
            in[2] = ex_init(E, ex_str(E, "%s.bias", L->name), 1, bd,
                            lw + wd[0] * wd[1] * wd[2] * wd[3], NULL);
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
    case NET_FC: {
        int64_t K = net_shape_numel(net_in_shape(n, i, 0));
        int64_t wd[2] = {a->out_c, K}, bd[1] = {a->out_c};
        in[1] = ex_init(E, ex_str(E, "%s.weight", L->name), 2, wd, lw, NULL);
        nin = 2;
        if (a->bias) {
            in[2] = ex_init(E, ex_str(E, "%s.bias", L->name), 1, bd, lw + wd[0] * K, NULL);
            nin = 3;
        }
        at[na++] = a_int(E, "transB", 1);
        op = "Gemm";
        r = 2;
        break;
    }
    case NET_RELU:
        if (a->relu_max > 0) {
            static const float zero = 0;
            float *mx = ex_alloc(E, sizeof *mx);
            if (!mx) return -1;
            *mx = (float)a->relu_max;
            le_bytes((uint8_t *)mx, 1, 4);
            in[1] = ex_init(E, ex_str(E, "%s.min", L->name), 0, NULL, &zero, NULL);
            in[2] = ex_init(E, ex_str(E, "%s.max", L->name), 0, NULL, mx, NULL);
            nin = 3;
            op = "Clip";
        } else {
            op = "Relu";
        }
        r = rank_of(rank, L->in[0]);
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
            in[k + 1] = ex_init(E, ex_str(E, "%s.%s", L->name, role[k]), 1, d1, lw + k * c, NULL);
        nin = 5;
        at[na++] = a_float(E, "epsilon", a->bn_eps);
        op = "BatchNormalization";
        break;
    }
    case NET_ADD:
        op = L->nin == 2 ? "Add" : "Sum";
        r = need4 ? 4 : 2;
        break;
    case NET_CONCAT:
        at[na++] = a_int(E, "axis", 1);
        op = "Concat";
        r = need4 ? 4 : 2;
        break;
    case NET_FLATTEN:
        at[na++] = a_int(E, "axis", 1);
        op = "Flatten";
        r = 2;
        break;
    case NET_DROPOUT:
        op = "Dropout";
        r = rank_of(rank, L->in[0]);
        break;
    case NET_SOFTMAX:
        at[na++] = a_int(E, "axis", 1);
        op = "Softmax";
        r = rank_of(rank, L->in[0]);
        break;
    default:
        return -1;
    }
    rank[i] = r;
    if (!ex_node(E, op, L->name, L->name, nin, in, na, at)) return -1;
    if (i != n->n - 1)
        ex_push(E, (void ***)&E->vis, &E->nvis, &E->capv, ex_vi(E, L->name, r, L->out));
    return E->failed ? -1 : 0;
}

int onnx_export(const net *n, const char *path, char *err)
{
    char werr[NET_ERRLEN];
    float *w = n->weights_path ? weights_load(n, werr) : weights_generate_all(n, WEIGHTS_SEED_DEFAULT);
    if (!w) {
        if (n->weights_path) seterr(err, "%s: %s", path, werr);
        else seterr(err, "%s: out of memory for the weights", path);
        return -1;
    }
    le_bytes((uint8_t *)w, (size_t)weights_total(n), 4);
    ex E;
    memset(&E, 0, sizeof E);
    int *rank = calloc((size_t)n->n + 1, sizeof *rank);
    int rc = -1;
    FILE *f = NULL;
    char *tmp = NULL;
    if (!rank || smap_init(&E.names, 4 * n->n + 16)) {
        seterr(err, "%s: out of memory", path);
        goto out;
    }
    ex_name(&E, n->input_name);
    int64_t off = 0;
    for (int i = 0; i < n->n; i++) {
        if (export_layer(&E, n, i, w + off, rank)) {
            if (E.clash)
                seterr(err, "%s: cannot export layer %s: tensor name %s is used twice", path,
                       n->layers[i].name, E.clash);
            else
                seterr(err, "%s: cannot export layer %s: %s", path, n->layers[i].name,
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
        seterr(err, "%s: out of memory", path);
        goto out;
    }
    onnx__graph_proto__init(&g);
    g.name = n->name;
    g.n_node = E.nnodes, g.node = E.nodes;
    g.n_initializer = E.ninits, g.initializer = E.inits;
    g.n_input = 1, g.input = &gin;
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
    size_t pl = strlen(path) + 32;
    tmp = malloc(pl);
    if (!tmp) {
        seterr(err, "%s: out of memory", path);
        goto out;
    }
    snprintf(tmp, pl, "%s.tmp%ld", path, (long)getpid());
    if (!(f = fopen(tmp, "wb"))) {
        seterr(err, "%s: cannot write: %s", path, strerror(errno));
        goto out;
    }
    file_buffer fb = {{fb_append}, f, 0};
    protobuf_c_message_pack_to_buffer(&m.base, &fb.base);
    int cl = fclose(f);
    f = NULL;
    if (fb.failed || cl != 0 || rename(tmp, path) != 0) {
        seterr(err, "%s: cannot write: %s", path, strerror(errno));
        remove(tmp);
        goto out;
    }
    rc = 0;
out:
    if (f) {
        fclose(f);
        remove(tmp);
    }
    free(tmp);
    for (int i = 0; i < E.nblocks; i++) free(E.blocks[i]);
    free(E.blocks);
    free(E.nodes);
    free(E.inits);
    free(E.vis);
    smap_free(&E.names);
    free(rank);
    free(w);
    return rc;
}

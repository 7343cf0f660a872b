/* onnx_tensor.c -- what the ONNX importer and exporter share: error lines,
 * whole-file reads, the string map of tensor names, and the values of a
 * TensorProto (float_data / int64_data / raw_data / external data files),
 * plus onnx_read_tensor (onnx.h) over them.
 *
 * Invariant: a tensor's values are returned only when its type, its
 * element count and the bytes that hold them agree; otherwise one line
 * naming the file, the node and the tensor (ox_dctx.ctx) and the reason.
 * Values are little-endian on disk and host-endian in memory.
 */
#include "onnx_impl.h"
#include "base.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void ox_seterr(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_vseterr(err, fmt, ap); /* one line, whatever bytes a name holds */
    va_end(ap);
}

int ox_printable(const char *s)
{
    return base_name_ok(s); /* docs/security.md: names are UTF-8 without control characters */
}

/* Whole file into memory; NULL with err. */
uint8_t *ox_read_all(const char *path, size_t *len, char *err)
{
    /* A regular file within protobuf's 2 GiB message limit: bigger models
     * keep their weights in external data files. */
    char e2[BASE_ERRLEN];
    uint8_t *buf = (uint8_t *)base_read_file(path, OX_MODEL_MAX, len, e2);
    if (!buf) ox_seterr(err, "%s", e2);
    return buf;
}

/* The shortest decimal that rounds to f, as a double: ONNX stores float32
 * attributes, the net doubles; 1e-4 must come back as 1e-4. */
double ox_float_dec(float f)
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

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

int ox_smap_init(ox_smap *m, int n)
{
    m->cap = 16;
    while (m->cap < 2 * n + 16) m->cap *= 2;
    m->key = calloc((size_t)m->cap, sizeof *m->key);
    m->val = calloc((size_t)m->cap, sizeof *m->val);
    m->count = 0;
    return m->key && m->val ? 0 : -1;
}

void ox_smap_free(ox_smap *m)
{
    free(m->key);
    free(m->val);
}

int ox_smap_get(const ox_smap *m, const char *k)
{
    for (uint32_t i = hash(k) & (uint32_t)(m->cap - 1);; i = (i + 1) & (uint32_t)(m->cap - 1)) {
        if (!m->key[i]) return -1;
        if (!strcmp(m->key[i], k)) return m->val[i];
    }
}

/* Insert k (not copied: must outlive the map) unless present; the value. */
int ox_smap_put(ox_smap *m, const char *k, int v)
{
    if (2 * (m->count + 1) > m->cap) {
        ox_smap bigger;
        bigger.cap = m->cap * 2;
        bigger.key = calloc((size_t)bigger.cap, sizeof *bigger.key);
        bigger.val = calloc((size_t)bigger.cap, sizeof *bigger.val);
        bigger.count = 0;
        if (!bigger.key || !bigger.val) {
            ox_smap_free(&bigger);
            return -2;
        }
        for (int i = 0; i < m->cap; i++)
            if (m->key[i]) ox_smap_put(&bigger, m->key[i], m->val[i]);
        ox_smap_free(m);
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

int ox_dfail(ox_dctx *d, const char *fmt, ...)
{
    char msg[BASE_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ox_seterr(d->err, "%s: %s", d->ctx, msg);
    return -1;
}

int64_t ox_tp_numel(ox_dctx *d, const Onnx__TensorProto *t)
{
    int64_t n = 1;
    if (t->n_dims > 8) return ox_dfail(d, "tensor of rank %zu (at most 8)", t->n_dims);
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || t->dims[i] > INT32_MAX)
            return ox_dfail(d, "tensor dimension %lld out of range", (long long)t->dims[i]);
        n *= t->dims[i];
        if (n > INT32_MAX) return ox_dfail(d, "tensor has more than 2^31-1 elements");
    }
    return n;
}

const char *ox_dtype_name(int t)
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
static int ext_read(ox_dctx *d, const Onnx__TensorProto *t, size_t bytes, uint8_t *dst)
{
    const char *loc = ext_key(t, "location"), *off = ext_key(t, "offset"),
               *len = ext_key(t, "length");
    if (!loc || !loc[0]) return ox_dfail(d, "external data without a location");
    if (!d->dir) return ox_dfail(d, "external data %s cannot be read from memory", loc);
    if (loc[0] == '/' || strstr(loc, ".."))
        return ox_dfail(d, "external data location %s leaves the model's folder", loc);
    char *end;
    long long o = 0, l = (long long)bytes;
    errno = 0;
    if (off && ((o = strtoll(off, &end, 10)) < 0 || *end || !off[0] || errno))
        return ox_dfail(d, "external data offset \"%.40s\" is not a byte offset", off);
    if (len && ((l = strtoll(len, &end, 10)) < 0 || *end || !len[0] || errno))
        return ox_dfail(d, "external data length \"%.40s\" is not a byte count", len);
    if ((size_t)l != bytes)
        return ox_dfail(d, "external data length %lld, the tensor needs %zu bytes", l, bytes);
    size_t pl = strlen(d->dir) + strlen(loc) + 2;
    char *p = malloc(pl);
    if (!p) return ox_dfail(d, "out of memory");
    snprintf(p, pl, "%s/%s", d->dir, loc);
    long long size = 0;
    char e2[BASE_ERRLEN];
    /* A regular file (never a device or a FIFO), and the range inside it,
     * compared without the sum o + l (which may overflow). */
    FILE *f = base_open_input(p, -1, &size, e2);
    int rc = -1;
    if (!f && errno == ENOENT) {
        ox_dfail(d, "external data file %s is missing", p);
    } else if (!f) {
        ox_dfail(d, "external data file %s", e2);
    } else if (o > size || l > size - o) {
        ox_dfail(d, "external data file %s has %lld bytes, the tensor needs %lld at offset %lld",
              p, size, l, o);
    } else if (!dst) {
        rc = 0;
    } else if (fseeko(f, (off_t)o, SEEK_SET) != 0 || fread(dst, 1, bytes, f) != bytes) {
        ox_dfail(d, "cannot read external data file %s", p);
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

void ox_le_bytes(uint8_t *p, size_t count, size_t width)
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
int ox_tp_floats(ox_dctx *d, const Onnx__TensorProto *t, float *dst, int64_t *count)
{
    int64_t n = ox_tp_numel(d, t);
    if (n < 0) return -1;
    *count = n;
    if (t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return ox_dfail(d, "data type %s, dse needs float32", ox_dtype_name(t->data_type));
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        if (ext_read(d, t, (size_t)n * 4, (uint8_t *)dst)) return -1;
        if (dst) ox_le_bytes((uint8_t *)dst, (size_t)n, 4);
        return 0;
    }
    if (t->has_raw_data) {
        if (t->raw_data.len != (size_t)n * 4)
            return ox_dfail(d, "raw data has %zu bytes, %lld float32 values need %lld", t->raw_data.len,
                         (long long)n, (long long)n * 4);
        if (dst && n) {
            memcpy(dst, t->raw_data.data, (size_t)n * 4);
            ox_le_bytes((uint8_t *)dst, (size_t)n, 4);
        }
        return 0;
    }
    if (t->n_float_data != (size_t)n)
        return ox_dfail(d, "has %zu values, its shape needs %lld", t->n_float_data, (long long)n);
    if (dst && n) memcpy(dst, t->float_data, (size_t)n * sizeof *dst);
    return 0;
}

/* Integer values (int64 or int32) of a small tensor, at most max of them. */
int ox_tp_ints(ox_dctx *d, const Onnx__TensorProto *t, int64_t *dst, int max, int *count)
{
    int64_t n = ox_tp_numel(d, t);
    if (n < 0) return -1;
    if (n > max) return ox_dfail(d, "has %lld values, at most %d expected", (long long)n, max);
    *count = (int)n;
    int ty = t->data_type;
    size_t w = ty == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ? 8
               : ty == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? 4 : 0;
    if (!w) return ox_dfail(d, "data type %s, an integer tensor was expected", ox_dtype_name(ty));
    uint8_t raw[64];
    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        if (ext_read(d, t, (size_t)n * w, raw)) return -1;
    } else if (t->has_raw_data) {
        if (t->raw_data.len != (size_t)n * w)
            return ox_dfail(d, "raw data has %zu bytes, %lld values need %zu", t->raw_data.len,
                         (long long)n, (size_t)n * w);
        memcpy(raw, t->raw_data.data, (size_t)n * w);
    } else {
        size_t have = w == 8 ? t->n_int64_data : t->n_int32_data;
        if (have != (size_t)n)
            return ox_dfail(d, "has %zu values, its shape needs %lld", have, (long long)n);
        for (int i = 0; i < n; i++) dst[i] = w == 8 ? t->int64_data[i] : t->int32_data[i];
        return 0;
    }
    ox_le_bytes(raw, (size_t)n, w);
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

/* Folder of path ("." if none); caller frees. */
char *ox_dir_of(const char *path)
{
    const char *s = strrchr(path, '/');
    if (!s) return base_strdup(".");
    if (s == path) return base_strdup("/");
    char *d = malloc((size_t)(s - path) + 1);
    if (!d) return NULL;
    memcpy(d, path, (size_t)(s - path));
    d[s - path] = 0;
    return d;
}

float *onnx_read_tensor(const char *pb_path, int64_t dims[8], int *ndims, char *err)
{
    size_t len = 0;
    uint8_t *buf = ox_read_all(pb_path, &len, err);
    if (!buf) return NULL;
    Onnx__TensorProto *t = onnx__tensor_proto__unpack(NULL, len, buf);
    free(buf);
    if (!t) {
        ox_seterr(err, "%s: not a serialised ONNX TensorProto", pb_path);
        return NULL;
    }
    ox_dctx d;
    char *dir = ox_dir_of(pb_path);
    d.dir = dir;
    d.err = err;
    snprintf(d.ctx, sizeof d.ctx, "%s: tensor %.100s", pb_path, t->name ? t->name : "");
    float *v = NULL;
    int64_t n = 0;
    if (!dir) {
        ox_seterr(err, "%s: out of memory", pb_path);
    } else if (ox_tp_floats(&d, t, NULL, &n) == 0) {
        if (!(v = malloc(n ? (size_t)n * sizeof *v : 1))) {
            ox_seterr(err, "%s: out of memory", pb_path);
        } else if (ox_tp_floats(&d, t, v, &n) != 0) {
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

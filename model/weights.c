/* weights.c -- the weights file (layout in weights.h and docs/onnx.md), its
 * size-checked loader, the deterministic generator, and the relative-path
 * rules of network files that point at a weights file.
 *
 * Invariant: a weights array is always exactly weights_total(n) floats in
 * layer order; a file of any other size is refused, never half-read.
 */
#include "weights.h"
#include "onnx.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int64_t weights_offset(const net *n, int layer)
{
    int64_t off = 0;
    for (int i = 0; i < layer && i < n->n; i++) off += n->layers[i].weights;
    return off;
}

static int host_is_le(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* In-place little-endian <-> host conversion (a no-op on LE hosts). */
static void swap_if_be(float *w, int64_t count)
{
    if (host_is_le()) return;
    for (int64_t i = 0; i < count; i++) {
        uint8_t *b = (uint8_t *)&w[i], t;
        t = b[0], b[0] = b[3], b[3] = t;
        t = b[1], b[1] = b[2], b[2] = t;
    }
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

int weights_in_onnx(const net *n) { return n->weights_path && ends_with(n->weights_path, ".onnx"); }

int weights_check_file(const net *n, char *err)
{
    char pb[BASE_PATHSHOW + 1], e2[BASE_ERRLEN];
    const char *path = n->weights_path;
    long long size;
    if (!path) return 0;
    FILE *f = base_open_input(path, -1, &size, e2);
    if (!f) {
        base_seterr(err, "network %s: weights file %s", n->name, e2);
        return -1;
    }
    fclose(f);
    int64_t total = weights_total(n);
    if (ends_with(path, ".onnx") && n->weights_bytes > 0 && size != n->weights_bytes) {
        /* Another model (or another export) in its place: its layers would
         * not match, which only loading every weight could tell. */
        base_seterr(err, "%s: %lld bytes, but network %s was imported from a file of %lld: it changed since "
                    "`dse net import`; import it again", base_path(path, pb), size, n->name,
                    (long long)n->weights_bytes);
        return -1;
    }
    if (!ends_with(path, ".onnx") && size != total * 4) {
        base_seterr(err, "%s: weights file has %lld bytes, network %s needs %lld (%lld floats)",
                    base_path(path, pb), size, n->name, (long long)total * 4, (long long)total);
        return -1;
    }
    return 0;
}

float *weights_load(const net *n, char *err)
{
    const char *path = n->weights_path;
    char pb[BASE_PATHSHOW + 1];
    if (!path) {
        base_seterr(err, "network %s has no weights file", n->name);
        return NULL;
    }
    if (ends_with(path, ".onnx")) return onnx_read_weights(path, n, err);
    if (weights_check_file(n, err)) return NULL;
    int64_t total = weights_total(n);
    FILE *f = base_open_input(path, total * 4, NULL, err);
    if (!f) return NULL;
    float *w = malloc(total ? (size_t)total * sizeof *w : 1);
    if (!w) {
        base_seterr(err, "%s: out of memory for %lld weights", base_path(path, pb), (long long)total);
    } else if (total && fread(w, sizeof *w, (size_t)total, f) != (size_t)total) {
        base_seterr(err, "%s: short read of weights file", base_path(path, pb));
        free(w);
        w = NULL;
    } else {
        swap_if_be(w, total);
    }
    fclose(f);
    return w;
}

int weights_write(const net *n, const float *w, FILE *f)
{
    int64_t total = weights_total(n);
    if (host_is_le()) return total == 0 || fwrite(w, sizeof *w, (size_t)total, f) == (size_t)total ? 0 : -1;
    float buf[1024];
    for (int64_t i = 0; i < total; i += 1024) {
        int64_t k = total - i < 1024 ? total - i : 1024;
        memcpy(buf, w + i, (size_t)k * sizeof *buf);
        swap_if_be(buf, k);
        if (fwrite(buf, sizeof *buf, (size_t)k, f) != (size_t)k) return -1;
    }
    return 0;
}

int weights_save(const net *n, const float *w, const char *path, char *err)
{
    base_outset *s = base_outset_new();
    FILE *f = s ? base_outset_add(s, path, err) : NULL;
    if (!s) base_seterr(err, "out of memory");
    int rc = f ? (weights_write(n, w, f), base_outset_commit(s, err)) : -1;
    base_outset_free(s);
    return rc;
}

/* splitmix64's finaliser: a bijective mix, so distinct (layer, element)
 * counters give independent-looking values. */
static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void weights_generate(const net *n, int layer, uint64_t seed, int64_t first, int64_t count,
                      float *out)
{
    const net_layer *L = &n->layers[layer];
    const net_kind_info_t *K = net_kind_info(L->kind);
    uint64_t base = mix(mix(seed) ^ (uint64_t)(layer + 1));
    int64_t nw = 0, fan_in = 1, c = L->out.c;
    if (K->wlayout == NET_W_ROWS) { /* rows of fan_in weights, then the bias */
        fan_in = L->weights / c - (L->a.bias ? 1 : 0);
        nw = fan_in * c;
    }
    double scale = sqrt(6.0 / (double)(fan_in > 0 ? fan_in : 1));
    for (int64_t k = 0; k < count; k++) {
        int64_t e = first + k;
        double u = (double)(mix(base ^ (uint64_t)e) >> 40) / 16777216.0, v = 2 * u - 1;
        double x;
        if (K->wlayout > 0) { /* vectors: the kind's init letter for each */
            int role = c > 0 ? (int)(e / c) : 0;
            char r = role < (int)strlen(K->init) ? K->init[role] : 'b';
            x = r == 's' ? 1 + 0.1 * v : r == 'v' ? 1 + 0.5 * u : r == 'p' ? 0.25 + 0.1 * v : 0.1 * v;
        } else {
            x = e < nw ? v * scale : 0.01 * v;
        }
        out[k] = (float)x;
    }
}

float *weights_generate_all(const net *n, uint64_t seed)
{
    int64_t total = weights_total(n), off = 0;
    float *w = malloc(total ? (size_t)total * sizeof *w : 1);
    if (!w) return NULL;
    for (int i = 0; i < n->n; i++) {
        weights_generate(n, i, seed, 0, n->layers[i].weights, w + off);
        off += n->layers[i].weights;
    }
    return w;
}

char *weights_path_resolve(const char *doc, const char *wpath)
{
    const char *slash = strrchr(doc, '/');
    if (wpath[0] == '/' || !slash) return base_strdup(wpath);
    size_t dl = (size_t)(slash - doc), wl = strlen(wpath);
    char *p = malloc(dl + wl + 2);
    if (!p) return NULL;
    memcpy(p, doc, dl);
    p[dl] = '/';
    memcpy(p + dl + 1, wpath, wl + 1);
    return p;
}

/* Absolute, lexically normalised form of path's folder (dir_only) or of
 * path itself, as an array of components in buf; returns the count. */
static int components(const char *path, int dir_only, char *buf, size_t cap, char **comp, int maxc)
{
    size_t len = 0;
    buf[0] = 0;
    if (path[0] != '/') {
        if (!getcwd(buf, cap)) return -1;
        len = strlen(buf);
    }
    if (len + strlen(path) + 2 > cap) return -1;
    buf[len++] = '/';
    strcpy(buf + len, path);
    if (dir_only) {
        char *s = strrchr(buf, '/');
        *s = 0;
    }
    int nc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (!strcmp(tok, ".")) continue;
        if (!strcmp(tok, "..")) {
            if (nc > 0) nc--;
            continue;
        }
        if (nc == maxc) return -1;
        comp[nc++] = tok;
    }
    return nc;
}

char *weights_path_relative(const char *doc, const char *wpath)
{
    enum { CAP = 4096, MAXC = 256 };
    char *b1 = malloc(CAP), *b2 = malloc(CAP), *d[MAXC], *w[MAXC], *r = NULL;
    if (!b1 || !b2) goto out;
    int nd = components(doc, 1, b1, CAP, d, MAXC);
    int nw = components(wpath, 0, b2, CAP, w, MAXC);
    if (nd < 0 || nw < 1) {
        r = base_strdup(wpath);
        goto out;
    }
    int common = 0;
    while (common < nd && common < nw - 1 && !strcmp(d[common], w[common])) common++;
    /* Nothing shared but the root: an absolute path reads better than ../../.. */
    int absolute = common == 0;
    size_t need = 2;
    for (int i = common; i < nd; i++) need += 3;
    for (int i = common; i < nw; i++) need += strlen(w[i]) + 1;
    r = malloc(need);
    if (!r) goto out;
    strcpy(r, absolute ? "/" : "");
    for (int i = common; i < nd && !absolute; i++) strcat(r, "../");
    for (int i = common; i < nw; i++) {
        strcat(r, w[i]);
        if (i + 1 < nw) strcat(r, "/");
    }
out:
    free(b1);
    free(b2);
    return r;
}

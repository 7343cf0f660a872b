/* mapping.c -- the phenotype (see mapping.h): construction, the validity
 * check, channel apportionment, our JSON format (docs/mapping-format.md) and
 * AutoDiCE's mapping.json + horizontal.json pair.
 *
 * Invariant: every mapping handed out by a reader here has passed
 * mapping_validate(); readers build into a scratch layout (layer i's
 * slices at i*ndev, the capacity mapping_new() guarantees) and compact into
 * the CSR form only once every layer has been checked.
 */
#include "mapping.h"
#include "jsonutil.h"
#include "onnx.h"

#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- construction ---- */

mapping *mapping_new(int nlayers, int ndev)
{
    if (nlayers < 0 || ndev < 1) return NULL;
    mapping *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->nlayers = nlayers;
    m->ndev = ndev;
    m->first = calloc((size_t)nlayers + 1, sizeof *m->first);
    m->slices = calloc((size_t)nlayers * ndev + 1, sizeof *m->slices);
    m->cut = calloc((size_t)nlayers + 1, 1);
    m->recompute = calloc((size_t)nlayers + 1, 1);
    if (!m->first || !m->slices || !m->cut || !m->recompute) {
        mapping_free(m);
        return NULL;
    }
    return m;
}

void mapping_free(mapping *m)
{
    if (!m) return;
    free(m->first);
    free(m->slices);
    free(m->cut);
    free(m->recompute);
    free(m);
}

void mapping_copy(mapping *dst, const mapping *src)
{
    memcpy(dst->first, src->first, ((size_t)src->nlayers + 1) * sizeof *dst->first);
    memcpy(dst->slices, src->slices, (size_t)src->first[src->nlayers] * sizeof *dst->slices);
    memcpy(dst->cut, src->cut, (size_t)src->nlayers);
    memcpy(dst->recompute, src->recompute, (size_t)src->nlayers);
}

void mapping_set_single(mapping *m, const net *n, int dev)
{
    for (int i = 0; i < m->nlayers; i++) {
        m->first[i] = i;
        m->slices[i] = (map_slice){dev, 0, n->layers[i].out.c};
        m->cut[i] = 0;
        m->recompute[i] = 0;
    }
    m->first[m->nlayers] = m->nlayers;
}

const char *mapping_cut_unit(int c)
{
    return c == MAP_CUT_ROWS ? "row" : c == MAP_CUT_COLS ? "column" : "channel";
}

int mapping_cut_allowed(const net *n, int i, int c)
{
    return c == MAP_CUT_ROWS   ? net_layer_rowsplit(n, i)
           : c == MAP_CUT_COLS ? net_layer_colsplit(n, i)
                               : net_kind_splittable(n->layers[i].kind);
}

/* Work of channels [c0, c0+nc) of layer i: MACs (Conv, FC) or ops. */
static double slice_work(const net *n, int i, int c0, int nc)
{
    return (double)(net_slice_macs(n, i, c0, nc) + net_slice_ops(n, i, c0, nc));
}

double mapping_distance(const mapping *a, const mapping *b, const net *n)
{
    double total = 0, moved = 0;
    for (int i = 0; i < n->n; i++) {
        const map_slice *sa = mapping_slices(a, i), *sb = mapping_slices(b, i);
        int ka = mapping_nslices(a, i), kb = mapping_nslices(b, i);
        double w = slice_work(n, i, 0, n->layers[i].out.c), same = 0;
        /* A slice's share of the layer: channels of out.c, rows of out.h
         * or columns of out.w. */
        double ua = mapping_cut_total(n, i, a->cut[i]), ub = mapping_cut_total(n, i, b->cut[i]);
        /* Cut by channels in one and into bands in the other: a device
         * computes in both only the outputs its channel share and its band
         * have in common, fa * fb of the layer, not the smaller amount
         * (its channel slice and its band hold different weights and read
         * different inputs). Rows against columns compare by amount (both
         * bands: the spatial chromosome's `bands` mode says either). */
        int cross = ka > 1 && kb > 1 && (a->cut[i] == MAP_CUT_CHANNELS) != (b->cut[i] == MAP_CUT_CHANNELS);
        for (int x = 0; x < ka; x++)
            for (int y = 0; y < kb; y++)
                if (sa[x].dev != sb[y].dev) {
                } else if (cross) {
                    same += w * (sa[x].nc / ua) * (sb[y].nc / ub);
                } else if (!a->cut[i] && !b->cut[i]) {
                    int nc = sa[x].nc < sb[y].nc ? sa[x].nc : sb[y].nc;
                    same += slice_work(n, i, 0, nc);
                } else {
                    double fa = sa[x].nc / ua, fb = sb[y].nc / ub;
                    same += w * (fa < fb ? fa : fb);
                }
        total += w;
        moved += w - same;
    }
    return total > 0 ? moved / total : 0;
}

int mapping_equal(const mapping *a, const mapping *b)
{
    if (a->nlayers != b->nlayers || a->ndev != b->ndev) return 0;
    if (memcmp(a->first, b->first, ((size_t)a->nlayers + 1) * sizeof *a->first)) return 0;
    if (memcmp(a->cut, b->cut, (size_t)a->nlayers)) return 0;
    if (memcmp(a->recompute, b->recompute, (size_t)a->nlayers)) return 0;
    for (int k = 0; k < a->first[a->nlayers]; k++)
        if (a->slices[k].dev != b->slices[k].dev || a->slices[k].c0 != b->slices[k].c0 ||
            a->slices[k].nc != b->slices[k].nc)
            return 0;
    return 1;
}

int mapping_validate(const mapping *m, const net *n, char *err)
{
    if (m->nlayers != n->n) {
        base_seterr(err, "mapping has %d layers but network %s has %d", m->nlayers,
                 n->name, n->n);
        return -1;
    }
    if (m->first[0] != 0) {
        base_seterr(err, "mapping: slice table does not start at 0");
        return -1;
    }
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        int k = m->first[i + 1] - m->first[i];
        if (k < 1 || m->first[i + 1] > m->nlayers * m->ndev) {
            base_seterr(err, "layer \"%s\": %s", L->name,
                     k < 1 ? "no device computes it" : "slice table overflows");
            return -1;
        }
        if (m->cut[i] >= MAP_CUT_COUNT) {
            base_seterr(err, "layer \"%s\": cut kind %d is not channels, rows or columns",
                        L->name, m->cut[i]);
            return -1;
        }
        int rows = m->cut[i] != MAP_CUT_CHANNELS, total = mapping_cut_total(n, i, m->cut[i]);
        const char *unit = mapping_cut_unit(m->cut[i]);
        if (rows && (k < 2 || !mapping_cut_allowed(n, i, m->cut[i]))) {
            base_seterr(err, "layer \"%s\": %s %ss", L->name,
                        k < 2 ? "has one slice but is cut by" : "cannot be cut by", unit);
            return -1;
        }
        if (m->recompute[i] > 1 || (m->recompute[i] && (!rows || i == n->n - 1))) {
            base_seterr(err, "layer \"%s\": recomputes halos but %s", L->name,
                        !rows ? "is not cut by rows or columns"
                              : i == n->n - 1 ? "is the network's output"
                                              : "the flag is not 0 or 1");
            return -1;
        }
        if (k > 1 && !rows && !net_kind_splittable(L->kind)) {
            base_seterr(err, "layer \"%s\": a %s layer cannot be split but has %d slices",
                     L->name, net_kind_name(L->kind), k);
            return -1;
        }
        const map_slice *s = m->slices + m->first[i];
        int next = 0;
        for (int a = 0; a < k; a++) {
            if (s[a].dev < 0 || s[a].dev >= m->ndev) {
                base_seterr(err, "layer \"%s\": slice %d names device %d, not in 0..%d",
                         L->name, a, s[a].dev, m->ndev - 1);
                return -1;
            }
            if (s[a].nc < 1) {
                base_seterr(err, "layer \"%s\": slice %d on device %d is empty", L->name,
                         a, s[a].dev);
                return -1;
            }
            if (s[a].c0 != next) {
                base_seterr(err, "layer \"%s\": %ss %s at %d (slice %d starts at %d)",
                         L->name, unit, s[a].c0 > next ? "missing" : "computed twice", next, a,
                         s[a].c0);
                return -1;
            }
            if ((int64_t)s[a].c0 + s[a].nc > total) {
                base_seterr(err, "layer \"%s\": slice %d ends at %s %lld, beyond "
                         "its %d %ss", L->name, a, unit, (long long)s[a].c0 + s[a].nc, total, unit);
                return -1;
            }
            next = s[a].c0 + s[a].nc;
            for (int b = 0; b < a; b++)
                if (s[b].dev == s[a].dev) {
                    base_seterr(err, "layer \"%s\": device %d holds two slices", L->name,
                             s[a].dev);
                    return -1;
                }
        }
        if (next != total) {
            base_seterr(err, "layer \"%s\": %ss %d..%d are not computed", L->name,
                     unit, next, total - 1);
            return -1;
        }
    }
    return 0;
}

/* ---- apportionment ----
 * Largest remainder in exact integer arithmetic: quota q_i = total*w_i/W,
 * everyone gets floor(q_i), the r = total - sum(floor) leftover channels go
 * to the r largest remainders (ties: lower index).  Then, when total >= k,
 * an empty share takes one channel from the share with the largest surplus
 * share - q_i (ties: lower index).  Whenever some allocation keeps every
 * share within one channel of its quota and non-empty, this finds one (the
 * donors are exactly the shares rounded up); otherwise (weights so skewed
 * that a quota below 1 meets too few leftovers) non-emptiness wins. */
void mapping_apportion(int total, int k, const int *w, int *out)
{
    if (k <= 0) return;
    int64_t W = 0;
    for (int i = 0; i < k; i++) W += w[i] > 0 ? w[i] : 0;
    int equal = W == 0; /* all weights zero: share equally */
    if (equal) W = k;
#define WEIGHT(i) (equal ? 1 : (w[i] > 0 ? w[i] : 0))
    /* Remainders are cached for the common small k (no allocation here:
     * decoders call this on their hot path); larger k recompute them. */
    int64_t rcache[64];
    const int cached = k <= 64;
    int assigned = 0;
    for (int i = 0; i < k; i++) {
        int64_t q = (int64_t)total * WEIGHT(i);
        out[i] = (int)(q / W);
        if (cached) rcache[i] = q % W;
        assigned += out[i];
    }
#define REM(i) (cached ? rcache[i] : (int64_t)total * WEIGHT(i) % W)
    int r = total - assigned;
    /* Hand out the r leftovers: rank of i = number of remainders that beat
     * it.  Remainders sum to r*W with each < W, so more than r of them are
     * positive and exactly r shares get one more channel. */
    for (int i = 0; i < k && r > 0; i++) {
        int64_t ri = REM(i);
        if (ri == 0) continue;
        int rank = 0;
        for (int j = 0; j < k && rank < r; j++) {
            int64_t rj = REM(j);
            if (rj > ri || (rj == ri && j < i)) rank++;
        }
        if (rank < r) out[i]++;
    }
    if (total < k) return;
    for (int i = 0; i < k; i++) {
        if (out[i] > 0) continue;
        int best = -1;
        int64_t bs = 0; /* surplus scaled by W: out*W - total*w */
        for (int j = 0; j < k; j++) {
            if (out[j] < 2) continue;
            int64_t sj = (int64_t)out[j] * W - (int64_t)total * WEIGHT(j);
            if (best < 0 || sj > bs) best = j, bs = sj;
        }
        out[best]--; /* total >= k guarantees a share of 2 or more exists */
        out[i] = 1;
    }
#undef REM
#undef WEIGHT
}

/* ---- helpers shared by the readers ---- */

/* Sort a layer's staged slices by first channel (k <= ndev, tiny). */
static void sort_by_c0(map_slice *s, int k)
{
    for (int a = 1; a < k; a++) {
        map_slice t = s[a];
        int b = a - 1;
        while (b >= 0 && s[b].c0 > t.c0) s[b + 1] = s[b], b--;
        s[b + 1] = t;
    }
}

/* Check a staged layer (slices at stage, k of them, sorted) and explain the
 * first problem as "what: layer "x": ...". */
static int check_staged(const net *n, int i, const map_slice *s, int k, int cut,
                        const platform *p, const char *what, char *err)
{
    const net_layer *L = &n->layers[i];
    char unit[16];
    snprintf(unit, sizeof unit, "%ss", mapping_cut_unit(cut));
    int total = mapping_cut_total(n, i, cut), rows = cut != MAP_CUT_CHANNELS;
    if (k == 0) {
        base_seterr(err, "%s: layer \"%s\": missing (every layer must be mapped)", what,
                 L->name);
        return -1;
    }
    if (rows && !mapping_cut_allowed(n, i, cut)) {
        base_seterr(err, "%s: layer \"%s\": a %s layer of %d %s cannot be cut by "
                 "%s", what, L->name, net_kind_name(L->kind), total, unit, unit);
        return -1;
    }
    if (k > 1 && !rows && !net_kind_splittable(L->kind)) {
        base_seterr(err, "%s: layer \"%s\": a %s layer cannot be split, but %d devices "
                 "compute it", what, L->name, net_kind_name(L->kind), k);
        return -1;
    }
    int next = 0;
    for (int a = 0; a < k; a++) {
        if (s[a].c0 > next) {
            base_seterr(err, "%s: layer \"%s\": %s %d..%d are not computed by any "
                     "device", what, L->name, unit, next, s[a].c0 - 1);
            return -1;
        }
        if (s[a].c0 < next) {
            base_seterr(err, "%s: layer \"%s\": %s %d..%d are computed twice "
                     "(device %s overlaps the previous slice)", what, L->name, unit, s[a].c0, next - 1,
                     p->dev[s[a].dev].name);
            return -1;
        }
        next = s[a].c0 + s[a].nc;
        if (!platform_supports(p, s[a].dev, L->kind)) {
            base_seterr(err, "%s: layer \"%s\": device %s does not support %s layers "
                     "(its \"supports\" list)", what, L->name, p->dev[s[a].dev].name,
                     net_kind_name(L->kind));
            return -1;
        }
        for (int b = 0; b < a; b++)
            if (s[b].dev == s[a].dev) {
                base_seterr(err, "%s: layer \"%s\": device %s holds two slices (merge "
                         "them into one range)", what, L->name, p->dev[s[a].dev].name);
                return -1;
            }
    }
    if (next != total) {
        base_seterr(err, "%s: layer \"%s\": %s %d..%d are not computed by any "
                 "device", what, L->name, unit, next, total - 1);
        return -1;
    }
    return 0;
}

/* Compact the staged layout (layer i at i*ndev, cnt[i] slices) into CSR. */
static void compact(mapping *m, const int *cnt)
{
    int pos = 0;
    for (int i = 0; i < m->nlayers; i++) {
        m->first[i] = pos;
        /* pos <= i*ndev, so moving forward never clobbers unread slices. */
        memmove(m->slices + pos, m->slices + (size_t)i * m->ndev, (size_t)cnt[i] * sizeof *m->slices);
        pos += cnt[i];
    }
    m->first[m->nlayers] = pos;
}

static int int_value(const cJSON *v, int *out)
{
    /* Range first: converting a double outside int's range is undefined
     * (the JSON fuzz target found 4.4e43 here). */
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= INT_MIN && v->valuedouble <= INT_MAX) ||
        v->valuedouble != (double)(int)v->valuedouble)
        return -1;
    *out = (int)v->valuedouble;
    return 0;
}

/* ---- our format ---- */

mapping *mapping_from_json(const char *text, const char *what, const net *n, const platform *p,
                           char *err)
{
    cJSON *root = ju_parse(text, what, err);
    if (!root) return NULL;
    mapping *m = NULL;
    int *cnt = NULL, *seen = NULL;
    const char *fmt = NULL;
    if (!cJSON_IsObject(root) || ju_str(root, "format", &fmt, 0, what, err) || !fmt ||
        strcmp(fmt, "dse-mapping")) {
        base_seterr(err, "%s: not a dse mapping file (\"format\": \"dse-mapping\" "
                 "missing)", what);
        goto fail;
    }
    int version = 1;
    if (ju_int(root, "version", &version, 0, what, err)) goto fail;
    if (version != 1) {
        base_seterr(err, "%s: mapping format version %d is not supported (only 1)", what,
                 version);
        goto fail;
    }
    for (const cJSON *c = root->child; c; c = c->next)
        if (strcmp(c->string, "format") && strcmp(c->string, "version") &&
            strcmp(c->string, "network") && strcmp(c->string, "platform") &&
            strcmp(c->string, "layers") && strcmp(c->string, "note")) {
            base_seterr(err, "%s: unknown key \"%s\"", what, c->string);
            goto fail;
        }
    const cJSON *jl = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (!cJSON_IsObject(jl)) {
        base_seterr(err, "%s: \"layers\" must be an object {layer name: slices}", what);
        goto fail;
    }
    m = mapping_new(n->n, p->ndev);
    cnt = calloc((size_t)n->n + 1, sizeof *cnt);
    seen = calloc((size_t)n->n + 1, sizeof *seen);
    if (!m || !cnt || !seen) {
        base_seterr(err, "%s: out of memory", what);
        goto fail;
    }
    for (const cJSON *c = jl->child; c; c = c->next) {
        int i = net_find(n, c->string);
        if (i < 0) {
            base_seterr(err, "%s: layer \"%s\": not in network %s", what, c->string,
                     n->name);
            goto fail;
        }
        if (seen[i]++) {
            base_seterr(err, "%s: layer \"%s\": listed twice", what, c->string);
            goto fail;
        }
        map_slice *s = m->slices + (size_t)i * m->ndev;
        int C = n->layers[i].out.c;
        if (cJSON_IsString(c)) {
            int d = platform_find(p, c->valuestring);
            if (d < 0) {
                base_seterr(err, "%s: layer \"%s\": device \"%s\" is not in platform %s",
                         what, c->string, c->valuestring, p->name);
                goto fail;
            }
            s[0] = (map_slice){d, 0, C};
            cnt[i] = 1;
            continue;
        }
        /* Bands: {"rows": [[device, first_row, row_count], ...]}, or
         * "columns" of [device, first_column, column_count]. */
        const cJSON *arr = c;
        if (cJSON_IsObject(c)) {
            const cJSON *jr = cJSON_GetObjectItemCaseSensitive(c, "rows");
            const cJSON *jc = cJSON_GetObjectItemCaseSensitive(c, "columns");
            const cJSON *rc = cJSON_GetObjectItemCaseSensitive(c, "recompute");
            arr = jr ? jr : jc;
            if (!arr || (jr && jc) || cJSON_GetArraySize(c) != 1 + (rc != NULL) ||
                (rc && !cJSON_IsBool(rc))) {
                base_seterr(err, "%s: layer \"%s\": an object must be {\"rows\": "
                         "[[device, first_row, row_count], ...]} or {\"columns\": [[device, "
                         "first_column, column_count], ...]} with an optional "
                         "\"recompute\": true or false", what, c->string);
                goto fail;
            }
            m->recompute[i] = cJSON_IsTrue(rc);
            m->cut[i] = jr ? MAP_CUT_ROWS : MAP_CUT_COLS;
            C = mapping_cut_total(n, i, m->cut[i]);
        }
        const char *unit = mapping_cut_unit(m->cut[i]);
        if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1) {
            base_seterr(err, "%s: layer \"%s\": must be a device name or a non-empty list "
                     "of [device, first_%s, %s_count]", what, c->string, unit, unit);
            goto fail;
        }
        for (const cJSON *e = arr->child; e; e = e->next) {
            const cJSON *jd = cJSON_GetArrayItem(e, 0);
            int c0, nc;
            if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 3 || !cJSON_IsString(jd) ||
                int_value(cJSON_GetArrayItem(e, 1), &c0) || int_value(cJSON_GetArrayItem(e, 2), &nc)) {
                base_seterr(err, "%s: layer \"%s\": each slice must be [device, "
                         "first_%s, %s_count]", what, c->string, unit, unit);
                goto fail;
            }
            int d = platform_find(p, jd->valuestring);
            if (d < 0) {
                base_seterr(err, "%s: layer \"%s\": device \"%s\" is not in platform %s",
                         what, c->string, jd->valuestring, p->name);
                goto fail;
            }
            if (c0 < 0 || nc < 1 || (int64_t)c0 + nc > C) {
                base_seterr(err, "%s: layer \"%s\": device %s: %ss [%d, %d+%d) are "
                         "outside the layer's %d output %ss", what, c->string,
                         jd->valuestring, unit, c0, c0, nc, C, unit);
                goto fail;
            }
            if (cnt[i] == m->ndev) {
                base_seterr(err, "%s: layer \"%s\": more slices than the %d devices of "
                         "platform %s", what, c->string, m->ndev, p->name);
                goto fail;
            }
            s[cnt[i]++] = (map_slice){d, c0, nc};
        }
    }
    for (int i = 0; i < n->n; i++) {
        map_slice *s = m->slices + (size_t)i * m->ndev;
        sort_by_c0(s, cnt[i]);
        if (check_staged(n, i, s, cnt[i], m->cut[i], p, what, err)) goto fail;
        if (m->recompute[i] && i == n->n - 1 && cnt[i] > 1) {
            base_seterr(err, "%s: layer \"%s\": the network's output cannot recompute "
                        "halos (nothing reads it)", what, n->layers[i].name);
            goto fail;
        }
        if (cnt[i] == 1 && m->cut[i]) { /* one band of everything: the whole layer */
            m->cut[i] = 0;
            m->recompute[i] = 0;
            s[0] = (map_slice){s[0].dev, 0, n->layers[i].out.c};
        }
    }
    compact(m, cnt);
    free(cnt);
    free(seen);
    cJSON_Delete(root);
    char e2[BASE_ERRLEN];
    if (mapping_validate(m, n, e2)) { /* cannot happen after the checks above */
        base_seterr(err, "%s: %.400s", what, e2);
        mapping_free(m);
        return NULL;
    }
    return m;
fail:
    free(cnt);
    free(seen);
    mapping_free(m);
    cJSON_Delete(root);
    return NULL;
}

static mapping *load_autodice_dir(const char *dir, const net *n, const platform *p, char *err);

mapping *mapping_load(const char *path, const net *n, const platform *p, char *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return load_autodice_dir(path, n, p, err);
    char *text = ju_read_file(path, err);
    if (!text) return NULL;
    mapping *m = mapping_from_json(text, path, n, p, err);
    free(text);
    return m;
}

char *mapping_to_json(const mapping *m, const net *n, const platform *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "format", "dse-mapping");
    cJSON_AddNumberToObject(o, "version", 1);
    cJSON_AddStringToObject(o, "network", n->name);
    cJSON_AddStringToObject(o, "platform", p->name);
    cJSON *jl = cJSON_AddObjectToObject(o, "layers");
    for (int i = 0; i < m->nlayers; i++) {
        int k = mapping_nslices(m, i);
        const map_slice *s = mapping_slices(m, i);
        if (k == 1) {
            cJSON_AddStringToObject(jl, n->layers[i].name, p->dev[s[0].dev].name);
            continue;
        }
        cJSON *jo = m->cut[i] ? cJSON_AddObjectToObject(jl, n->layers[i].name) : NULL;
        cJSON *arr = jo ? cJSON_AddArrayToObject(jo, m->cut[i] == MAP_CUT_COLS ? "columns" : "rows")
                        : cJSON_AddArrayToObject(jl, n->layers[i].name);
        if (jo && m->recompute[i]) cJSON_AddTrueToObject(jo, "recompute");
        for (int a = 0; a < k; a++) {
            cJSON *e = cJSON_CreateArray();
            cJSON_AddItemToArray(e, cJSON_CreateString(p->dev[s[a].dev].name));
            cJSON_AddItemToArray(e, cJSON_CreateNumber(s[a].c0));
            cJSON_AddItemToArray(e, cJSON_CreateNumber(s[a].nc));
            cJSON_AddItemToArray(arr, e);
        }
    }
    char *txt = ju_print(o, 1);
    cJSON_Delete(o);
    return txt;
}

int mapping_save(const mapping *m, const net *n, const platform *p, const char *path, char *err)
{
    char *txt = mapping_to_json(m, n, p);
    if (!txt) {
        base_seterr(err, "%s: out of memory", path);
        return -1;
    }
    int rc = ju_write_file_atomic(path, txt, err);
    free(txt);
    return rc;
}

/* ---- AutoDiCE ----
 * How AutoDiCE reads its two files (github.com/parrotsky/AutoDiCE,
 * tools/distributed/vertical/interface.py and horizontal/interface.py,
 * Interface.__init__ and HorizontalInplace; onnx_split.py, format_onnx and
 * horizontal_split), which the writer below follows and the reader accepts:
 *
 * - a mapping.json key is "<host>_<resource>": key.split('_')[0] is the MPI
 *   host of its rankfile, [1] the resource: "cpu" or "arm" followed by one
 *   digit per core (the rankfile's slots; their count is the thread count),
 *   or "gpu".  The key order is the MPI rank order.
 * - layer names are ONNX node names after format_onnx(), which renames every
 *   node to its first output and turns '/' into '_'.
 * - horizontal.json {"layer": ["lop", ends, keys]}: the ends are the
 *   cumulative end channels of the slices, used literally (the last one is
 *   the layer's channel count); {"layer": ["height", heights, keys]}: the
 *   output rows of each band, top to bottom (a count each, not an end:
 *   horizontal_split's split_points); {"layer": ["width", widths, keys]}
 *   the output columns of each band, left to right, alike.
 *
 * docs/mapping-format.md has the translation both ways. */

#define AD_LEGACY_REST 65535 /* dse's old "to the last channel"; read, never written */
#define AD_HOSTLEN 256

/* AutoDiCE's view of one device of a platform. */
typedef struct {
    char host[AD_HOSTLEN];     /* the host name a hostfile uses for its board */
    int core0;                 /* CPU: its first core on the host (CPU devices in platform order) */
    int gpu_idx;               /* GPU: its index among the host's GPUs */
    char key[AD_HOSTLEN + 16]; /* its AutoDiCE key, "" when it has none */
    char why[BASE_ERRLEN];      /* why it has none */
} ad_dev;

static int host_char_ok(int c) { return isalnum(c) || c == '-' || c == '.'; }

/* Hosts, core ranges and keys of every device of p. */
static ad_dev *ad_devices(const platform *p)
{
    ad_dev *a = calloc((size_t)p->ndev, sizeof *a);
    if (!a) return NULL;
    for (int d = 0; d < p->ndev; d++) {
        const plat_device *D = &p->dev[d];
        ad_dev *A = &a[d];
        platform_board_host(D->board, A->host, sizeof A->host);
        for (int e = 0; e < d; e++)
            if (!strcmp(a[e].host, A->host) && p->dev[e].kind == D->kind) {
                if (D->kind == PLAT_CPU) A->core0 += p->dev[e].cores;
                else A->gpu_idx++;
            }
        int ok = A->host[0] != 0;
        for (const char *c = A->host; *c; c++) ok &= host_char_ok((unsigned char)*c);
        if (strchr(A->host, '_'))
            snprintf(A->why, sizeof A->why, "device %s: its host \"%s\" has a \"_\", which "
                     "AutoDiCE takes for the end of the host name", D->name, A->host);
        else if (!ok)
            snprintf(A->why, sizeof A->why, "device %s: its host \"%s\" is not made of letters, "
                     "digits, '-' and '.', as AutoDiCE's keys and rankfile need", D->name, A->host);
        else if (D->kind == PLAT_GPU && A->gpu_idx > 0)
            snprintf(A->why, sizeof A->why, "device %s: host %s has a second GPU, and AutoDiCE "
                     "knows one GPU per host (%s_gpu)", D->name, A->host, A->host);
        else if (D->kind == PLAT_CPU && A->core0 + D->cores > 10)
            snprintf(A->why, sizeof A->why, "device %s: AutoDiCE reads one digit per core, so "
                     "cores %d..%d of host %s cannot be written", D->name, A->core0,
                     A->core0 + D->cores - 1, A->host);
        else if (D->kind == PLAT_GPU)
            snprintf(A->key, sizeof A->key, "%s_gpu", A->host);
        else {
            int k = snprintf(A->key, sizeof A->key, "%s_cpu", A->host);
            for (int c = 0; c < D->cores; c++) A->key[k++] = (char)('0' + A->core0 + c);
            A->key[k] = 0;
        }
    }
    return a;
}

/* A name as AutoDiCE's format_onnx() leaves it: '/' -> '_'. */
static char *ad_name(const char *s)
{
    char *t = base_strdup(s);
    if (t)
        for (char *c = t; *c; c++)
            if (*c == '/') *c = '_';
    return t;
}

/* Every ONNX node dse's export writes (onnx_node_names), by layer, with
 * the name AutoDiCE knows it by. */
typedef struct {
    int n, cap;
    int *layer;
    char **name;   /* AutoDiCE's name */
    char **dse;    /* the node name in dse's ONNX */
    char *glue;    /* 1: glue before the layer, 0: the layer's own node */
    int *first;    /* nodes of layer i: first[i] .. first[i+1]-1 */
    int failed;
} ad_nodes;

static void ad_nodes_add(void *ctx, int layer, const char *name)
{
    ad_nodes *N = ctx;
    if (N->failed) return;
    if (N->n == N->cap) {
        int cap = N->cap ? 2 * N->cap : 64;
        int *l = realloc(N->layer, (size_t)cap * sizeof *l);
        if (l) N->layer = l;
        char **a = realloc(N->name, (size_t)cap * sizeof *a);
        if (a) N->name = a;
        char **b = realloc(N->dse, (size_t)cap * sizeof *b);
        if (b) N->dse = b;
        char *g = realloc(N->glue, (size_t)cap);
        if (g) N->glue = g;
        if (!l || !a || !b || !g) {
            N->failed = 1;
            return;
        }
        N->cap = cap;
    }
    N->layer[N->n] = layer;
    N->name[N->n] = ad_name(name);
    N->dse[N->n] = base_strdup(name);
    N->glue[N->n] = 0;
    if (!N->name[N->n] || !N->dse[N->n]) {
        free(N->name[N->n]);
        free(N->dse[N->n]);
        N->failed = 1;
        return;
    }
    N->n++;
}

static void ad_nodes_free(ad_nodes *N)
{
    for (int k = 0; k < N->n; k++) free(N->name[k]), free(N->dse[k]);
    free(N->layer), free(N->name), free(N->dse), free(N->glue), free(N->first);
    memset(N, 0, sizeof *N);
}

static int ad_nodes_build(ad_nodes *N, const net *n)
{
    memset(N, 0, sizeof *N);
    N->first = calloc((size_t)n->n + 1, sizeof *N->first);
    if (!N->first || onnx_node_names(n, ad_nodes_add, N) || N->failed) {
        ad_nodes_free(N);
        return -1;
    }
    int k = 0; /* nodes come layer by layer, each layer's own node last */
    for (int i = 0; i <= n->n; i++) {
        while (k < N->n && N->layer[k] < i) k++;
        N->first[i] = k;
    }
    for (k = 0; k < N->n; k++) N->glue[k] = strcmp(N->dse[k], n->layers[N->layer[k]].name) != 0;
    return 0;
}

static int c_identifier(const char *s)
{
    if (!isalpha((unsigned char)*s) && *s != '_') return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

/* The first of the problems AutoDiCE would have with files it can read,
 * and how many there are. */
typedef struct {
    char first[BASE_ERRLEN];
    int count;
} ad_warn;

static void warn_add(ad_warn *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn_add(ad_warn *w, const char *fmt, ...)
{
    if (w->count++) return;
    va_list ap;
    va_start(ap, fmt);
    base_vseterr(w->first, fmt, ap);
    va_end(ap);
}

static int on_dev(const mapping *m, int i, int d)
{
    const map_slice *s = mapping_slices(m, i);
    for (int a = 0; a < mapping_nslices(m, i); a++)
        if (s[a].dev == d) return 1;
    return 0;
}

/* What AutoDiCE gets wrong with a mapping it can read: a split grouped
 * convolution (its split copies `group` onto every slice), a name that the
 * renaming of a split layer changes too (HorizontalInplace replaces the
 * layer's name as a substring of every name its devices list), two names
 * that '/' -> '_' makes equal, a tensor sent between devices whose name is
 * not a C identifier (its generated C++ declares one variable per such
 * tensor). */
static void ad_hazards(const mapping *m, const net *n, const platform *p, const ad_nodes *N,
                       ad_warn *w)
{
    /* Its height and width splits are right on paper (ad_band_why) but its front end
     * stops on it (checked at AutoDiCE 82d6192, 2025-08-19): the HSplit node
     * it inserts is no ONNX operator and its own onnx.checker call rejects
     * it (before that, onnx 1.12 refuses the numpy integers of the band
     * shape it writes, start - end, negative). */
    for (int i = 0; i < n->n; i++)
        if (m->cut[i] && mapping_nslices(m, i) > 1)
            warn_add(w, "AutoDiCE's front end fails on this mapping: its %s split of %s "
                     "inserts an HSplit node, which is no ONNX operator and which its own "
                     "onnx.checker call rejects (AutoDiCE 82d6192; with onnx 1.12 it stops "
                     "before, on the band shape it records)",
                     m->cut[i] == MAP_CUT_ROWS ? "height" : "width", N->name[N->first[i + 1] - 1]);
    /* Its bands read their input rows out of the producer's whole output:
     * there is no halo to fetch or recompute, and no way to say which. */
    for (int i = 0; i < n->n; i++)
        if (m->recompute[i])
            warn_add(w, "AutoDiCE's files do not carry dse's choice to recompute the halo %ss "
                     "of %s (AutoDiCE has no halos: a band crops its input %ss from the whole "
                     "input); its bands are written as they are", mapping_cut_unit(m->cut[i]),
                     N->name[N->first[i + 1] - 1], mapping_cut_unit(m->cut[i]));
    /* Its output-channel split (onnx_split.py, horizontal_split) builds
     * the slices' nodes for Conv and Gemm alone: another kind's split
     * leaves them undefined and the script stops. */
    for (int i = 0; i < n->n; i++)
        if (!m->cut[i] && mapping_nslices(m, i) > 1 && n->layers[i].kind != NET_CONV &&
            n->layers[i].kind != NET_FC)
            warn_add(w, "AutoDiCE's front end fails on this mapping: its output-channel split "
                     "handles Conv and Gemm nodes only, not the %s %s (AutoDiCE 82d6192, "
                     "onnx_split.py)", net_kind_name(n->layers[i].kind), n->layers[i].name);
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        int k = mapping_nslices(m, i);
        if (L->kind == NET_CONV && L->a.groups > 1 && k > 1 && !m->cut[i]) /* bands keep all */
            warn_add(w, "AutoDiCE computes wrong results for this mapping: its output-channel "
                     "split copies group=%d onto every slice of the grouped convolution %s "
                     "(split across %d devices)", L->a.groups, L->name, k);
    }
    for (int i = 0; i < n->n; i++) {
        if (mapping_nslices(m, i) < 2) continue;
        int own = N->first[i + 1] - 1; /* the layer's own node; its glue counts too */
        const char *x = N->name[own];
        for (int d = 0; d < p->ndev; d++) {
            if (!on_dev(m, i, d)) continue;
            for (int k = 0; k < N->n; k++)
                if (k != own && on_dev(m, N->layer[k], d) && strstr(N->name[k], x))
                    warn_add(w, "AutoDiCE cannot read this mapping: it renames the split layer "
                             "%s wherever its name occurs in the names device %s lists, and so "
                             "also changes %s", x, p->dev[d].name, N->name[k]);
        }
    }
    for (int a = 0; a < N->n; a++)
        for (int b = a + 1; b < N->n; b++)
            if (!strcmp(N->name[a], N->name[b]))
                warn_add(w, "AutoDiCE cannot read this mapping: it turns '/' into '_' in node "
                         "names, which makes %s and %s the same name", N->dse[a], N->dse[b]);
    /* Tensors sent between devices: the input, the output, every split
     * layer's and every layer with a reader on another device. */
    if (!c_identifier(n->input_name))
        warn_add(w, "AutoDiCE's generated program will not compile: the input %s is not a C "
                 "identifier", n->input_name);
    for (int i = 0; i < n->n; i++) {
        const char *x = N->name[N->first[i + 1] - 1];
        int sent = i == n->n - 1 || mapping_nslices(m, i) > 1;
        for (int j = i + 1; j < n->n && !sent; j++)
            for (int q = 0; q < n->layers[j].nin && !sent; q++)
                if (n->layers[j].in[q] == i)
                    for (int a = 0; a < mapping_nslices(m, j) && !sent; a++)
                        sent = !on_dev(m, i, mapping_slices(m, j)[a].dev);
        if (sent && !c_identifier(x))
            warn_add(w, "AutoDiCE's generated program will not compile: tensor %s, sent between "
                     "devices, is not a C identifier", x);
    }
}

/* Why AutoDiCE's height (width) split would not compute layer i's row
 * (column) bands (returns 0 when it would).  Its horizontal_split (axis 1,
 * 2) is written for Conv alone (other kinds have no pads to read); it cuts
 * band k's input rows (columns, alike) [S*o0 - P, S*(o1-1) - P + K) with S,
 * P and K the layer's strides[0], pads[0] and kernel_shape[0] (the
 * height's, for both axes; no dilation), then convolves the band with the
 * layer's own pads: so a band equals the same rows of the whole
 * convolution only when the layer pads neither top nor bottom and is not
 * dilated in height, and the same columns only when it pads neither left
 * nor right nor top (P) and its stride and kernel are as wide as tall and
 * it is not dilated in width.  It copies the bias to every band without
 * looking whether there is one (the channel split looks).  It finds the
 * band's source among the graph's nodes, so the network input cannot be it
 * (its front end stops there). */
static int ad_band_why(const net *n, int i, int cut, char *why, size_t len)
{
    const net_layer *L = &n->layers[i];
    const net_attr *a = &L->a;
    if (L->kind != NET_CONV)
        snprintf(why, len, "is written for Conv layers alone, not %s", net_kind_name(L->kind));
    else if (cut == MAP_CUT_ROWS && (a->pt || a->pb))
        snprintf(why, len, "gives every band the layer's top and bottom padding (%d, %d), so "
                 "the bands of a padded convolution come out wrong", a->pt, a->pb);
    else if (cut == MAP_CUT_COLS && (a->pl || a->pr || a->pt))
        snprintf(why, len, "gives every band the layer's left and right padding (%d, %d) and "
                 "starts the first at minus its top padding (%d), so the bands of a padded "
                 "convolution come out wrong", a->pl, a->pr, a->pt);
    else if (cut == MAP_CUT_COLS && (a->sw != a->sh || a->kw != a->kh))
        snprintf(why, len, "reads the height's stride and kernel (%d, %d) for the width "
                 "(%d, %d)", a->sh, a->kh, a->sw, a->kw);
    else if (cut == MAP_CUT_ROWS ? a->dh != 1 : a->dw != 1)
        snprintf(why, len, "ignores the dilation in %s (%d)", cut == MAP_CUT_ROWS ? "height" : "width",
                 cut == MAP_CUT_ROWS ? a->dh : a->dw);
    else if (!a->bias)
        snprintf(why, len, "needs a bias (it copies the layer's bias to every band "
                 "unconditionally)");
    else if (L->in[0] == NET_INPUT)
        snprintf(why, len, "cannot cut the network input (its front end looks for a producing "
                 "node)");
    else
        return 0;
    return 1;
}

int mapping_autodice_texts(const mapping *m, const net *n, const platform *p, char **texts,
                           char *warn, char *err)
{
    texts[0] = texts[1] = texts[2] = NULL;
    warn[0] = 0;
    for (int i = 0; i < n->n; i++) {
        char why[256];
        if (m->cut[i] && ad_band_why(n, i, m->cut[i], why, sizeof why)) {
            base_seterr(warn, "AutoDiCE's files not written: layer %.200s is cut by %ss, and "
                        "AutoDiCE's %s split %s", n->layers[i].name, mapping_cut_unit(m->cut[i]),
                        m->cut[i] == MAP_CUT_ROWS ? "height" : "width", why);
            return 1;
        }
    }
    /* Its width split names band k's node "<layer>_splitw_<k>" (k: the
     * band's position) where its mapping.json renaming writes
     * "_splitw_<index of the device's key>" (HorizontalInplace; its height
     * split uses the key's index for both): band a must be on the a-th key,
     * and dse writes the keys of the used devices in platform order. */
    for (int i = 0; i < n->n; i++) {
        if (m->cut[i] != MAP_CUT_COLS) continue;
        const map_slice *s = mapping_slices(m, i);
        for (int a = 0; a < mapping_nslices(m, i); a++) {
            int key = 0; /* the index of s[a].dev's key among the used devices */
            for (int d = 0; d < s[a].dev; d++) {
                int used = 0;
                for (int j = 0; j < n->n && !used; j++) used = on_dev(m, j, d);
                key += used;
            }
            if (key != a) {
                base_seterr(warn, "AutoDiCE's files not written: layer %.200s is cut by columns, and "
                            "AutoDiCE's width split names band %d's node by its position but finds it "
                            "under the %d-th device of mapping.json (%s): its bands must lie on the "
                            "used devices in platform order", n->layers[i].name, a, key,
                            p->dev[s[a].dev].name);
                return 1;
            }
        }
    }
    ad_dev *A = ad_devices(p);
    ad_nodes N;
    if (!A || ad_nodes_build(&N, n)) {
        free(A);
        base_seterr(err, "out of memory");
        return -1;
    }
    for (int d = 0; d < p->ndev; d++) {
        int used = 0;
        for (int i = 0; i < n->n && !used; i++) used = on_dev(m, i, d);
        if (used && !A[d].key[0]) {
            base_seterr(warn, "AutoDiCE's files not written: %.450s", A[d].why);
            ad_nodes_free(&N);
            free(A);
            return 1;
        }
    }
    cJSON *jm = cJSON_CreateObject(), *jh = cJSON_CreateObject(), *jd = cJSON_CreateObject();
    /* mapping.json: used devices in platform order; a device's nodes in
     * graph order: a layer it computes (all or a slice of), with its glue. */
    for (int d = 0; d < p->ndev; d++) {
        cJSON *arr = NULL;
        for (int k = 0; k < N.n; k++)
            if (on_dev(m, N.layer[k], d)) {
                if (!arr) arr = cJSON_AddArrayToObject(jm, A[d].key);
                cJSON_AddItemToArray(arr, cJSON_CreateString(N.name[k]));
            }
    }
    for (int i = 0; i < m->nlayers; i++) {
        int k = mapping_nslices(m, i);
        if (k < 2) continue;
        const map_slice *s = mapping_slices(m, i);
        cJSON *e = cJSON_AddArrayToObject(jh, N.name[N.first[i + 1] - 1]);
        cJSON *ends = cJSON_CreateArray(), *devs = cJSON_CreateArray();
        for (int a = 0; a < k; a++) {
            /* lop: end channels; height, width: band sizes (AutoDiCE's split_points) */
            cJSON_AddItemToArray(ends, cJSON_CreateNumber(m->cut[i] ? s[a].nc : s[a].c0 + s[a].nc));
            cJSON_AddItemToArray(devs, cJSON_CreateString(A[s[a].dev].key));
        }
        cJSON_AddItemToArray(e, cJSON_CreateString(m->cut[i] == MAP_CUT_ROWS   ? "height"
                                                   : m->cut[i] == MAP_CUT_COLS ? "width"
                                                                               : "lop"));
        cJSON_AddItemToArray(e, ends);
        cJSON_AddItemToArray(e, devs);
    }
    /* autodice-devices.json: our device -> key for every device that has
     * one, and the hosts of mapping.json's keys (AutoDiCE's `platforms`). */
    cJSON_AddStringToObject(jd, "format", "dse-autodice-devices");
    cJSON_AddNumberToObject(jd, "version", 1);
    cJSON_AddStringToObject(jd, "platform", p->name);
    cJSON *dv = cJSON_AddObjectToObject(jd, "devices"), *hs = cJSON_AddArrayToObject(jd, "hosts");
    for (int d = 0; d < p->ndev; d++) {
        if (A[d].key[0]) cJSON_AddStringToObject(dv, p->dev[d].name, A[d].key);
        if (!cJSON_GetObjectItemCaseSensitive(jm, A[d].key)) continue;
        int seen = 0;
        for (int e = 0; e < d && !seen; e++)
            seen = !strcmp(A[e].host, A[d].host) && cJSON_GetObjectItemCaseSensitive(jm, A[e].key);
        if (!seen) cJSON_AddItemToArray(hs, cJSON_CreateString(A[d].host));
    }
    texts[0] = ju_print(jm, 1);
    texts[1] = ju_print(jh, 1);
    texts[2] = ju_print(jd, 1);
    cJSON_Delete(jm);
    cJSON_Delete(jh);
    cJSON_Delete(jd);
    int rc = 0;
    if (!texts[0] || !texts[1] || !texts[2]) {
        for (int k = 0; k < 3; k++) free(texts[k]), texts[k] = NULL;
        base_seterr(err, "out of memory");
        rc = -1;
    } else {
        ad_warn w = {{0}, 0};
        ad_hazards(m, n, p, &N, &w);
        if (w.count > 1)
            base_seterr(warn, "warning: %.400s (and %d more problem%s)", w.first,
                     w.count - 1, w.count > 2 ? "s" : "");
        else if (w.count)
            base_seterr(warn, "warning: %.480s", w.first);
    }
    ad_nodes_free(&N);
    free(A);
    return rc;
}

const char *const mapping_autodice_files[3] = {"mapping.json", "horizontal.json",
                                               "autodice-devices.json"};

/* dir/ours (when given) and AutoDiCE's three files, all or none; see
 * mapping_export_dir. */
static int export_files(const mapping *m, const net *n, const platform *p, const char *dir,
                        const char *ours, char *warn, char *err)
{
    char *texts[4] = {NULL, NULL, NULL, NULL}, *paths[4] = {NULL, NULL, NULL, NULL};
    const char *names[4] = {mapping_autodice_files[0], mapping_autodice_files[1],
                            mapping_autodice_files[2], ours};
    int nf = ours ? 4 : 3, rc = 0;
    char e[BASE_ERRLEN];
    int created = 0;
    if (ours && base_out_dir(dir, &created, err)) return -2;
    for (int k = 0; k < nf && rc == 0; k++) {
        size_t len = strlen(dir) + strlen(names[k]) + 2;
        if ((paths[k] = malloc(len))) snprintf(paths[k], len, "%s/%s", dir, names[k]);
        else rc = -1;
    }
    if (rc == 0 && ours && !(texts[3] = mapping_to_json(m, n, p))) rc = -1;
    if (rc < 0) snprintf(e, sizeof e, "out of memory");
    else rc = mapping_autodice_texts(m, n, p, texts, warn, e);
    if (rc < 0) {
        base_seterr(err, "%.200s: %.300s", dir, e);
    } else if (rc == 1) { /* ours only; never AutoDiCE files of another mapping */
        int w = ours ? ju_write_files_atomic(1, (const char *const *)paths + 3,
                                             (const char *const *)texts + 3, err) : 0;
        if (w) rc = w;
        else
            for (int k = 0; k < 3; k++) remove(paths[k]);
    } else {
        int w = ju_write_files_atomic(nf, (const char *const *)paths, (const char *const *)texts,
                                      err);
        if (w) rc = w;
    }
    for (int k = 0; k < 4; k++) free(texts[k]), free(paths[k]);
    if (rc < 0 && created) rmdir(dir); /* nothing left behind, not even the folder */
    return rc;
}

int mapping_export_autodice(const mapping *m, const net *n, const platform *p, const char *dir,
                            char *warn, char *err)
{
    return export_files(m, n, p, dir, NULL, warn, err);
}

int mapping_export_dir(const mapping *m, const net *n, const platform *p, const char *dir,
                       char *warn, char *err)
{
    return export_files(m, n, p, dir, "dse-mapping.json", warn, err);
}

/* ---- reading AutoDiCE's files ---- */

/* What a reader resolves names against: the platform's devices as AutoDiCE
 * sees them, the translation of autodice-devices.json, the net's nodes. */
typedef struct {
    const net *n;
    const platform *p;
    ad_dev *A;
    ad_nodes N;
    int ntr;
    char **tr_key;
    int *tr_dev;
} ad_reader;

static void reader_free(ad_reader *r)
{
    for (int k = 0; k < r->ntr; k++) free(r->tr_key[k]);
    free(r->tr_key);
    free(r->tr_dev);
    ad_nodes_free(&r->N);
    free(r->A);
}

/* autodice-devices.json: {"format": "dse-autodice-devices", "devices":
 * {"our device": "AutoDiCE key", ...}, ...}. */
static int read_translation(ad_reader *r, const char *path, char *err)
{
    char *text = ju_read_file(path, err);
    if (!text) return -1;
    cJSON *root = ju_parse(text, path, err);
    free(text);
    if (!root) return -1;
    const char *fmt = NULL;
    const cJSON *dv = cJSON_GetObjectItemCaseSensitive(root, "devices");
    int version = 1;
    if (!cJSON_IsObject(root) || ju_str(root, "format", &fmt, 0, path, err) || !fmt ||
        strcmp(fmt, "dse-autodice-devices")) {
        base_seterr(err, "%s: not a dse AutoDiCE device file (\"format\": "
                 "\"dse-autodice-devices\" missing)", path);
        goto fail;
    }
    if (ju_int(root, "version", &version, 0, path, err)) goto fail;
    if (version != 1) {
        base_seterr(err, "%s: version %d is not supported (only 1)", path, version);
        goto fail;
    }
    for (const cJSON *c = root->child; c; c = c->next)
        if (strcmp(c->string, "format") && strcmp(c->string, "version") &&
            strcmp(c->string, "platform") && strcmp(c->string, "devices") &&
            strcmp(c->string, "hosts") && strcmp(c->string, "note")) {
            base_seterr(err, "%s: unknown key \"%s\"", path, c->string);
            goto fail;
        }
    if (!cJSON_IsObject(dv)) {
        base_seterr(err, "%s: \"devices\" must be an object {device: AutoDiCE key}", path);
        goto fail;
    }
    int cnt = cJSON_GetArraySize(dv);
    r->tr_key = calloc((size_t)cnt + 1, sizeof *r->tr_key);
    r->tr_dev = calloc((size_t)cnt + 1, sizeof *r->tr_dev);
    if (!r->tr_key || !r->tr_dev) {
        base_seterr(err, "%s: out of memory", path);
        goto fail;
    }
    for (const cJSON *c = dv->child; c; c = c->next) {
        int d = platform_find(r->p, c->string);
        if (d < 0) {
            base_seterr(err, "%s: device \"%s\" is not in platform %s", path, c->string,
                     r->p->name);
            goto fail;
        }
        if (!cJSON_IsString(c)) {
            base_seterr(err, "%s: device \"%s\": its AutoDiCE key must be a string",
                     path, c->string);
            goto fail;
        }
        for (int k = 0; k < r->ntr; k++)
            if (!strcmp(r->tr_key[k], c->valuestring)) {
                base_seterr(err, "%s: key \"%s\" names two devices, %s and %s", path,
                         c->valuestring, r->p->dev[r->tr_dev[k]].name, c->string);
                goto fail;
            }
        if (!(r->tr_key[r->ntr] = base_strdup(c->valuestring))) {
            base_seterr(err, "%s: out of memory", path);
            goto fail;
        }
        r->tr_dev[r->ntr++] = d;
    }
    cJSON_Delete(root);
    return 0;
fail:
    cJSON_Delete(root);
    return -1;
}

/* Does the host part of a key name the host of device d? */
static int host_matches(const ad_reader *r, const char *host, int d)
{
    const char *board = r->p->dev[d].board;
    return !strcmp(host, r->A[d].host) || !strcmp(host, board) ||
           (platform_board_is_here(host) && platform_board_is_here(board));
}

/* The device a mapping.json or horizontal.json key names: one of ours by
 * name; else the device autodice-devices.json gives; else an AutoDiCE key
 * "<host>_cpu|arm<cores>" matched to the CPU device of that host whose cores
 * (counted as the writer counts them) hold those cores, or "<host>_gpu[N]" to
 * the host's (N-th) GPU.  -1 with err ("what: device "key": ..."). */
static int resolve_key(const ad_reader *r, const char *key, const char *what, char *err)
{
    const platform *p = r->p;
    int d = platform_find(p, key);
    if (d >= 0) return d;
    for (int k = 0; k < r->ntr; k++)
        if (!strcmp(r->tr_key[k], key)) return r->tr_dev[k];
    const char *us = strchr(key, '_');
    if (!us) {
        base_seterr(err, "%s: device \"%s\": not in platform %s, nor an AutoDiCE key "
                 "<host>_cpu<cores>, <host>_arm<cores> or <host>_gpu", what, key, p->name);
        return -1;
    }
    const char *res = us + 1;
    int gpu = !strncmp(res, "gpu", 3), cpu = !strncmp(res, "cpu", 3) || !strncmp(res, "arm", 3);
    const char *dig = res + 3;
    int ndig = (int)strspn(dig, "0123456789");
    if (us == key || strchr(res, '_') || (!gpu && !cpu) || dig[ndig] || (cpu && ndig == 0) ||
        (gpu && ndig > 2)) {
        base_seterr(err, "%s: device \"%s\": not in platform %s, nor an AutoDiCE key "
                 "(one \"_\" between the host and cpu or arm with one digit per core, or gpu)",
                 what, key, p->name);
        return -1;
    }
    char host[AD_HOSTLEN];
    snprintf(host, sizeof host, "%.*s", (int)(us - key), key);
    int any = 0;
    for (int e = 0; e < p->ndev; e++) any |= host_matches(r, host, e);
    if (!any) {
        base_seterr(err, "%s: device \"%s\": platform %s has no device on host %s", what,
                 key, p->name, host);
        return -1;
    }
    if (gpu) {
        int want = ndig ? atoi(dig) : 0, seen = 0;
        for (int e = 0; e < p->ndev; e++)
            if (p->dev[e].kind == PLAT_GPU && host_matches(r, host, e) && seen++ == want) return e;
        base_seterr(err, "%s: device \"%s\": host %s has %d GPU%s in platform %s", what,
                 key, host, seen, seen == 1 ? "" : "s", p->name);
        return -1;
    }
    d = -1;
    for (int c = 0; c < ndig; c++) {
        int core = dig[c] - '0', found = -1, total = 0;
        for (int q = 0; q < c; q++)
            if (dig[q] == dig[c]) {
                base_seterr(err, "%s: device \"%s\": core %d listed twice", what, key, core);
                return -1;
            }
        for (int e = 0; e < p->ndev; e++) {
            if (p->dev[e].kind != PLAT_CPU || !host_matches(r, host, e)) continue;
            total += p->dev[e].cores;
            if (core >= r->A[e].core0 && core < r->A[e].core0 + p->dev[e].cores) found = e;
        }
        if (found < 0) {
            base_seterr(err, "%s: device \"%s\": core %d, but host %s has %d CPU "
                     "core%s in platform %s", what, key, core, host, total, total == 1 ? "" : "s",
                     p->name);
            return -1;
        }
        if (d >= 0 && found != d) {
            base_seterr(err, "%s: device \"%s\": its cores belong to two devices of "
                     "platform %s, %s and %s", what, key, p->name, p->dev[d].name,
                     p->dev[found].name);
            return -1;
        }
        d = found;
    }
    return d;
}

/* A layer named in AutoDiCE's files: by its name in dse, or as AutoDiCE's
 * format_onnx() spells it; *glue = 1 for a glue node of dse's ONNX export
 * (which belongs to its layer).  -1 when unknown. */
static int resolve_layer(const ad_reader *r, const char *name, int *glue)
{
    *glue = 0;
    int i = net_find(r->n, name);
    if (i >= 0) return i;
    for (int k = 0; k < r->N.n; k++)
        if (!strcmp(r->N.name[k], name) || !strcmp(r->N.dse[k], name)) {
            *glue = r->N.glue[k];
            return r->N.layer[k];
        }
    return -1;
}

/* Parse horizontal.json into m's staged layout: for each split layer, its
 * slices in file order with their channel ranges. */
static int read_horizontal(const ad_reader *r, const char *path, mapping *m, int *hcnt, char *err)
{
    const net *n = r->n;
    const platform *p = r->p;
    char *text = ju_read_file(path, err);
    if (!text) return -1;
    cJSON *root = ju_parse(text, path, err);
    free(text);
    if (!root) return -1;
    if (!cJSON_IsObject(root)) {
        base_seterr(err, "%s: must be an object {layer: [\"lop\", [ends], [devices]]}",
                 path);
        goto fail;
    }
    for (const cJSON *c = root->child; c; c = c->next) {
        int glue, i = resolve_layer(r, c->string, &glue);
        if (i < 0 || glue) {
            base_seterr(err, "%s: layer \"%s\": not in network %s", path, c->string,
                     n->name);
            goto fail;
        }
        if (hcnt[i]) {
            base_seterr(err, "%s: layer \"%s\": listed twice", path, c->string);
            goto fail;
        }
        const cJSON *js = cJSON_GetArrayItem(c, 0), *je = cJSON_GetArrayItem(c, 1),
                    *jd = cJSON_GetArrayItem(c, 2);
        if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) != 3 || !cJSON_IsString(js) ||
            !cJSON_IsArray(je) || !cJSON_IsArray(jd)) {
            base_seterr(err, "%s: layer \"%s\": must be [\"lop\", [end channels], "
                     "[devices]]", path, c->string);
            goto fail;
        }
        int cut = !strcmp(js->valuestring, "height") ? MAP_CUT_ROWS
                  : !strcmp(js->valuestring, "width") ? MAP_CUT_COLS : MAP_CUT_CHANNELS;
        int rows = cut != MAP_CUT_CHANNELS;
        if (!rows && strcmp(js->valuestring, "lop")) {
            base_seterr(err, "%s: layer \"%s\": partitioning \"%s\" is not supported "
                     "(only \"lop\", output channels, \"height\", output rows, and "
                     "\"width\", output columns)", path, c->string, js->valuestring);
            goto fail;
        }
        const net_layer *L = &n->layers[i];
        const char *unit = mapping_cut_unit(cut);
        int total = mapping_cut_total(n, i, cut);
        int k = cJSON_GetArraySize(jd);
        if (k < 1 || k != cJSON_GetArraySize(je)) {
            base_seterr(err, "%s: layer \"%s\": %d %s for %d devices", path, c->string,
                        cJSON_GetArraySize(je), rows ? "band sizes" : "end channels", k);
            goto fail;
        }
        if (k > m->ndev) {
            base_seterr(err, "%s: layer \"%s\": more slices than the %d devices of "
                     "platform %s", path, c->string, m->ndev, p->name);
            goto fail;
        }
        if (rows && k > 1 && !mapping_cut_allowed(n, i, cut)) {
            base_seterr(err, "%s: layer \"%s\": a %s layer cannot be cut by %ss", path,
                        c->string, net_kind_name(L->kind), unit);
            goto fail;
        }
        if (!rows && k > 1 && !net_kind_splittable(L->kind)) {
            base_seterr(err, "%s: layer \"%s\": a %s layer cannot be split", path,
                     c->string, net_kind_name(L->kind));
            goto fail;
        }
        map_slice *s = m->slices + (size_t)i * m->ndev;
        const cJSON *e = je->child, *d = jd->child;
        int prev = 0;
        for (int a = 0; a < k; a++, e = e->next, d = d->next) {
            int end;
            if (int_value(e, &end) || !cJSON_IsString(d)) {
                base_seterr(err, "%s: layer \"%s\": %s must be integers and devices "
                            "strings", path, c->string, rows ? "band sizes" : "end channels");
                goto fail;
            }
            if (rows) { /* a height (width): the band's end is the rows so far plus it */
                if (end < 1 || end > total - prev) {
                    base_seterr(err, "%s: layer \"%s\": band %s %d of device %s is not "
                                "in 1..%d (the bands cover the layer's %d %ss)", path, c->string,
                                cut == MAP_CUT_ROWS ? "height" : "width", end, d->valuestring,
                                total - prev, total, unit);
                    goto fail;
                }
                end += prev;
            }
            char e2[BASE_ERRLEN];
            int dev = resolve_key(r, d->valuestring, path, e2);
            if (dev < 0) {
                base_seterr(err, "%.200s (layer \"%s\")", e2, c->string);
                goto fail;
            }
            if (a == k - 1) {
                if (end != total && (rows || end != AD_LEGACY_REST)) {
                    base_seterr(err, "%s: layer \"%s\": the bands must end at the layer's "
                                "%s count %d, not %d", path, c->string, unit, total, end);
                    goto fail;
                }
                end = total;
            }
            if (end <= prev || end > total) {
                base_seterr(err, "%s: layer \"%s\": end %s %d of device %s is not in %d..%d "
                            "(ends must increase within the layer's %d %ss)", path, c->string,
                            unit, end, d->valuestring, prev + 1, total, total, unit);
                goto fail;
            }
            for (int b = 0; b < a; b++)
                if (s[b].dev == dev) {
                    base_seterr(err, "%s: layer \"%s\": device %s listed twice", path,
                             c->string, d->valuestring);
                    goto fail;
                }
            s[a] = (map_slice){dev, prev, end - prev};
            prev = end;
        }
        hcnt[i] = k;
        m->cut[i] = k > 1 ? cut : MAP_CUT_CHANNELS;
        if (rows && k == 1) /* one band of everything: the whole layer, all its channels */
            s[0] = (map_slice){s[0].dev, 0, L->out.c};
    }
    cJSON_Delete(root);
    return 0;
fail:
    cJSON_Delete(root);
    return -1;
}

mapping *mapping_import_autodice(const char *mapping_path, const char *horizontal_path,
                                 const char *devices_path, const net *n, const platform *p,
                                 char *err)
{
    mapping *m = mapping_new(n->n, p->ndev);
    int *hcnt = calloc((size_t)n->n + 1, sizeof *hcnt); /* slices per layer from horizontal */
    int *lcnt = calloc((size_t)n->n + 1, sizeof *lcnt); /* devices listing it in mapping.json */
    int *ldev = calloc((size_t)n->n + 1, sizeof *ldev); /* the first such device */
    unsigned char *listed = calloc((size_t)n->n * p->ndev + 1, 1);
    const char **keyof = calloc((size_t)p->ndev + 1, sizeof *keyof); /* key naming device d */
    ad_reader r = {n, p, ad_devices(p), {0}, 0, NULL, NULL};
    cJSON *root = NULL;
    int nodes_ok = r.A && ad_nodes_build(&r.N, n) == 0;
    if (!m || !hcnt || !lcnt || !ldev || !listed || !keyof || !nodes_ok) {
        base_seterr(err, "%s: out of memory", mapping_path);
        goto fail;
    }
    if (devices_path && read_translation(&r, devices_path, err)) goto fail;
    if (horizontal_path && read_horizontal(&r, horizontal_path, m, hcnt, err)) goto fail;
    char *text = ju_read_file(mapping_path, err);
    if (!text) goto fail;
    root = ju_parse(text, mapping_path, err);
    free(text);
    if (!root) goto fail;
    if (!cJSON_IsObject(root)) {
        base_seterr(err, "%s: must be an object {device: [layer, ...]}", mapping_path);
        goto fail;
    }
    for (const cJSON *c = root->child; c; c = c->next) {
        int d = resolve_key(&r, c->string, mapping_path, err);
        if (d < 0) goto fail;
        if (keyof[d]) {
            base_seterr(err, "%s: devices \"%s\" and \"%s\" are both device %s of "
                     "platform %s", mapping_path, keyof[d], c->string, p->dev[d].name, p->name);
            goto fail;
        }
        keyof[d] = c->string;
        if (!cJSON_IsArray(c)) {
            base_seterr(err, "%s: device \"%s\": must be a list of layer names",
                     mapping_path, c->string);
            goto fail;
        }
        for (const cJSON *e = c->child; e; e = e->next) {
            int glue, i = cJSON_IsString(e) ? resolve_layer(&r, e->valuestring, &glue) : -1;
            if (i < 0) {
                base_seterr(err, "%s: device \"%s\": layer \"%s\" is not in network %s",
                         mapping_path, c->string, cJSON_IsString(e) ? e->valuestring : "?",
                         n->name);
                goto fail;
            }
            if (glue) continue; /* dse's glue node: part of its layer */
            if (!platform_supports(p, d, n->layers[i].kind)) {
                base_seterr(err, "%s: device \"%s\": layer \"%s\": the device does not "
                         "support %s layers (its \"supports\" list)", mapping_path, c->string,
                         e->valuestring, net_kind_name(n->layers[i].kind));
                goto fail;
            }
            if (listed[(size_t)i * p->ndev + d]++) {
                base_seterr(err, "%s: device \"%s\": layer \"%s\" listed twice",
                         mapping_path, c->string, e->valuestring);
                goto fail;
            }
            if (lcnt[i]++ == 0) ldev[i] = d;
        }
    }
    for (int i = 0; i < n->n; i++) {
        const char *name = n->layers[i].name;
        map_slice *s = m->slices + (size_t)i * m->ndev;
        if (lcnt[i] == 0) {
            base_seterr(err, "%s: layer \"%s\": missing (no device lists it)",
                     mapping_path, name);
            goto fail;
        }
        if (hcnt[i] == 0) {
            if (lcnt[i] > 1) {
                base_seterr(err, "%s: layer \"%s\": listed under %d devices but %s has "
                         "no split for it", mapping_path, name, lcnt[i],
                         horizontal_path ? horizontal_path : "horizontal.json");
                goto fail;
            }
            s[0] = (map_slice){ldev[i], 0, n->layers[i].out.c};
            hcnt[i] = 1;
            continue;
        }
        /* The split's devices and the devices listing the layer must agree. */
        for (int a = 0; a < hcnt[i]; a++)
            if (!listed[(size_t)i * p->ndev + s[a].dev]) {
                base_seterr(err, "%s: layer \"%s\": device %s computes a slice in %s but "
                         "does not list the layer", mapping_path, name, p->dev[s[a].dev].name,
                         horizontal_path);
                goto fail;
            }
        if (lcnt[i] != hcnt[i]) {
            base_seterr(err, "%s: layer \"%s\": listed under %d devices but split into "
                     "%d slices in %s", mapping_path, name, lcnt[i], hcnt[i], horizontal_path);
            goto fail;
        }
    }
    compact(m, hcnt);
    char e2[BASE_ERRLEN];
    if (mapping_validate(m, n, e2)) {
        base_seterr(err, "%s: %.400s", mapping_path, e2);
        goto fail;
    }
    cJSON_Delete(root);
    free(hcnt), free(lcnt), free(ldev), free(listed), free(keyof);
    reader_free(&r);
    return m;
fail:
    cJSON_Delete(root);
    free(hcnt), free(lcnt), free(ldev), free(listed), free(keyof);
    reader_free(&r);
    mapping_free(m);
    return NULL;
}

/* A folder given as a mapping: AutoDiCE's mapping.json, with horizontal.json
 * and autodice-devices.json when present. */
static mapping *load_autodice_dir(const char *dir, const net *n, const platform *p, char *err)
{
    char *paths[3];
    int have[3];
    mapping *m = NULL;
    for (int k = 0; k < 3; k++) {
        size_t len = strlen(dir) + strlen(mapping_autodice_files[k]) + 2;
        paths[k] = malloc(len);
        if (paths[k]) snprintf(paths[k], len, "%s/%s", dir, mapping_autodice_files[k]);
        have[k] = paths[k] && access(paths[k], F_OK) == 0;
    }
    if (!paths[0] || !paths[1] || !paths[2]) base_seterr(err, "%s: out of memory", dir);
    else if (!have[0])
        base_seterr(err, "%s: a folder given as a mapping must hold AutoDiCE's "
                 "mapping.json (and horizontal.json for split layers): no mapping.json", dir);
    else m = mapping_import_autodice(paths[0], have[1] ? paths[1] : NULL, have[2] ? paths[2] : NULL,
                                     n, p, err);
    for (int k = 0; k < 3; k++) free(paths[k]);
    return m;
}

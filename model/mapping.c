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

#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (!m->first || !m->slices) {
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
    free(m);
}

void mapping_copy(mapping *dst, const mapping *src)
{
    memcpy(dst->first, src->first, ((size_t)src->nlayers + 1) * sizeof *dst->first);
    memcpy(dst->slices, src->slices, (size_t)src->first[src->nlayers] * sizeof *dst->slices);
}

void mapping_set_single(mapping *m, const net *n, int dev)
{
    for (int i = 0; i < m->nlayers; i++) {
        m->first[i] = i;
        m->slices[i] = (map_slice){dev, 0, n->layers[i].out.c};
    }
    m->first[m->nlayers] = m->nlayers;
}

int mapping_equal(const mapping *a, const mapping *b)
{
    if (a->nlayers != b->nlayers || a->ndev != b->ndev) return 0;
    if (memcmp(a->first, b->first, ((size_t)a->nlayers + 1) * sizeof *a->first)) return 0;
    for (int k = 0; k < a->first[a->nlayers]; k++)
        if (a->slices[k].dev != b->slices[k].dev || a->slices[k].c0 != b->slices[k].c0 ||
            a->slices[k].nc != b->slices[k].nc)
            return 0;
    return 1;
}

int mapping_validate(const mapping *m, const net *n, char *err)
{
    if (m->nlayers != n->n) {
        snprintf(err, NET_ERRLEN, "mapping has %d layers but network %s has %d", m->nlayers,
                 n->name, n->n);
        return -1;
    }
    if (m->first[0] != 0) {
        snprintf(err, NET_ERRLEN, "mapping: slice table does not start at 0");
        return -1;
    }
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        int k = m->first[i + 1] - m->first[i];
        if (k < 1 || m->first[i + 1] > m->nlayers * m->ndev) {
            snprintf(err, NET_ERRLEN, "layer \"%s\": %s", L->name,
                     k < 1 ? "no device computes it" : "slice table overflows");
            return -1;
        }
        if (k > 1 && !net_kind_splittable(L->kind)) {
            snprintf(err, NET_ERRLEN, "layer \"%s\": a %s layer cannot be split but has %d slices",
                     L->name, net_kind_name(L->kind), k);
            return -1;
        }
        const map_slice *s = m->slices + m->first[i];
        int next = 0;
        for (int a = 0; a < k; a++) {
            if (s[a].dev < 0 || s[a].dev >= m->ndev) {
                snprintf(err, NET_ERRLEN, "layer \"%s\": slice %d names device %d, not in 0..%d",
                         L->name, a, s[a].dev, m->ndev - 1);
                return -1;
            }
            if (s[a].nc < 1) {
                snprintf(err, NET_ERRLEN, "layer \"%s\": slice %d on device %d is empty", L->name,
                         a, s[a].dev);
                return -1;
            }
            if (s[a].c0 != next) {
                snprintf(err, NET_ERRLEN, "layer \"%s\": channels %s at %d (slice %d starts at %d)",
                         L->name, s[a].c0 > next ? "missing" : "computed twice", next, a,
                         s[a].c0);
                return -1;
            }
            if ((int64_t)s[a].c0 + s[a].nc > L->out.c) {
                snprintf(err, NET_ERRLEN, "layer \"%s\": slice %d ends at channel %lld, beyond "
                         "its %d channels", L->name, a, (long long)s[a].c0 + s[a].nc, L->out.c);
                return -1;
            }
            next = s[a].c0 + s[a].nc;
            for (int b = 0; b < a; b++)
                if (s[b].dev == s[a].dev) {
                    snprintf(err, NET_ERRLEN, "layer \"%s\": device %d holds two slices", L->name,
                             s[a].dev);
                    return -1;
                }
        }
        if (next != L->out.c) {
            snprintf(err, NET_ERRLEN, "layer \"%s\": channels %d..%d are not computed", L->name,
                     next, L->out.c - 1);
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
static int check_staged(const net *n, int i, const map_slice *s, int k, const platform *p,
                        const char *what, char *err)
{
    const net_layer *L = &n->layers[i];
    if (k == 0) {
        snprintf(err, NET_ERRLEN, "%s: layer \"%s\": missing (every layer must be mapped)", what,
                 L->name);
        return -1;
    }
    if (k > 1 && !net_kind_splittable(L->kind)) {
        snprintf(err, NET_ERRLEN, "%s: layer \"%s\": a %s layer cannot be split, but %d devices "
                 "compute it", what, L->name, net_kind_name(L->kind), k);
        return -1;
    }
    int next = 0;
    for (int a = 0; a < k; a++) {
        if (s[a].c0 > next) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": channels %d..%d are not computed by any "
                     "device", what, L->name, next, s[a].c0 - 1);
            return -1;
        }
        if (s[a].c0 < next) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": channels %d..%d are computed twice "
                     "(device %s overlaps the previous slice)", what, L->name, s[a].c0, next - 1,
                     p->dev[s[a].dev].name);
            return -1;
        }
        next = s[a].c0 + s[a].nc;
        for (int b = 0; b < a; b++)
            if (s[b].dev == s[a].dev) {
                snprintf(err, NET_ERRLEN, "%s: layer \"%s\": device %s holds two slices (merge "
                         "them into one range)", what, L->name, p->dev[s[a].dev].name);
                return -1;
            }
    }
    if (next != L->out.c) {
        snprintf(err, NET_ERRLEN, "%s: layer \"%s\": channels %d..%d are not computed by any "
                 "device", what, L->name, next, L->out.c - 1);
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
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int)v->valuedouble) return -1;
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
        snprintf(err, NET_ERRLEN, "%s: not a dse mapping file (\"format\": \"dse-mapping\" "
                 "missing)", what);
        goto fail;
    }
    int version = 1;
    if (ju_int(root, "version", &version, 0, what, err)) goto fail;
    if (version != 1) {
        snprintf(err, NET_ERRLEN, "%s: mapping format version %d is not supported (only 1)", what,
                 version);
        goto fail;
    }
    for (const cJSON *c = root->child; c; c = c->next)
        if (strcmp(c->string, "format") && strcmp(c->string, "version") &&
            strcmp(c->string, "network") && strcmp(c->string, "platform") &&
            strcmp(c->string, "layers") && strcmp(c->string, "note")) {
            snprintf(err, NET_ERRLEN, "%s: unknown key \"%s\"", what, c->string);
            goto fail;
        }
    const cJSON *jl = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (!cJSON_IsObject(jl)) {
        snprintf(err, NET_ERRLEN, "%s: \"layers\" must be an object {layer name: slices}", what);
        goto fail;
    }
    m = mapping_new(n->n, p->ndev);
    cnt = calloc((size_t)n->n + 1, sizeof *cnt);
    seen = calloc((size_t)n->n + 1, sizeof *seen);
    if (!m || !cnt || !seen) {
        snprintf(err, NET_ERRLEN, "%s: out of memory", what);
        goto fail;
    }
    for (const cJSON *c = jl->child; c; c = c->next) {
        int i = net_find(n, c->string);
        if (i < 0) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": not in network %s", what, c->string,
                     n->name);
            goto fail;
        }
        if (seen[i]++) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": listed twice", what, c->string);
            goto fail;
        }
        map_slice *s = m->slices + (size_t)i * m->ndev;
        int C = n->layers[i].out.c;
        if (cJSON_IsString(c)) {
            int d = platform_find(p, c->valuestring);
            if (d < 0) {
                snprintf(err, NET_ERRLEN, "%s: layer \"%s\": device \"%s\" is not in platform %s",
                         what, c->string, c->valuestring, p->name);
                goto fail;
            }
            s[0] = (map_slice){d, 0, C};
            cnt[i] = 1;
            continue;
        }
        if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) < 1) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": must be a device name or a non-empty list "
                     "of [device, first_channel, channel_count]", what, c->string);
            goto fail;
        }
        for (const cJSON *e = c->child; e; e = e->next) {
            const cJSON *jd = cJSON_GetArrayItem(e, 0);
            int c0, nc;
            if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 3 || !cJSON_IsString(jd) ||
                int_value(cJSON_GetArrayItem(e, 1), &c0) || int_value(cJSON_GetArrayItem(e, 2), &nc)) {
                snprintf(err, NET_ERRLEN, "%s: layer \"%s\": each slice must be [device, "
                         "first_channel, channel_count]", what, c->string);
                goto fail;
            }
            int d = platform_find(p, jd->valuestring);
            if (d < 0) {
                snprintf(err, NET_ERRLEN, "%s: layer \"%s\": device \"%s\" is not in platform %s",
                         what, c->string, jd->valuestring, p->name);
                goto fail;
            }
            if (c0 < 0 || nc < 1 || (int64_t)c0 + nc > C) {
                snprintf(err, NET_ERRLEN, "%s: layer \"%s\": device %s: channels [%d, %d+%d) are "
                         "outside the layer's %d output channels", what, c->string,
                         jd->valuestring, c0, c0, nc, C);
                goto fail;
            }
            if (cnt[i] == m->ndev) {
                snprintf(err, NET_ERRLEN, "%s: layer \"%s\": more slices than the %d devices of "
                         "platform %s", what, c->string, m->ndev, p->name);
                goto fail;
            }
            s[cnt[i]++] = (map_slice){d, c0, nc};
        }
    }
    for (int i = 0; i < n->n; i++) {
        map_slice *s = m->slices + (size_t)i * m->ndev;
        sort_by_c0(s, cnt[i]);
        if (check_staged(n, i, s, cnt[i], p, what, err)) goto fail;
    }
    compact(m, cnt);
    free(cnt);
    free(seen);
    cJSON_Delete(root);
    char e2[NET_ERRLEN];
    if (mapping_validate(m, n, e2)) { /* cannot happen after the checks above */
        snprintf(err, NET_ERRLEN, "%s: %.400s", what, e2);
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

mapping *mapping_load(const char *path, const net *n, const platform *p, char *err)
{
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
        cJSON *arr = cJSON_AddArrayToObject(jl, n->layers[i].name);
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
        snprintf(err, NET_ERRLEN, "%s: out of memory", path);
        return -1;
    }
    int rc = ju_write_file_atomic(path, txt, err);
    free(txt);
    return rc;
}

/* ---- AutoDiCE ---- */

#define AUTODICE_REST 65535 /* AutoDiCE's "up to the last channel" marker */

int mapping_export_autodice(const mapping *m, const net *n, const platform *p,
                            const char *mapping_path, const char *horizontal_path, char *err)
{
    cJSON *jm = cJSON_CreateObject(), *jh = cJSON_CreateObject();
    for (int d = 0; d < p->ndev; d++) {
        cJSON *arr = NULL;
        for (int i = 0; i < m->nlayers; i++) {
            const map_slice *s = mapping_slices(m, i);
            for (int a = 0; a < mapping_nslices(m, i); a++)
                if (s[a].dev == d) {
                    if (!arr) arr = cJSON_AddArrayToObject(jm, p->dev[d].name);
                    cJSON_AddItemToArray(arr, cJSON_CreateString(n->layers[i].name));
                }
        }
    }
    for (int i = 0; i < m->nlayers; i++) {
        int k = mapping_nslices(m, i);
        if (k < 2) continue;
        const map_slice *s = mapping_slices(m, i);
        cJSON *e = cJSON_AddArrayToObject(jh, n->layers[i].name);
        cJSON *ends = cJSON_CreateArray(), *devs = cJSON_CreateArray();
        for (int a = 0; a < k; a++) {
            cJSON_AddItemToArray(ends, cJSON_CreateNumber(a < k - 1 ? s[a].c0 + s[a].nc
                                                                    : AUTODICE_REST));
            cJSON_AddItemToArray(devs, cJSON_CreateString(p->dev[s[a].dev].name));
        }
        cJSON_AddItemToArray(e, cJSON_CreateString("lop"));
        cJSON_AddItemToArray(e, ends);
        cJSON_AddItemToArray(e, devs);
    }
    char *tm = ju_print(jm, 1), *th = ju_print(jh, 1);
    cJSON_Delete(jm);
    cJSON_Delete(jh);
    int rc = -1;
    if (!tm || !th) snprintf(err, NET_ERRLEN, "%s: out of memory", mapping_path);
    else if (ju_write_file_atomic(mapping_path, tm, err) == 0) {
        rc = ju_write_file_atomic(horizontal_path, th, err);
        /* Never leave a mapping.json without its horizontal.json. */
        if (rc) remove(mapping_path);
    }
    free(tm);
    free(th);
    return rc;
}

/* Parse horizontal.json into m's staged layout: for each split layer, its
 * slices in file order with their channel ranges. */
static int read_horizontal(const char *path, const net *n, const platform *p, mapping *m,
                           int *hcnt, char *err)
{
    char *text = ju_read_file(path, err);
    if (!text) return -1;
    cJSON *root = ju_parse(text, path, err);
    free(text);
    if (!root) return -1;
    if (!cJSON_IsObject(root)) {
        snprintf(err, NET_ERRLEN, "%s: must be an object {layer: [\"lop\", [ends], [devices]]}",
                 path);
        goto fail;
    }
    for (const cJSON *c = root->child; c; c = c->next) {
        int i = net_find(n, c->string);
        if (i < 0) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": not in network %s", path, c->string,
                     n->name);
            goto fail;
        }
        if (hcnt[i]) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": listed twice", path, c->string);
            goto fail;
        }
        const cJSON *js = cJSON_GetArrayItem(c, 0), *je = cJSON_GetArrayItem(c, 1),
                    *jd = cJSON_GetArrayItem(c, 2);
        if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) != 3 || !cJSON_IsString(js) ||
            !cJSON_IsArray(je) || !cJSON_IsArray(jd)) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": must be [\"lop\", [end channels], "
                     "[devices]]", path, c->string);
            goto fail;
        }
        if (strcmp(js->valuestring, "lop")) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": partitioning \"%s\" is not supported "
                     "(only \"lop\", output channels)", path, c->string, js->valuestring);
            goto fail;
        }
        const net_layer *L = &n->layers[i];
        int k = cJSON_GetArraySize(jd);
        if (k < 1 || k != cJSON_GetArraySize(je)) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": %d end channels for %d devices", path,
                     c->string, cJSON_GetArraySize(je), k);
            goto fail;
        }
        if (k > m->ndev) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": more slices than the %d devices of "
                     "platform %s", path, c->string, m->ndev, p->name);
            goto fail;
        }
        if (k > 1 && !net_kind_splittable(L->kind)) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": a %s layer cannot be split", path,
                     c->string, net_kind_name(L->kind));
            goto fail;
        }
        map_slice *s = m->slices + (size_t)i * m->ndev;
        const cJSON *e = je->child, *d = jd->child;
        int prev = 0;
        for (int a = 0; a < k; a++, e = e->next, d = d->next) {
            int end;
            if (int_value(e, &end) || !cJSON_IsString(d)) {
                snprintf(err, NET_ERRLEN, "%s: layer \"%s\": end channels must be integers and "
                         "devices strings", path, c->string);
                goto fail;
            }
            int dev = platform_find(p, d->valuestring);
            if (dev < 0) {
                snprintf(err, NET_ERRLEN, "%s: layer \"%s\": device \"%s\" is not in platform %s",
                         path, c->string, d->valuestring, p->name);
                goto fail;
            }
            if (a == k - 1) {
                if (end != AUTODICE_REST && end != L->out.c) {
                    snprintf(err, NET_ERRLEN, "%s: layer \"%s\": the last end channel must be %d "
                             "(or %d, the layer's channel count), not %d", path, c->string,
                             AUTODICE_REST, L->out.c, end);
                    goto fail;
                }
                end = L->out.c;
            }
            if (end <= prev || end > L->out.c) {
                snprintf(err, NET_ERRLEN, "%s: layer \"%s\": end channel %d of device %s is not "
                         "in %d..%d (ends must increase within the layer's %d channels)", path,
                         c->string, end, d->valuestring, prev + 1, L->out.c, L->out.c);
                goto fail;
            }
            for (int b = 0; b < a; b++)
                if (s[b].dev == dev) {
                    snprintf(err, NET_ERRLEN, "%s: layer \"%s\": device %s listed twice", path,
                             c->string, d->valuestring);
                    goto fail;
                }
            s[a] = (map_slice){dev, prev, end - prev};
            prev = end;
        }
        hcnt[i] = k;
    }
    cJSON_Delete(root);
    return 0;
fail:
    cJSON_Delete(root);
    return -1;
}

mapping *mapping_import_autodice(const char *mapping_path, const char *horizontal_path,
                                 const net *n, const platform *p, char *err)
{
    mapping *m = mapping_new(n->n, p->ndev);
    int *hcnt = calloc((size_t)n->n + 1, sizeof *hcnt); /* slices per layer from horizontal */
    int *lcnt = calloc((size_t)n->n + 1, sizeof *lcnt); /* devices listing it in mapping.json */
    int *ldev = calloc((size_t)n->n + 1, sizeof *ldev); /* the first such device */
    unsigned char *listed = calloc((size_t)n->n * p->ndev + 1, 1);
    cJSON *root = NULL;
    if (!m || !hcnt || !lcnt || !ldev || !listed) {
        snprintf(err, NET_ERRLEN, "%s: out of memory", mapping_path);
        goto fail;
    }
    if (horizontal_path && read_horizontal(horizontal_path, n, p, m, hcnt, err)) goto fail;
    char *text = ju_read_file(mapping_path, err);
    if (!text) goto fail;
    root = ju_parse(text, mapping_path, err);
    free(text);
    if (!root) goto fail;
    if (!cJSON_IsObject(root)) {
        snprintf(err, NET_ERRLEN, "%s: must be an object {device: [layer, ...]}", mapping_path);
        goto fail;
    }
    for (const cJSON *c = root->child; c; c = c->next) {
        int d = platform_find(p, c->string);
        if (d < 0) {
            snprintf(err, NET_ERRLEN, "%s: device \"%s\": not in platform %s", mapping_path,
                     c->string, p->name);
            goto fail;
        }
        if (!cJSON_IsArray(c)) {
            snprintf(err, NET_ERRLEN, "%s: device \"%s\": must be a list of layer names",
                     mapping_path, c->string);
            goto fail;
        }
        for (const cJSON *e = c->child; e; e = e->next) {
            int i = cJSON_IsString(e) ? net_find(n, e->valuestring) : -1;
            if (i < 0) {
                snprintf(err, NET_ERRLEN, "%s: device \"%s\": layer \"%s\" is not in network %s",
                         mapping_path, c->string, cJSON_IsString(e) ? e->valuestring : "?",
                         n->name);
                goto fail;
            }
            if (listed[(size_t)i * p->ndev + d]++) {
                snprintf(err, NET_ERRLEN, "%s: device \"%s\": layer \"%s\" listed twice",
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
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": missing (no device lists it)",
                     mapping_path, name);
            goto fail;
        }
        if (hcnt[i] == 0) {
            if (lcnt[i] > 1) {
                snprintf(err, NET_ERRLEN, "%s: layer \"%s\": listed under %d devices but %s has "
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
                snprintf(err, NET_ERRLEN, "%s: layer \"%s\": device %s computes a slice in %s but "
                         "does not list the layer", mapping_path, name, p->dev[s[a].dev].name,
                         horizontal_path);
                goto fail;
            }
        if (lcnt[i] != hcnt[i]) {
            snprintf(err, NET_ERRLEN, "%s: layer \"%s\": listed under %d devices but split into "
                     "%d slices in %s", mapping_path, name, lcnt[i], hcnt[i], horizontal_path);
            goto fail;
        }
    }
    compact(m, hcnt);
    char e2[NET_ERRLEN];
    if (mapping_validate(m, n, e2)) {
        snprintf(err, NET_ERRLEN, "%s: %.400s", mapping_path, e2);
        goto fail;
    }
    cJSON_Delete(root);
    free(hcnt);
    free(lcnt);
    free(ldev);
    free(listed);
    return m;
fail:
    cJSON_Delete(root);
    free(hcnt);
    free(lcnt);
    free(ldev);
    free(listed);
    mapping_free(m);
    return NULL;
}

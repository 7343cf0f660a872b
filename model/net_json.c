/* net_json.c -- the network JSON format (docs/network-format.md).
 *
 * Reading is strict: every key is known, every value has the right type,
 * and a layer's "shape", when present, must equal the inferred one.  Writing
 * emits only the attributes a kind uses, so read(write(n)) == n exactly.
 */
#include "net.h"
#include "jsonutil.h"
#include "onnx.h"
#include "weights.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The common keys, then the kind's own (kinds.c). */
static int key_allowed(net_kind k, const char *key)
{
    static const char *common[] = {"name", "kind", "inputs", "shape", NULL};
    for (int i = 0; common[i]; i++)
        if (strcmp(key, common[i]) == 0) return 1;
    for (const net_akey *q = net_kind_info(k)->keys; q->key; q++)
        if (strcmp(key, q->key) == 0) return 1;
    return 0;
}

/* The kind's attributes into a (defaults already there); 0 or -1 + err. */
static int read_attrs(const cJSON *jl, net_kind kind, net_attr *a, const char *ctx, char *err)
{
    const net_akey *keys = net_kind_info(kind)->keys;
    for (const net_akey *q = keys; q->key; q++) {
        void *f = (char *)a + q->off;
        int rc = 0;
        switch (q->type) {
        case NET_A_INT:
            rc = ju_int(jl, q->key, f, q->required, ctx, err);
            break;
        case NET_A_BOOL:
            rc = ju_bool(jl, q->key, f, ctx, err);
            break;
        case NET_A_NUM:
            rc = q->min <= -1e300 ? ju_num(jl, q->key, f, ctx, err)
                                  : ju_num_req(jl, q->key, f, q->required, q->min, ctx, err);
            break;
        case NET_A_INTS:
            /* Absent: its default, or (pool stride) a copy of another key. */
            if (q->dflt_from >= 0 && !cJSON_GetObjectItemCaseSensitive(jl, q->key))
                memcpy(f, (char *)a + keys[q->dflt_from].off, (size_t)q->count * sizeof(int));
            rc = ju_ints(jl, q->key, q->count, f, q->required, (int)q->min, ctx, err);
            break;
        }
        if (rc) return -1;
    }
    return 0;
}

/* The kind's attributes into o, every one (defaults included) except those
 * written only when set, which are left out while they hold the kind's
 * default (files written before such a key existed stay byte for byte). */
static void write_attrs(cJSON *o, net_kind kind, const net_attr *a)
{
    net_attr d = net_attr_default(kind);
    for (const net_akey *q = net_kind_info(kind)->keys; q->key; q++) {
        const void *f = (const char *)a + q->off;
        const void *df = (const char *)&d + q->off;
        if (q->write_if_set &&
            (q->type == NET_A_NUM ? *(const double *)f == *(const double *)df
                                  : !memcmp(f, df, (size_t)(q->type == NET_A_INTS ? q->count : 1) * sizeof(int))))
            continue;
        switch (q->type) {
        case NET_A_INT:
            cJSON_AddNumberToObject(o, q->key, *(const int *)f);
            break;
        case NET_A_BOOL:
            cJSON_AddBoolToObject(o, q->key, *(const int *)f);
            break;
        case NET_A_NUM:
            cJSON_AddNumberToObject(o, q->key, *(const double *)f);
            break;
        case NET_A_INTS:
            cJSON_AddItemToObject(o, q->key, cJSON_CreateIntArray(f, q->count));
            break;
        }
    }
}

static int read_layer(net *n, const cJSON *jl, int idx, const char *what, char *err)
{
    char ctx[300];
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(jl, "name");
    if (!cJSON_IsObject(jl)) {
        base_seterr(err, "%s: layers[%d] is not an object", what, idx);
        return -1;
    }
    if (!cJSON_IsString(jn) || !jn->valuestring[0] || base_has_control(jn->valuestring)) {
        base_seterr(err, "%s: layers[%d]: \"name\" must be a non-empty string "
                 "without control characters", what, idx);
        return -1;
    }
    snprintf(ctx, sizeof ctx, "%s: layer %s", what, jn->valuestring);
    const cJSON *jk = cJSON_GetObjectItemCaseSensitive(jl, "kind");
    net_kind kind;
    if (!cJSON_IsString(jk)) {
        base_seterr(err, "%s: \"kind\" must be a string", ctx);
        return -1;
    }
    if (net_kind_parse(jk->valuestring, &kind)) {
        base_seterr(err, "%s: unknown layer kind \"%s\"", ctx, jk->valuestring);
        return -1;
    }
    for (const cJSON *c = jl->child; c; c = c->next)
        if (!key_allowed(kind, c->string)) {
            base_seterr(err, "%s: unknown attribute \"%s\" for %s", ctx, c->string,
                     jk->valuestring);
            return -1;
        }
    const cJSON *ji = cJSON_GetObjectItemCaseSensitive(jl, "inputs");
    if (!cJSON_IsArray(ji) || cJSON_GetArraySize(ji) < 1) {
        base_seterr(err, "%s: \"inputs\" must be a non-empty array of names", ctx);
        return -1;
    }
    int nin = cJSON_GetArraySize(ji);
    const char **names = malloc((size_t)nin * sizeof *names);
    int k = 0;
    for (const cJSON *c = ji->child; c; c = c->next, k++) {
        if (!cJSON_IsString(c)) {
            free(names);
            base_seterr(err, "%s: \"inputs\"[%d] is not a string", ctx, k);
            return -1;
        }
        names[k] = c->valuestring;
    }
    net_attr a = net_attr_default(kind);
    int ok = read_attrs(jl, kind, &a, ctx, err);
    if (!ok && net_add(n, jn->valuestring, kind, &a, nin, names, err) < 0) ok = -1;
    free(names);
    return ok ? -1 : 0;
}

net *net_from_json(const char *text, const char *what, char *err)
{
    cJSON *root = ju_parse(text, what, err);
    if (!root) return NULL;
    net *n = NULL;
    const cJSON *jf = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsObject(root) || !cJSON_IsString(jf) || strcmp(jf->valuestring, "dse-network")) {
        base_seterr(err, "%s: not a dse network file (\"format\": \"dse-network\" "
                 "missing)", what);
        goto fail;
    }
    int version = 1;
    if (ju_int(root, "version", &version, 0, what, err)) goto fail;
    if (version != 1) {
        base_seterr(err, "%s: unsupported network format version %d", what, version);
        goto fail;
    }
    for (const cJSON *c = root->child; c; c = c->next)
        if (strcmp(c->string, "format") && strcmp(c->string, "version") &&
            strcmp(c->string, "name") && strcmp(c->string, "input") &&
            strcmp(c->string, "layers") && strcmp(c->string, "weights") &&
            strcmp(c->string, "weights_bytes")) {
            base_seterr(err, "%s: unknown key \"%s\"", what, c->string);
            goto fail;
        }
    const cJSON *jin = cJSON_GetObjectItemCaseSensitive(root, "input");
    const cJSON *jlayers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    const char *nm = NULL, *inm = NULL;
    if (ju_name(root, "name", &nm, 0, what, err)) goto fail;
    if (!cJSON_IsObject(jin)) {
        base_seterr(err, "%s: \"input\" must be an object with name and shape", what);
        goto fail;
    }
    for (const cJSON *c = jin->child; c; c = c->next)
        if (strcmp(c->string, "name") && strcmp(c->string, "shape")) {
            base_seterr(err, "%s: input: unknown key \"%s\"", what, c->string);
            goto fail;
        }
    int shp[3];
    char ictx[300];
    snprintf(ictx, sizeof ictx, "%s: input", what);
    if (ju_name(jin, "name", &inm, 0, ictx, err)) goto fail;
    if (ju_ints(jin, "shape", 3, shp, 1, -2147483647, ictx, err)) goto fail;
    if (!cJSON_IsArray(jlayers)) {
        base_seterr(err, "%s: \"layers\" must be an array", what);
        goto fail;
    }
    n = net_new(nm ? nm : "net", inm ? inm : "data",
                (net_shape){shp[0], shp[1], shp[2]});
    const cJSON *jw = cJSON_GetObjectItemCaseSensitive(root, "weights");
    if (jw) {
        if (!cJSON_IsString(jw)) {
            base_seterr(err, "%s: \"weights\" must be a file name", what);
            goto fail;
        }
        n->weights_path = strdup(jw->valuestring);
    }
    const cJSON *jb = cJSON_GetObjectItemCaseSensitive(root, "weights_bytes");
    if (jb) {
        double b = cJSON_IsNumber(jb) ? jb->valuedouble : -1;
        if (!jw || !(b >= 1 && b <= 9007199254740992.0 && b == floor(b))) {
            base_seterr(err, "%s: \"weights_bytes\" must be a positive whole number of bytes, beside \"weights\"",
                        what);
            goto fail;
        }
        n->weights_bytes = (int64_t)b;
    }
    int idx = 0;
    for (const cJSON *jl = jlayers->child; jl; jl = jl->next, idx++)
        if (read_layer(n, jl, idx, what, err)) goto fail;
    if (net_finalize(n, what, err)) goto fail;
    /* Optional shapes must agree with inference. */
    for (const cJSON *jl = jlayers->child; jl; jl = jl->next) {
        const cJSON *js = cJSON_GetObjectItemCaseSensitive(jl, "shape");
        if (!js) continue;
        const char *lname = cJSON_GetObjectItemCaseSensitive(jl, "name")->valuestring;
        int i = net_find(n, lname), s[3];
        snprintf(ictx, sizeof ictx, "%s: layer %s", what, lname);
        if (ju_ints(jl, "shape", 3, s, 1, 0, ictx, err)) goto fail;
        net_shape o = n->layers[i].out;
        if (s[0] != o.c || s[1] != o.h || s[2] != o.w) {
            base_seterr(err, "%s: layer %s: stated shape %dx%dx%d but inputs give "
                     "%dx%dx%d", what, lname, s[0], s[1], s[2], o.c, o.h, o.w);
            goto fail;
        }
    }
    cJSON_Delete(root);
    return n;
fail:
    net_free(n);
    cJSON_Delete(root);
    return NULL;
}

char *net_to_json(const net *n)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", "dse-network");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddStringToObject(root, "name", n->name);
    cJSON *jin = cJSON_AddObjectToObject(root, "input");
    cJSON_AddStringToObject(jin, "name", n->input_name);
    int s[3] = {n->input.c, n->input.h, n->input.w};
    cJSON_AddItemToObject(jin, "shape", cJSON_CreateIntArray(s, 3));
    if (n->weights_path) cJSON_AddStringToObject(root, "weights", n->weights_path);
    if (n->weights_path && n->weights_bytes > 0)
        cJSON_AddNumberToObject(root, "weights_bytes", (double)n->weights_bytes);
    cJSON *jl = cJSON_AddArrayToObject(root, "layers");
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        const net_attr *a = &L->a;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", L->name);
        cJSON_AddStringToObject(o, "kind", net_kind_name(L->kind));
        cJSON *ins = cJSON_AddArrayToObject(o, "inputs");
        for (int k = 0; k < L->nin; k++)
            cJSON_AddItemToArray(ins, cJSON_CreateString(L->in[k] == NET_INPUT
                                                             ? n->input_name
                                                             : n->layers[L->in[k]].name));
        write_attrs(o, L->kind, a);
        int v[3];
        v[0] = L->out.c, v[1] = L->out.h, v[2] = L->out.w;
        cJSON_AddItemToObject(o, "shape", cJSON_CreateIntArray(v, 3));
        cJSON_AddItemToArray(jl, o);
    }
    char *txt = ju_print(root, 1);
    cJSON_Delete(root);
    return txt;
}

net *net_load(const char *path, char *err)
{
    size_t len = strlen(path);
    if (len > 5 && strcmp(path + len - 5, ".onnx") == 0)
        return onnx_import(path, NULL, err);
    char *text = ju_read_file(path, err);
    if (!text) return NULL;
    net *n = net_from_json(text, path, err);
    free(text);
    if (n && n->weights_path) { /* relative to the JSON file's folder */
        char *w = weights_path_resolve(path, n->weights_path);
        free(n->weights_path);
        n->weights_path = w;
        /* Checked now, so no later stage (export, exec) finds it missing. */
        char e2[BASE_ERRLEN], pb[BASE_PATHSHOW + 1];
        if (!w || weights_check_file(n, e2)) {
            base_seterr(err, "%s: %s", base_path(path, pb), w ? e2 : "out of memory");
            net_free(n);
            return NULL;
        }
    }
    return n;
}

int net_save_with(const net *n, const char *path, const float *w, char *err)
{
    if (w && !n->weights_path) {
        base_seterr(err, "network %s: weights to save but no weights path", n->name);
        return -1;
    }
    net rel = *n; /* the weights path as seen from the JSON file's folder */
    rel.weights_path = n->weights_path ? weights_path_relative(path, n->weights_path) : NULL;
    char *txt = net_to_json(&rel);
    free(rel.weights_path);
    base_outset *s = base_outset_new();
    FILE *fw = s && txt && w ? base_outset_add(s, n->weights_path, err) : NULL;
    FILE *fj = s && txt && (fw || !w) ? base_outset_add(s, path, err) : NULL;
    int rc = -1;
    if (!s || !txt) base_seterr(err, "%s: out of memory", path);
    else if (fj) {
        if (fw) weights_write(n, w, fw);
        fputs(txt, fj);
        fputc('\n', fj);
        rc = base_outset_commit(s, err); /* both files, or neither */
    }
    base_outset_free(s);
    free(txt);
    return rc;
}

int net_save(const net *n, const char *path, char *err) { return net_save_with(n, path, NULL, err); }

net *net_open(const char *name_or_path, char *err)
{
    char zerr[BASE_ERRLEN];
    net *n = net_zoo(name_or_path, zerr);
    if (n) return n;
    if (!strchr(name_or_path, '/') && !strchr(name_or_path, '.')) {
        base_seterr(err, "%s: unknown network (not in the zoo, see `dse zoo list`, "
                 "and not a file)", name_or_path);
        return NULL;
    }
    return net_load(name_or_path, err);
}

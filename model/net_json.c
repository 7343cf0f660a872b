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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keys each kind accepts besides name, kind, inputs, shape. */
static const char *keys_for(net_kind k)
{
    switch (k) {
    case NET_CONV: return "out_channels kernel stride dilation pads groups bias";
    case NET_FC: return "out_features bias";
    case NET_MAXPOOL: return "kernel stride pads ceil_mode";
    case NET_AVGPOOL: return "kernel stride pads ceil_mode count_include_pad";
    case NET_LRN: return "size alpha beta k";
    case NET_BN: return "epsilon";
    case NET_RELU: return "max";
    default: return "";
    }
}

static int key_allowed(net_kind k, const char *key)
{
    static const char *common[] = {"name", "kind", "inputs", "shape", NULL};
    for (int i = 0; common[i]; i++)
        if (strcmp(key, common[i]) == 0) return 1;
    const char *list = keys_for(k);
    size_t n = strlen(key);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, key, n) == 0) return 1;
        p += len;
        if (*p == ' ') p++;
    }
    return 0;
}

static int read_layer(net *n, const cJSON *jl, int idx, const char *what, char *err)
{
    char ctx[300];
    const cJSON *jn = cJSON_GetObjectItemCaseSensitive(jl, "name");
    if (!cJSON_IsObject(jl)) {
        snprintf(err, NET_ERRLEN, "%s: layers[%d] is not an object", what, idx);
        return -1;
    }
    if (!cJSON_IsString(jn) || !jn->valuestring[0]) {
        snprintf(err, NET_ERRLEN, "%s: layers[%d]: \"name\" must be a non-empty string",
                 what, idx);
        return -1;
    }
    snprintf(ctx, sizeof ctx, "%s: layer %s", what, jn->valuestring);
    const cJSON *jk = cJSON_GetObjectItemCaseSensitive(jl, "kind");
    net_kind kind;
    if (!cJSON_IsString(jk)) {
        snprintf(err, NET_ERRLEN, "%s: \"kind\" must be a string", ctx);
        return -1;
    }
    if (net_kind_parse(jk->valuestring, &kind)) {
        snprintf(err, NET_ERRLEN, "%s: unknown layer kind \"%s\"", ctx, jk->valuestring);
        return -1;
    }
    for (const cJSON *c = jl->child; c; c = c->next)
        if (!key_allowed(kind, c->string)) {
            snprintf(err, NET_ERRLEN, "%s: unknown attribute \"%s\" for %s", ctx, c->string,
                     jk->valuestring);
            return -1;
        }
    const cJSON *ji = cJSON_GetObjectItemCaseSensitive(jl, "inputs");
    if (!cJSON_IsArray(ji) || cJSON_GetArraySize(ji) < 1) {
        snprintf(err, NET_ERRLEN, "%s: \"inputs\" must be a non-empty array of names", ctx);
        return -1;
    }
    int nin = cJSON_GetArraySize(ji);
    const char **names = malloc((size_t)nin * sizeof *names);
    int k = 0;
    for (const cJSON *c = ji->child; c; c = c->next, k++) {
        if (!cJSON_IsString(c)) {
            free(names);
            snprintf(err, NET_ERRLEN, "%s: \"inputs\"[%d] is not a string", ctx, k);
            return -1;
        }
        names[k] = c->valuestring;
    }
    net_attr a = net_attr_default(kind);
    int ok = 0, tmp[4];
    switch (kind) {
    case NET_CONV: {
        /* An absent optional key leaves its array untouched: each keeps its default. */
        int kern[2], str[2] = {a.sh, a.sw}, dil[2] = {a.dh, a.dw}, pad[4] = {0, 0, 0, 0};
        ok = ju_int(jl, "out_channels", &a.out_c, 1, ctx, err) ||
             ju_ints(jl, "kernel", 2, kern, 1, 1, ctx, err) ||
             ju_ints(jl, "stride", 2, str, 0, 1, ctx, err) ||
             ju_ints(jl, "dilation", 2, dil, 0, 1, ctx, err) ||
             ju_ints(jl, "pads", 4, pad, 0, 0, ctx, err) ||
             ju_int(jl, "groups", &a.groups, 0, ctx, err) || ju_bool(jl, "bias", &a.bias, ctx, err);
        if (!ok) {
            a.kh = kern[0], a.kw = kern[1], a.sh = str[0], a.sw = str[1];
            a.dh = dil[0], a.dw = dil[1];
            a.pt = pad[0], a.pl = pad[1], a.pb = pad[2], a.pr = pad[3];
        }
        break;
    }
    case NET_FC:
        ok = ju_int(jl, "out_features", &a.out_c, 1, ctx, err) ||
             ju_bool(jl, "bias", &a.bias, ctx, err);
        break;
    case NET_MAXPOOL:
    case NET_AVGPOOL:
        ok = ju_ints(jl, "kernel", 2, tmp, 1, 1, ctx, err) || ((a.kh = tmp[0]), (a.kw = tmp[1]), 0);
        if (!ok) { /* stride defaults to the kernel, as in PyTorch */
            tmp[0] = a.kh, tmp[1] = a.kw;
            ok = ju_ints(jl, "stride", 2, tmp, 0, 1, ctx, err) || ((a.sh = tmp[0]), (a.sw = tmp[1]), 0);
        }
        if (!ok) {
            tmp[0] = tmp[1] = tmp[2] = tmp[3] = 0;
            ok = ju_ints(jl, "pads", 4, tmp, 0, 0, ctx, err) ||
                 ((a.pt = tmp[0]), (a.pl = tmp[1]), (a.pb = tmp[2]), (a.pr = tmp[3]), 0) ||
                 ju_bool(jl, "ceil_mode", &a.ceil_mode, ctx, err) ||
                 ju_bool(jl, "count_include_pad", &a.count_include_pad, ctx, err);
        }
        break;
    case NET_LRN:
        ok = ju_int(jl, "size", &a.lrn_size, 0, ctx, err) ||
             ju_num(jl, "alpha", &a.lrn_alpha, ctx, err) ||
             ju_num(jl, "beta", &a.lrn_beta, ctx, err) || ju_num(jl, "k", &a.lrn_k, ctx, err);
        break;
    case NET_BN:
        ok = ju_num_req(jl, "epsilon", &a.bn_eps, 0, 0, ctx, err);
        break;
    case NET_RELU:
        ok = ju_num_req(jl, "max", &a.relu_max, 0, 0, ctx, err); /* 0: unbounded */
        break;
    default:
        break;
    }
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
        snprintf(err, NET_ERRLEN, "%s: not a dse network file (\"format\": \"dse-network\" "
                 "missing)", what);
        goto fail;
    }
    int version = 1;
    if (ju_int(root, "version", &version, 0, what, err)) goto fail;
    if (version != 1) {
        snprintf(err, NET_ERRLEN, "%s: unsupported network format version %d", what, version);
        goto fail;
    }
    for (const cJSON *c = root->child; c; c = c->next)
        if (strcmp(c->string, "format") && strcmp(c->string, "version") &&
            strcmp(c->string, "name") && strcmp(c->string, "input") &&
            strcmp(c->string, "layers") && strcmp(c->string, "weights")) {
            snprintf(err, NET_ERRLEN, "%s: unknown key \"%s\"", what, c->string);
            goto fail;
        }
    const cJSON *jname = cJSON_GetObjectItemCaseSensitive(root, "name");
    const cJSON *jin = cJSON_GetObjectItemCaseSensitive(root, "input");
    const cJSON *jlayers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (jname && !cJSON_IsString(jname)) {
        snprintf(err, NET_ERRLEN, "%s: \"name\" must be a string", what);
        goto fail;
    }
    if (!cJSON_IsObject(jin)) {
        snprintf(err, NET_ERRLEN, "%s: \"input\" must be an object with name and shape", what);
        goto fail;
    }
    for (const cJSON *c = jin->child; c; c = c->next)
        if (strcmp(c->string, "name") && strcmp(c->string, "shape")) {
            snprintf(err, NET_ERRLEN, "%s: input: unknown key \"%s\"", what, c->string);
            goto fail;
        }
    const cJSON *jiname = cJSON_GetObjectItemCaseSensitive(jin, "name");
    if (jiname && (!cJSON_IsString(jiname) || !jiname->valuestring[0])) {
        snprintf(err, NET_ERRLEN, "%s: input \"name\" must be a non-empty string", what);
        goto fail;
    }
    int shp[3];
    char ictx[300];
    snprintf(ictx, sizeof ictx, "%s: input", what);
    if (ju_ints(jin, "shape", 3, shp, 1, -2147483647, ictx, err)) goto fail;
    if (!cJSON_IsArray(jlayers)) {
        snprintf(err, NET_ERRLEN, "%s: \"layers\" must be an array", what);
        goto fail;
    }
    n = net_new(jname ? jname->valuestring : "net", jiname ? jiname->valuestring : "data",
                (net_shape){shp[0], shp[1], shp[2]});
    const cJSON *jw = cJSON_GetObjectItemCaseSensitive(root, "weights");
    if (jw) {
        if (!cJSON_IsString(jw)) {
            snprintf(err, NET_ERRLEN, "%s: \"weights\" must be a file name", what);
            goto fail;
        }
        n->weights_path = strdup(jw->valuestring);
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
            snprintf(err, NET_ERRLEN, "%s: layer %s: stated shape %dx%dx%d but inputs give "
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

static cJSON *int_array(const int *v, int k)
{
    return cJSON_CreateIntArray(v, k);
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
    cJSON_AddItemToObject(jin, "shape", int_array(s, 3));
    if (n->weights_path) cJSON_AddStringToObject(root, "weights", n->weights_path);
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
        int v[4];
        switch (L->kind) {
        case NET_CONV:
            cJSON_AddNumberToObject(o, "out_channels", a->out_c);
            v[0] = a->kh, v[1] = a->kw;
            cJSON_AddItemToObject(o, "kernel", int_array(v, 2));
            v[0] = a->sh, v[1] = a->sw;
            cJSON_AddItemToObject(o, "stride", int_array(v, 2));
            v[0] = a->dh, v[1] = a->dw;
            cJSON_AddItemToObject(o, "dilation", int_array(v, 2));
            v[0] = a->pt, v[1] = a->pl, v[2] = a->pb, v[3] = a->pr;
            cJSON_AddItemToObject(o, "pads", int_array(v, 4));
            cJSON_AddNumberToObject(o, "groups", a->groups);
            cJSON_AddBoolToObject(o, "bias", a->bias);
            break;
        case NET_FC:
            cJSON_AddNumberToObject(o, "out_features", a->out_c);
            cJSON_AddBoolToObject(o, "bias", a->bias);
            break;
        case NET_MAXPOOL:
        case NET_AVGPOOL:
            v[0] = a->kh, v[1] = a->kw;
            cJSON_AddItemToObject(o, "kernel", int_array(v, 2));
            v[0] = a->sh, v[1] = a->sw;
            cJSON_AddItemToObject(o, "stride", int_array(v, 2));
            v[0] = a->pt, v[1] = a->pl, v[2] = a->pb, v[3] = a->pr;
            cJSON_AddItemToObject(o, "pads", int_array(v, 4));
            cJSON_AddBoolToObject(o, "ceil_mode", a->ceil_mode);
            if (L->kind == NET_AVGPOOL)
                cJSON_AddBoolToObject(o, "count_include_pad", a->count_include_pad);
            break;
        case NET_LRN:
            cJSON_AddNumberToObject(o, "size", a->lrn_size);
            cJSON_AddNumberToObject(o, "alpha", a->lrn_alpha);
            cJSON_AddNumberToObject(o, "beta", a->lrn_beta);
            cJSON_AddNumberToObject(o, "k", a->lrn_k);
            break;
        case NET_BN:
            cJSON_AddNumberToObject(o, "epsilon", a->bn_eps);
            break;
        case NET_RELU:
            if (a->relu_max > 0) cJSON_AddNumberToObject(o, "max", a->relu_max);
            break;
        default:
            break;
        }
        v[0] = L->out.c, v[1] = L->out.h, v[2] = L->out.w;
        cJSON_AddItemToObject(o, "shape", int_array(v, 3));
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
    }
    return n;
}

int net_save(const net *n, const char *path, char *err)
{
    net rel = *n; /* the weights path as seen from the JSON file's folder */
    rel.weights_path = n->weights_path ? weights_path_relative(path, n->weights_path) : NULL;
    char *txt = net_to_json(&rel);
    free(rel.weights_path);
    int rc = ju_write_file_atomic(path, txt, err);
    free(txt);
    return rc;
}

net *net_open(const char *name_or_path, char *err)
{
    char zerr[NET_ERRLEN];
    net *n = net_zoo(name_or_path, zerr);
    if (n) return n;
    if (!strchr(name_or_path, '/') && !strchr(name_or_path, '.')) {
        snprintf(err, NET_ERRLEN, "%s: unknown network (not in the zoo, see `dse zoo list`, "
                 "and not a file)", name_or_path);
        return NULL;
    }
    return net_load(name_or_path, err);
}

/* cmd_zoo.c -- `dse zoo list|show` and `dse net show|import|export`:
 * looking at networks, built-in or from files. */
#include "cli.h"
#include "jsonutil.h"
#include "net.h"
#include "onnx.h"

#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

static void show_text(const net *n)
{
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    printf("network %s: input %s %dx%dx%d (CxHxW), %d layers\n", n->name, n->input_name,
           n->input.c, n->input.h, n->input.w, n->n);
    printf("%-4s %-22s %-17s %-16s %15s %12s %12s %s\n", "#", "layer", "kind", "output CxHxW",
           "MACs", "ops", "params", "split");
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        char shp[32];
        snprintf(shp, sizeof shp, "%dx%dx%d", L->out.c, L->out.h, L->out.w);
        printf("%-4d %-22s %-17s %-16s %15lld %12lld %12lld %s\n", i, L->name,
               net_kind_name(L->kind), shp, (long long)L->macs, (long long)L->ops,
               (long long)L->params, net_kind_splittable(L->kind) ? "yes" : "-");
    }
    printf("total: %lld MACs (%.3f G), %lld elementwise ops, %lld params, %d splittable layers\n",
           (long long)t.macs, t.macs / 1e9, (long long)t.ops, (long long)t.params, t.nsplittable);
}

static void show_json(const net *n)
{
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", n->name);
    cJSON *in = cJSON_AddObjectToObject(o, "input");
    cJSON_AddStringToObject(in, "name", n->input_name);
    int s[3] = {n->input.c, n->input.h, n->input.w};
    cJSON_AddItemToObject(in, "shape", cJSON_CreateIntArray(s, 3));
    cJSON *ls = cJSON_AddArrayToObject(o, "layers");
    for (int i = 0; i < n->n; i++) {
        const net_layer *L = &n->layers[i];
        cJSON *l = cJSON_CreateObject();
        cJSON_AddStringToObject(l, "name", L->name);
        cJSON_AddStringToObject(l, "kind", net_kind_name(L->kind));
        cJSON *ins = cJSON_AddArrayToObject(l, "inputs");
        for (int k = 0; k < L->nin; k++)
            cJSON_AddItemToArray(ins, cJSON_CreateString(
                                          L->in[k] == NET_INPUT ? n->input_name
                                                                : n->layers[L->in[k]].name));
        int sh[3] = {L->out.c, L->out.h, L->out.w};
        cJSON_AddItemToObject(l, "shape", cJSON_CreateIntArray(sh, 3));
        cJSON_AddNumberToObject(l, "macs", (double)L->macs);
        cJSON_AddNumberToObject(l, "ops", (double)L->ops);
        cJSON_AddNumberToObject(l, "params", (double)L->params);
        cJSON_AddBoolToObject(l, "splittable", net_kind_splittable(L->kind));
        cJSON_AddBoolToObject(l, "rows", net_layer_rowsplit(n, i));
        cJSON_AddBoolToObject(l, "columns", net_layer_colsplit(n, i));
        cJSON_AddItemToArray(ls, l);
    }
    cJSON *tt = cJSON_AddObjectToObject(o, "totals");
    cJSON_AddNumberToObject(tt, "layers", n->n);
    cJSON_AddNumberToObject(tt, "macs", (double)t.macs);
    cJSON_AddNumberToObject(tt, "ops", (double)t.ops);
    cJSON_AddNumberToObject(tt, "params", (double)t.params);
    cJSON_AddNumberToObject(tt, "splittable", t.nsplittable);
    cli_print_json(o);
}

static int show(cli_args *a, net *n)
{
    int json = cli_flag(a, "json");
    int rc = cli_finish(a);
    if (rc) {
        net_free(n);
        return rc;
    }
    if (json) show_json(n);
    else show_text(n);
    net_free(n);
    return EXIT_OK;
}

static const char zoo_help[] =
    "usage: dse zoo list\n"
    "       dse zoo show NAME [--json]\n"
    "Built-in networks with per-layer output shapes, MACs, parameters and splittability.\n";

int cmd_zoo(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN];
    int started = cli_start(&a, "zoo", argc, argv, "json", zoo_help);
    if (started >= 0) return started;
    if (a.npos == 1 && !strcmp(a.pos[0], "list")) {
        if (cli_finish(&a)) return EXIT_USAGE;
        printf("%-18s %6s %14s %9s  %s\n", "name", "layers", "params", "GMACs", "description");
        for (int i = 0; i < net_zoo_count(); i++) {
            net *n = net_zoo(net_zoo_name(i), err);
            if (!n) {
                cli_error("zoo", "%s", err);
                return EXIT_FAIL;
            }
            net_totals t = net_total(n, NET_SPLIT_DEFAULT);
            printf("%-18s %6d %14lld %9.3f  %s\n", n->name, n->n, (long long)t.params,
                   t.macs / 1e9, net_zoo_describe(i));
            net_free(n);
        }
        return EXIT_OK;
    }
    if (a.npos == 2 && !strcmp(a.pos[0], "show")) {
        net *n = net_zoo(a.pos[1], err);
        if (!n) {
            cli_error("zoo", "%s: not in the zoo (dse zoo list shows the names)", a.pos[1]);
            return EXIT_USAGE;
        }
        return show(&a, n);
    }
    fputs(zoo_help, stderr);
    return EXIT_USAGE;
}

static const char net_help[] =
    "usage: dse net show FILE|NAME [--json]\n"
    "       dse net import MODEL.onnx -o NET.json [--weights FILE]\n"
    "       dse net export NAME|NET.json -o MODEL.onnx [--autodice]\n"
    "  --autodice  also list every initializer among the graph inputs, as AutoDiCE's\n"
    "              model splitter needs (docs/onnx.md)\n";

int cmd_net(int argc, char **argv)
{
    cli_args a;
    char err[BASE_ERRLEN];
    int started = cli_start(&a, "net", argc, argv, "json autodice", net_help);
    if (started >= 0) return started;
    if (a.npos == 2 && !strcmp(a.pos[0], "show")) {
        net *n = net_open(a.pos[1], err);
        if (!n) {
            cli_error("net show", "%s", err);
            return EXIT_USAGE;
        }
        return show(&a, n);
    }
    if (a.npos == 2 && !strcmp(a.pos[0], "import")) {
        const char *out = cli_get(&a, "o"), *w = cli_get(&a, "weights");
        if (!out) out = cli_get(&a, "output");
        if (cli_finish(&a)) return EXIT_USAGE;
        if (!out) {
            cli_error("net import", "-o NET.json is required");
            return EXIT_USAGE;
        }
        float *wts = NULL;
        net *n = w ? onnx_import_weights(a.pos[1], &wts, err) : onnx_import(a.pos[1], NULL, err);
        if (!n) {
            cli_error("net import", "%s", err);
            return EXIT_USAGE;
        }
        /* The model (and its external data) is read: neither output may be
         * one of those files, nor the other output. */
        const char *outs[2] = {out, w};
        int rc = cli_outputs("net import", outs, 2);
        if (!rc && w) {
            free(n->weights_path);
            if (!(n->weights_path = base_strdup(w))) cli_error("net import", "out of memory"), rc = EXIT_FAIL;
        }
        if (!rc && net_save_with(n, out, wts, err)) { /* both files, or neither */
            cli_error("net import", "%s", err);
            rc = EXIT_FAIL;
        }
        free(wts);
        net_free(n);
        return rc;
    }
    if (a.npos == 2 && !strcmp(a.pos[0], "export")) {
        const char *out = cli_get(&a, "o");
        if (!out) out = cli_get(&a, "output");
        unsigned flags = cli_flag(&a, "autodice") ? ONNX_EXPORT_INIT_INPUTS : 0;
        if (cli_finish(&a)) return EXIT_USAGE;
        if (!out) {
            cli_error("net export", "-o MODEL.onnx is required");
            return EXIT_USAGE;
        }
        net *n = net_open(a.pos[1], err);
        if (!n) {
            cli_error("net export", "%s", err);
            return EXIT_USAGE;
        }
        int rc = cli_outputs("net export", &out, 1);
        if (!rc && onnx_export_flags(n, out, flags, err)) {
            cli_error("net export", "%s", err);
            rc = EXIT_FAIL;
        }
        net_free(n);
        return rc;
    }
    fputs(net_help, stderr);
    return EXIT_USAGE;
}

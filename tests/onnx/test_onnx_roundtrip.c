/* test_onnx_roundtrip.c -- every zoo network and the glue networks of
 * extra_nets.h exported to ONNX and imported back must be the same net:
 * same layers (names, kinds, inputs, every attribute: the JSON forms are
 * compared), shapes, MACs, ops, parameters, and the very same weights
 * (the generated ones on the first hop, the file's on the second).
 *
 * DSE_ONNX_ZOO_BIG=0 skips the zoo networks of more than 30 M weights
 * (vgg16, both AlexNets: a quarter to half a GB each), which take minutes
 * under ASan; tests/onnx/CMakeLists.txt sets it in sanitizer builds only,
 * the normal build covers every zoo network.
 */
#include "net.h"
#include "onnx.h"
#include "weights.h"
#include "check.h"
#include "extra_nets.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/dse-onnx-rt-XXXXXX";

static char *json_without_weights(const net *n)
{
    net c = *n;
    c.weights_path = NULL;
    return net_to_json(&c);
}

static void same_net(const char *what, const net *a, const net *b)
{
    CHECK(a->n == b->n, "%s: %d layers, re-imported %d", what, a->n, b->n);
    CHECK(!strcmp(a->name, b->name), "%s: name %s came back as %s", what, a->name, b->name);
    CHECK(!strcmp(a->input_name, b->input_name), "%s: input %s came back as %s", what,
          a->input_name, b->input_name);
    CHECK(a->input.c == b->input.c && a->input.h == b->input.h && a->input.w == b->input.w,
          "%s: input shape changed", what);
    for (int i = 0; i < a->n && i < b->n; i++) {
        const net_layer *x = &a->layers[i], *y = &b->layers[i];
        CHECK(!strcmp(x->name, y->name) && x->kind == y->kind, "%s: layer %d %s (%s) came back "
              "as %s (%s)", what, i, x->name, net_kind_name(x->kind), y->name,
              net_kind_name(y->kind));
        CHECK(x->out.c == y->out.c && x->out.h == y->out.h && x->out.w == y->out.w,
              "%s: layer %s shape %dx%dx%d came back as %dx%dx%d", what, x->name, x->out.c,
              x->out.h, x->out.w, y->out.c, y->out.h, y->out.w);
        CHECK(x->macs == y->macs && x->ops == y->ops && x->params == y->params &&
              x->weights == y->weights, "%s: layer %s counts changed", what, x->name);
        CHECK(x->nin == y->nin, "%s: layer %s inputs changed", what, x->name);
        for (int k = 0; k < x->nin && k < y->nin; k++)
            CHECK(x->in[k] == y->in[k], "%s: layer %s input %d changed", what, x->name, k);
    }
    /* Every attribute a kind uses, as the JSON format writes it. */
    char *ja = json_without_weights(a), *jb = json_without_weights(b);
    CHECK(!strcmp(ja, jb), "%s: JSON forms differ:\n%s\n----\n%s", what, ja, jb);
    free(ja);
    free(jb);
    net_totals ta = net_total(a, NET_SPLIT_DEFAULT), tb = net_total(b, NET_SPLIT_DEFAULT);
    CHECK(ta.macs == tb.macs && ta.params == tb.params && ta.nsplittable == tb.nsplittable,
          "%s: totals changed", what);
}

static int same_floats(const float *a, const float *b, int64_t n)
{
    return n == 0 || memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

static void roundtrip(net *a, int second_hop)
{
    char err[BASE_ERRLEN], onnx[300], bin[300], onnx2[300], bin2[300];
    snprintf(onnx, sizeof onnx, "%s/%s.onnx", tmpdir, a->name);
    snprintf(bin, sizeof bin, "%s/%s.bin", tmpdir, a->name);
    int rc = onnx_export(a, onnx, err);
    CHECK(rc == 0, "%s: export failed: %s", a->name, err);
    if (rc) return;
    net *b = onnx_import(onnx, bin, err);
    CHECK(b != NULL, "%s: re-import failed: %s", a->name, err);
    if (!b) return;
    same_net(a->name, a, b);
    CHECK(b->weights_path && !strcmp(b->weights_path, bin), "%s: weights path not set", a->name);
    int64_t total = weights_total(a);
    float *gen = weights_generate_all(a, WEIGHTS_SEED_DEFAULT);
    float *got = weights_load(b, err);
    CHECK(got != NULL, "%s: weights file unreadable: %s", a->name, err);
    CHECK(got && same_floats(gen, got, total), "%s: weights file differs from the generated "
          "weights the export wrote", a->name);
    free(got);
    /* Without a weights file the net reads the ONNX initializers itself. */
    net *c = onnx_import(onnx, NULL, err);
    CHECK(c && c->weights_path && !strcmp(c->weights_path, onnx), "%s: import without weights "
          "file: %s", a->name, c ? "weights path is not the model" : err);
    if (c) {
        got = weights_load(c, err);
        CHECK(got && same_floats(gen, got, total), "%s: weights read from the .onnx differ", a->name);
        free(got);
        net_free(c);
    }
    if (second_hop) {
        /* Export of a net with a weights file writes those weights. */
        snprintf(onnx2, sizeof onnx2, "%s/%s-2.onnx", tmpdir, a->name);
        snprintf(bin2, sizeof bin2, "%s/%s-2.bin", tmpdir, a->name);
        for (int64_t i = 0; i < total; i++) gen[i] = (float)(i % 1000) * 0.001f - 0.5f;
        base_inputs_forget(); /* the second hop is a command of its own: it rewrites bin */
        CHECK(weights_save(b, gen, bin, err) == 0, "%s: weights_save: %s", a->name, err);
        CHECK(onnx_export(b, onnx2, err) == 0, "%s: second export: %s", a->name, err);
        net *d = onnx_import(onnx2, bin2, err);
        CHECK(d != NULL, "%s: second re-import: %s", a->name, err);
        if (d) {
            same_net(a->name, a, d);
            got = weights_load(d, err);
            CHECK(got && same_floats(gen, got, total), "%s: second hop lost the weights", a->name);
            free(got);
            net_free(d);
        }
        unlink(onnx2);
        unlink(bin2);
    }
    free(gen);
    net_free(b);
    unlink(onnx);
    unlink(bin);
}

/* A graph named as an exporter names every graph ("torch_jit",
 * "main_graph", ...) gives the network its file's name, so two such files
 * are two networks (coefficients are keyed by network name); any other
 * graph name is kept. */
static void generic_names(void)
{
    char err[BASE_ERRLEN], path[600];
    static const struct {
        const char *graph, *file, *want;
    } cases[] = {{"torch_jit", "kws-1d.onnx", "kws-1d"}, {"main_graph", "r18w", "r18w"},
                 {"tf2onnx", "model.v2.onnx", "model.v2"}, {"mynet", "other.onnx", "mynet"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        net *a = net_zoo("toy6", err);
        CHECK(a != NULL, "%s", err);
        if (!a) return;
        char *old = a->name;
        a->name = (char *)cases[i].graph;
        snprintf(path, sizeof path, "%s/%s", tmpdir, cases[i].file);
        CHECK(onnx_export(a, path, err) == 0, "%s", err);
        a->name = old;
        net *b = onnx_import(path, NULL, err);
        CHECK(b && !strcmp(b->name, cases[i].want), "graph %s in %s: network %s, want %s", cases[i].graph,
              cases[i].file, b ? b->name : err, cases[i].want);
        net_free(b);
        net_free(a);
        unlink(path);
    }
}

int main(void)
{
    char err[BASE_ERRLEN];
    const char *big = getenv("DSE_ONNX_ZOO_BIG");
    int skip_big = big && !strcmp(big, "0");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    for (int i = 0; i < net_zoo_count(); i++) {
        const char *name = net_zoo_name(i);
        net *a = net_zoo(name, err);
        CHECK(a != NULL, "zoo %s: %s", name, err);
        if (!a) continue;
        net_totals t = net_total(a, NET_SPLIT_DEFAULT);
        if (skip_big && t.weights > 30000000) {
            printf("skipped %s: %lld weights (DSE_ONNX_ZOO_BIG=0)\n", name, (long long)t.weights);
            net_free(a);
            continue;
        }
        roundtrip(a, t.weights < 20000000);
        printf("round trip %-14s %4d layers %12lld params %14lld MACs\n", name, a->n,
               (long long)t.params, (long long)t.macs);
        net_free(a);
    }
    for (int i = 0; i < N_EXTRA_NETS; i++) {
        net *a = net_from_json(extra_nets[i], "extra_nets.h", err);
        CHECK(a != NULL, "extra net %d: %s", i, err);
        if (!a) continue;
        roundtrip(a, 1);
        printf("round trip %-14s %4d layers\n", a->name, a->n);
        net_free(a);
    }
    generic_names();
    rmdir(tmpdir);
    return check_done("test_onnx_roundtrip");
}

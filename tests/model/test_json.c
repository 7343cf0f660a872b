/* test_json.c -- the JSON network format (docs/network-format.md): exact
 * round trip of every zoo network (write -> read -> write gives the same
 * text and the same layers), the documented defaults and shorthands, the
 * documentation's own example, and the "shape" cross-check.
 */
#include "mcheck.h"
#include "jsonutil.h"
#include "net.h"
#include "run.h"

#include <cJSON.h>
#include <stdlib.h>
#include <unistd.h>

static int attr_equal(const net_attr *a, const net_attr *b)
{
    return a->out_c == b->out_c && a->kh == b->kh && a->kw == b->kw && a->sh == b->sh &&
           a->sw == b->sw && a->dh == b->dh && a->dw == b->dw && a->pt == b->pt &&
           a->pl == b->pl && a->pb == b->pb && a->pr == b->pr && a->groups == b->groups &&
           a->bias == b->bias && a->ceil_mode == b->ceil_mode &&
           a->count_include_pad == b->count_include_pad && a->lrn_size == b->lrn_size &&
           a->lrn_alpha == b->lrn_alpha && a->lrn_beta == b->lrn_beta && a->lrn_k == b->lrn_k &&
           a->bn_eps == b->bn_eps && a->relu_max == b->relu_max;
}

/* Same layers, same order, same wiring, attributes, shapes and counts. */
static void check_same_net(const net *a, const net *b)
{
    CHECK_STR(a->name, b->name);
    CHECK_STR(a->input_name, b->input_name);
    CHECK(a->input.c == b->input.c && a->input.h == b->input.h && a->input.w == b->input.w);
    CHECK_I64(a->n, b->n);
    for (int i = 0; i < a->n && i < b->n; i++) {
        const net_layer *x = &a->layers[i], *y = &b->layers[i];
        int same = !strcmp(x->name, y->name) && x->kind == y->kind && x->nin == y->nin &&
                   attr_equal(&x->a, &y->a) && x->out.c == y->out.c && x->out.h == y->out.h &&
                   x->out.w == y->out.w && x->macs == y->macs && x->ops == y->ops &&
                   x->params == y->params && x->weights == y->weights;
        for (int k = 0; same && k < x->nin; k++) same = x->in[k] == y->in[k];
        if (!same) fprintf(stderr, "%s: layer %d (%s) differs after the round trip\n", a->name,
                           i, x->name);
        CHECK(same);
    }
}

static void test_round_trip(void)
{
    char err[BASE_ERRLEN];
    for (int z = 0; z < net_zoo_count(); z++) {
        net *n = net_zoo(net_zoo_name(z), err);
        CHECK(n != NULL);
        if (!n) continue;
        char *t1 = net_to_json(n);
        net *m = net_from_json(t1, "t1", err);
        if (!m) fprintf(stderr, "%s: %s\n", n->name, err);
        CHECK(m != NULL);
        if (m) {
            char *t2 = net_to_json(m);
            CHECK(strcmp(t1, t2) == 0);
            check_same_net(n, m);
            free(t2);
        }
        /* Through a file too: save, load, save again: identical bytes. */
        char *p1 = scratch_path("rt1.json"), *p2 = scratch_path("rt2.json");
        base_inputs_forget(); /* each network's round trip is a command of its own */
        CHECK(net_save(n, p1, err) == 0, "%s", err);
        net *f = net_load(p1, err);
        CHECK(f != NULL);
        if (f) {
            CHECK(net_save(f, p2, err) == 0);
            char *b1 = tfile_read(p1, NULL), *b2 = tfile_read(p2, NULL);
            CHECK(b1 && b2 && strcmp(b1, b2) == 0);
            free(b1);
            free(b2);
            check_same_net(n, f);
        }
        net_free(f);
        net_free(m);
        free(t1);
        free(p1);
        free(p2);
        net_free(n);
    }
}

static void test_doc_example(void)
{
    char err[BASE_ERRLEN];
    char *text = tfile_md_json(DSE_SOURCE_DIR "/docs/network-format.md");
    CHECK(text != NULL);
    if (!text) return;
    net *n = net_from_json(text, "network-format.md", err);
    if (!n) fprintf(stderr, "doc example: %s\n", err);
    CHECK(n != NULL);
    free(text);
    if (!n) return;
    CHECK_STR(n->name, "tiny");
    CHECK_I64(n->n, 11);
    /* By hand: conv1 16*32*32*27 = 442368; branch_a 16*16*16*16 = 65536;
     * branch_b (groups 4: 4 input channels each, 3x3) 16*16*16*36 = 147456;
     * fc 32*10 = 320.  Params: 448 + bn 32 + 272 + 576 (no bias) + 330. */
    net_totals t = net_total(n, NET_SPLIT_DEFAULT);
    CHECK_I64(t.macs, 442368 + 65536 + 147456 + 320);
    CHECK_I64(t.params, 448 + 32 + 272 + 576 + 330);
    CHECK_I64(t.nsplittable, 4);
    CHECK_SHAPE(n, "sum", 16, 16, 16);
    CHECK_SHAPE(n, "fc", 10, 1, 1);
    const net_attr *p = &n->layers[net_find(n, "pool1")].a;
    CHECK(p->sh == 2 && p->sw == 2); /* stride defaults to the kernel */
    const net_attr *b = &n->layers[net_find(n, "branch_b")].a;
    CHECK(b->dh == 2 && b->groups == 4 && b->bias == 0 && b->pt == 2 && b->pr == 2);
    net_free(n);
}

/* A one-layer net around `layer` (a JSON object text) on input 4x9x9. */
static net *one(const char *layer, char *err)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"format\":\"dse-network\",\"input\":{\"shape\":[4,9,9]},\"layers\":[%s]}",
             layer);
    return net_from_json(buf, "one.json", err);
}

static void test_defaults(void)
{
    char err[BASE_ERRLEN];
    /* Conv with only the required keys: stride 1, dilation 1, pads 0,
     * groups 1, bias on -> 8x7x7.  (A bug once took the stride from the
     * kernel and the pads from whatever came before.) */
    net *n = one("{\"name\":\"c\",\"kind\":\"Conv\",\"inputs\":[\"data\"],"
                 "\"out_channels\":8,\"kernel\":3}", err);
    CHECK(n != NULL);
    if (n) {
        const net_attr *a = &n->layers[0].a;
        CHECK(a->kh == 3 && a->kw == 3 && a->sh == 1 && a->sw == 1 && a->dh == 1 && a->dw == 1);
        CHECK(a->pt == 0 && a->pl == 0 && a->pb == 0 && a->pr == 0);
        CHECK(a->groups == 1 && a->bias == 1);
        CHECK_SHAPE(n, "c", 8, 7, 7);
        CHECK_STR(n->name, "net");
        CHECK_STR(n->input_name, "data");
        CHECK(n->weights_path == NULL);
    }
    net_free(n);
    /* Only a stride: dilation and pads still default. */
    n = one("{\"name\":\"c\",\"kind\":\"Conv\",\"inputs\":[\"data\"],"
            "\"out_channels\":8,\"kernel\":[3,1],\"stride\":[2,1]}", err);
    CHECK(n && n->layers[0].a.dh == 1 && n->layers[0].a.pb == 0);
    if (n) CHECK_SHAPE(n, "c", 8, 4, 9); /* (9-3)/2+1 = 4, (9-1)/1+1 = 9 */
    net_free(n);
    /* Pools: stride = kernel, no pads, floor. */
    n = one("{\"name\":\"p\",\"kind\":\"AveragePool\",\"inputs\":[\"data\"],\"kernel\":2}", err);
    CHECK(n != NULL);
    if (n) {
        const net_attr *a = &n->layers[0].a;
        CHECK(a->sh == 2 && a->sw == 2 && a->pt == 0 && a->ceil_mode == 0 &&
              a->count_include_pad == 0);
        CHECK_SHAPE(n, "p", 4, 4, 4);
    }
    net_free(n);
    n = one("{\"name\":\"p\",\"kind\":\"MaxPool\",\"inputs\":[\"data\"],\"kernel\":2,"
            "\"ceil_mode\":true}", err);
    if (n) CHECK_SHAPE(n, "p", 4, 5, 5);
    CHECK(n != NULL);
    net_free(n);
    /* LRN, BatchNorm, ReLU defaults. */
    n = one("{\"name\":\"l\",\"kind\":\"LRN\",\"inputs\":[\"data\"]}", err);
    CHECK(n && n->layers[0].a.lrn_size == 5 && n->layers[0].a.lrn_alpha == 1e-4 &&
          n->layers[0].a.lrn_beta == 0.75 && n->layers[0].a.lrn_k == 1.0);
    net_free(n);
    n = one("{\"name\":\"b\",\"kind\":\"BatchNorm\",\"inputs\":[\"data\"]}", err);
    CHECK(n && n->layers[0].a.bn_eps == 1e-5);
    net_free(n);
    n = one("{\"name\":\"r\",\"kind\":\"ReLU\",\"inputs\":[\"data\"]}", err);
    CHECK(n && n->layers[0].a.relu_max == 0);
    net_free(n);
    n = one("{\"name\":\"r\",\"kind\":\"ReLU\",\"inputs\":[\"data\"],\"max\":6}", err);
    CHECK(n && n->layers[0].a.relu_max == 6);
    net_free(n);
    /* FC: bias on by default. */
    n = one("{\"name\":\"f\",\"kind\":\"FC\",\"inputs\":[\"data\"],\"out_features\":3}", err);
    CHECK(n && n->layers[0].params == 4 * 9 * 9 * 3 + 3);
    net_free(n);
}

static void test_shorthand_and_order(void)
{
    char err[BASE_ERRLEN];
    /* Scalars and full arrays mean the same. */
    const char *a =
        "{\"format\":\"dse-network\",\"version\":1,\"name\":\"s\","
        "\"input\":{\"name\":\"img\",\"shape\":[2,8,8]},\"weights\":\"w.bin\",\"layers\":["
        "{\"name\":\"c\",\"kind\":\"Conv\",\"inputs\":[\"img\"],\"out_channels\":2,"
        "\"kernel\":3,\"stride\":2,\"dilation\":1,\"pads\":1}]}";
    const char *b =
        "{\"format\":\"dse-network\",\"version\":1,\"name\":\"s\","
        "\"input\":{\"name\":\"img\",\"shape\":[2,8,8]},\"weights\":\"w.bin\",\"layers\":["
        "{\"name\":\"c\",\"kind\":\"Conv\",\"inputs\":[\"img\"],\"out_channels\":2,"
        "\"kernel\":[3,3],\"stride\":[2,2],\"dilation\":[1,1],\"pads\":[1,1,1,1],"
        "\"groups\":1,\"bias\":true,\"shape\":[2,4,4]}]}";
    net *x = net_from_json(a, "a", err), *y = net_from_json(b, "b", err);
    CHECK(x && y);
    if (x && y) {
        check_same_net(x, y);
        char *tx = net_to_json(x), *ty = net_to_json(y);
        CHECK(strcmp(tx, ty) == 0);
        /* The custom input name and the weights path survive the round trip. */
        net *z = net_from_json(tx, "tx", err);
        CHECK(z && !strcmp(z->input_name, "img") && z->weights_path &&
              !strcmp(z->weights_path, "w.bin"));
        net_free(z);
        free(tx);
        free(ty);
    }
    net_free(x);
    net_free(y);
    /* Layers in any order: sorted on reading, written sorted. */
    const char *u =
        "{\"format\":\"dse-network\",\"input\":{\"shape\":[3,4,4]},\"layers\":["
        "{\"name\":\"out\",\"kind\":\"Softmax\",\"inputs\":[\"fc\"]},"
        "{\"name\":\"fc\",\"kind\":\"FC\",\"inputs\":[\"r\"],\"out_features\":5},"
        "{\"name\":\"r\",\"kind\":\"ReLU\",\"inputs\":[\"data\"]}]}";
    net *n = net_from_json(u, "u", err);
    CHECK(n != NULL);
    if (n) {
        CHECK_STR(n->layers[0].name, "r");
        CHECK_STR(n->layers[1].name, "fc");
        CHECK_STR(n->layers[2].name, "out");
        char *t = net_to_json(n);
        cJSON *j = cJSON_Parse(t);
        cJSON *ls = cJSON_GetObjectItem(j, "layers");
        CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(ls, 0), "name")->valuestring, "r");
        /* Written: every layer states its shape; no attribute a kind does not take. */
        const cJSON *l0 = cJSON_GetArrayItem(ls, 0), *l1 = cJSON_GetArrayItem(ls, 1);
        CHECK(cJSON_GetObjectItem(l0, "shape") != NULL);
        CHECK_I64(cJSON_GetArraySize(l0), 4); /* name kind inputs shape */
        CHECK_I64(cJSON_GetArrayItem(cJSON_GetObjectItem(l1, "shape"), 0)->valueint, 5);
        CHECK(cJSON_GetObjectItem(l1, "bias") && cJSON_IsTrue(cJSON_GetObjectItem(l1, "bias")));
        cJSON_Delete(j);
        free(t);
    }
    net_free(n);
}

static void test_shape_check(void)
{
    char err[BASE_ERRLEN];
    net *n = one("{\"name\":\"g\",\"kind\":\"GlobalAveragePool\",\"inputs\":[\"data\"],"
                 "\"shape\":[4,1,1]}", err);
    CHECK(n != NULL);
    net_free(n);
    n = one("{\"name\":\"g\",\"kind\":\"GlobalAveragePool\",\"inputs\":[\"data\"],"
            "\"shape\":[4,9,9]}", err);
    CHECK(n == NULL);
    CHECK_HAS(err, "one.json: layer g: stated shape 4x9x9 but inputs give 4x1x1");
}

static void test_save_errors(void)
{
    char err[BASE_ERRLEN];
    net *n = net_zoo("toy6", err);
    /* A folder that does not exist: an error, and nothing left behind. */
    char *dir = scratch_path("no-such-dir"), path[512];
    snprintf(path, sizeof path, "%s/x.json", dir);
    CHECK(net_save(n, path, err) == -1);
    CHECK_HAS(err, path);
    CHECK(access(dir, F_OK) != 0);
    free(dir);
    /* Loading a missing file names it. */
    CHECK(net_load("/nonexistent/net.json", err) == NULL);
    CHECK_HAS(err, "/nonexistent/net.json");
    net_free(n);
}

/* Every double written by ju_print reads back bit for bit (cJSON_Print
 * keeps 15 digits when they compare "close enough", one bit off); the
 * values are random bit patterns, the edge cases, and numbers people
 * write (0.1), which must keep their short form. */
static void test_exact_numbers(void)
{
    unsigned long long x = 0x9e3779b97f4a7c15ULL;
    int bad = 0, lossy_cjson = 0;
    for (int i = 0; i < 200000; i++) {
        double v;
        if (i < 8) {
            const double edge[8] = {0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
                                    0.1, 1.0 / 3.0, 123456789012345678.0};
            v = edge[i];
        } else {
            x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
            unsigned long long bits = x * 0x2545F4914F6CDD1DULL;
            memcpy(&v, &bits, 8);
            if (!isfinite(v)) continue;
            if (i % 2) v = ldexp((double)(bits >> 11), -(int)(bits % 60)); /* everyday magnitudes */
        }
        cJSON *a = cJSON_CreateArray();
        cJSON_AddItemToArray(a, cJSON_CreateNumber(v));
        char *t = ju_print(a, 0), *c = cJSON_PrintUnformatted(a);
        cJSON *b = cJSON_Parse(t), *bc = cJSON_Parse(c);
        double back = b ? cJSON_GetArrayItem(b, 0)->valuedouble : NAN;
        double backc = bc ? cJSON_GetArrayItem(bc, 0)->valuedouble : NAN;
        if (memcmp(&back, &v, 8)) {
            if (bad++ < 5) fprintf(stderr, "ju_print(%.17g) = %s reads back %.17g\n", v, t, back);
        }
        lossy_cjson += memcmp(&backc, &v, 8) != 0;
        free(t), free(c);
        cJSON_Delete(a), cJSON_Delete(b), cJSON_Delete(bc);
    }
    CHECK(bad == 0, " %d doubles did not round-trip through ju_print", bad);
    /* the reason ju_print exists: were this 0, cJSON would be exact */
    CHECK(lossy_cjson > 0);
    fprintf(stderr, "cJSON_Print lost bits of %d of 200000 doubles; ju_print of none\n", lossy_cjson);
    char b[JU_NUMLEN];
    ju_format_double(b, 0.1);
    CHECK_STR(b, "0.1");
    ju_format_double(b, 300);
    CHECK_STR(b, "300");
    ju_format_double(b, NAN);
    CHECK_STR(b, "null");
}

int main(void)
{
    test_exact_numbers();
    test_round_trip();
    test_doc_example();
    test_defaults();
    test_shorthand_and_order();
    test_shape_check();
    test_save_errors();
    scratch_cleanup();
    return check_done("test_json");
}

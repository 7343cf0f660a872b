/* test_slices.c -- the slice invariant of kernels.h: for every Conv and FC
 * layer of alexnet-bvlc (grouped convs), toy6, mobilenetv2 (depthwise), a
 * net of grouped convs whose slices straddle group boundaries and one of
 * Winograd-path convs, the
 * concatenation of the slices of random partitions of the output channels,
 * each computed from its own kern_weights_slice, equals the whole layer's
 * output: bit for bit, or within 1e-6 relative to the element (plus 1e-6
 * of the layer's largest magnitude, for elements that cancel to ~0).
 * Also: the weights of a slice are exactly the rows of the whole layer's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "naive.h"

static uint64_t rng = 777;
static long exact, close_only, compared, conv_inexact; /* conv_inexact: Conv elements not bit-identical */

static void check_layer(const net *n, int li, int nparts_max)
{
    char err[BASE_ERRLEN];
    const net_layer *L = &n->layers[li];
    int C = L->out.c;
    size_t hw = (size_t)L->out.h * L->out.w, olen = (size_t)C * hw;
    size_t xlen = (size_t)net_shape_numel(net_in_shape(n, li, 0));
    float *x = malloc(xlen * sizeof *x), *full = malloc(olen * sizeof *full);
    float *cat = malloc(olen * sizeof *cat), *w = NULL, *ws = NULL;
    size_t nw;
    trng_fill(&rng, x, xlen);
    const float *in[1] = {x};
    CHECK(kern_weights_slice(n, li, 0, C, 42, &w, &nw, err) == 0, "%s", err);
    size_t nws = kern_workspace_floats(n, li, C);
    ws = malloc((nws ? nws : 1) * sizeof *ws);
    CHECK(kern_run(n, li, 0, C, in, w, full, ws, err) == 0, "%s", err);
    double amax = 0;
    for (size_t i = 0; i < olen; i++) amax = fmax(amax, fabs(full[i]));

    /* A random partition into 2..nparts_max contiguous slices. */
    int parts = trng_int(&rng, 2, nparts_max < C ? nparts_max : C);
    int cuts[64];
    cuts[0] = 0;
    for (int k = 1; k < parts; k++) cuts[k] = trng_int(&rng, cuts[k - 1] + 1, C - (parts - k));
    cuts[parts] = C;
    memset(cat, 0xff, olen * sizeof *cat);
    size_t K = L->a.bias ? nw / C - 1 : nw / C;
    for (int k = 0; k < parts; k++) {
        int c0 = cuts[k], nc = cuts[k + 1] - cuts[k];
        float *sw;
        size_t snw;
        CHECK(kern_weights_slice(n, li, c0, nc, 42, &sw, &snw, err) == 0, "%s", err);
        CHECK(snw == (size_t)nc * nw / C, "%s: slice weights %zu", L->name, snw);
        CHECK(memcmp(sw, w + (size_t)c0 * K, (size_t)nc * K * sizeof *sw) == 0,
              "%s: slice [%d,+%d) weights are not the layer's rows", L->name, c0, nc);
        if (L->a.bias)
            CHECK(memcmp(sw + (size_t)nc * K, w + (size_t)C * K + c0, (size_t)nc * sizeof *sw) == 0,
                  "%s: slice [%d,+%d) biases differ", L->name, c0, nc);
        size_t snws = kern_workspace_floats(n, li, nc);
        CHECK(snws <= nws, "%s: slice needs more workspace than the layer", L->name);
        const float *view[NET_MAX_IN];
        slice_inputs(n, li, c0, nc, in, view);
        CHECK(kern_run(n, li, c0, nc, view, sw, cat + (size_t)c0 * hw, ws, err) == 0, "%s", err);
        free(sw);
    }
    int ok = 1;
    for (size_t i = 0; i < olen; i++) {
        compared++;
        if (full[i] == cat[i]) {
            exact++;
            continue;
        }
        double d = fabs((double)full[i] - cat[i]);
        if (L->kind == NET_CONV) conv_inexact++;
        if (d <= 1e-6 * fabs(full[i]) + 1e-6 * amax) {
            close_only++;
        } else if (ok) {
            ok = 0;
            CHECK(0, "%s layer %s: %d slices, element %zu: whole %.9g, slices %.9g", n->name,
                  L->name, parts, i, full[i], cat[i]);
        }
    }
    free(x), free(full), free(cat), free(w), free(ws);
}

static void check_net(const net *n, int nparts_max)
{
    int layers = 0;
    for (int i = 0; i < n->n; i++)
        if (net_kind_splittable(n->layers[i].kind)) {
            check_layer(n, i, nparts_max);
            layers++;
        }
    printf("%s: %d splittable layers checked\n", n->name, layers);
}

/* Grouped convs with out_c/groups odd so random cuts straddle groups. */
static net *grouped_net(void)
{
    char err[BASE_ERRLEN];
    net *n = net_new("grouped", "data", (net_shape){12, 15, 13});
    net_attr a = net_attr_default(NET_CONV);
    a.out_c = 15, a.groups = 3, a.kh = a.kw = 3, a.pt = a.pl = a.pb = a.pr = 1;
    const char *d[1] = {"data"}, *c1[1] = {"c1"}, *c2[1] = {"c2"}, *c3[1] = {"c3"};
    net_add(n, "c1", NET_CONV, &a, 1, d, err);
    a.out_c = 25, a.groups = 5, a.sh = 2, a.dw = 2, a.pr = 2, a.bias = 0;
    net_add(n, "c2", NET_CONV, &a, 1, c1, err);
    a = net_attr_default(NET_CONV);
    a.out_c = 20, a.groups = 5; /* grouped pointwise */
    net_add(n, "c3", NET_CONV, &a, 1, c2, err);
    a = net_attr_default(NET_FC);
    a.out_c = 37;
    net_add(n, "fc", NET_FC, &a, 1, c3, err);
    if (net_finalize(n, "grouped", err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    return n;
}

/* 3x3 stride-1 convs with 16+ channels per group and 196+ pixels: the
 * Winograd path (odd map sizes, asymmetric pads, a grouped one). */
static net *wino_net(void)
{
    char err[BASE_ERRLEN];
    net *n = net_new("wino", "data", (net_shape){32, 22, 21});
    net_attr a = net_attr_default(NET_CONV);
    a.out_c = 48, a.kh = a.kw = 3, a.pt = 1, a.pl = 2, a.pb = 1, a.pr = 0;
    const char *d[1] = {"data"}, *w1[1] = {"w1"}, *w2[1] = {"w2"};
    net_add(n, "w1", NET_CONV, &a, 1, d, err);
    a.out_c = 34, a.groups = 2, a.pt = 0, a.pl = 1, a.pb = 2, a.pr = 1, a.bias = 0;
    net_add(n, "w2", NET_CONV, &a, 1, w1, err);
    a = net_attr_default(NET_FC);
    a.out_c = 10;
    net_add(n, "fc", NET_FC, &a, 1, w2, err);
    if (net_finalize(n, "wino", err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    return n;
}

/* test_slices --small (the arm64 label's form, under emulation): toy6 and
 * the grouped and Winograd nets only, fewer rounds; alexnet-bvlc and
 * mobilenetv2 are left to the default suite. */
int main(int argc, char **argv)
{
    static const char *nets[] = {"toy6", "alexnet-bvlc", "mobilenetv2"};
    int small = argc > 1 && !strcmp(argv[1], "--small");
    char err[BASE_ERRLEN];
    kern_set_threads(1);
    for (int k = 0; k < (small ? 1 : 3); k++) {
        net *n = net_zoo(nets[k], err);
        CHECK(n != NULL, "%s", err);
        if (n) check_net(n, 5);
        net_free(n);
    }
    net *g = grouped_net(), *wn = wino_net();
    for (int r = 0; r < (small ? 4 : 20); r++) check_net(g, 9);
    for (int r = 0; r < (small ? 2 : 10); r++) check_net(wn, 7);
    /* Two threads: OpenBLAS splits the work differently; still equal. */
    kern_set_threads(2);
    net *n = small ? NULL : net_zoo("alexnet-bvlc", err);
    if (n) check_net(n, 4);
    check_net(g, 9);
    check_net(wn, 7);
    net_free(n);
    net_free(g);
    net_free(wn);
    kern_set_threads(1);
    /* Our own product computes each element the same way whatever the
     * slice (kernels/gemm.c), so Conv slices must be exact; FC's SGEMV and
     * OpenBLAS's SGEMM promise only rounding. */
    if (kern_gemm_own())
        CHECK(conv_inexact == 0, "%ld Conv elements differ from the whole layer's", conv_inexact);
    printf("test_slices: %d failures; %ld elements, %ld bit-identical, %ld within 1e-6 "
           "(%ld of them Conv; product: %s)\n", check_failures, compared, exact, close_only,
           conv_inexact, kern_gemm_own() ? "own" : "BLAS");
    return check_failures ? 1 : 0;
}

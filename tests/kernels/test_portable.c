/* test_portable.c -- the kernels as they run on a CPU without AVX-512 (the
 * ARM boards' path), on any machine.  CMake runs it with DSE_AVX512=0 (on
 * arm64 the AVX-512 code is not even compiled, and it runs there too):
 *  - no mode of kern_set_gemm selects our AVX-512 product;
 *  - for every Conv of every zoo network, whatever the product mode, the
 *    runtime runs the algorithm the cost model charges (kern_conv_algo ==
 *    convalgo_of: the one rule of model/convalgo.c) and asks for the
 *    scratch the model counts in a device's memory, for the whole layer and
 *    for slices;
 *  - each of the five algorithms, on a small layer the rule sends to it,
 *    computed with the BLAS product, equals the plain-loop reference of
 *    naive.c, whole and in a slice of its output channels.
 * It prints how many convs of each zoo network the rule gives to each
 * algorithm: the table bench/README.md quotes for arm64.
 */
#include <stdlib.h>
#include <string.h>

#include "convalgo.h"
#include "kern_impl.h"
#include "kernels.h"
#include "naive.h"
#include "platform.h"
#include "vmath_check.h"

#define RTOL 1e-4
#define ATOL 1e-5

static uint64_t rng = 4242;

/* Every Conv of every zoo network: the runtime's choice is the model's,
 * under the rule of a platform that states nothing (r NULL) and under one
 * with a limit on F(2x2)'s channel pairs (the kernels told by
 * kern_set_conv_rule, as dse exec does). */
static void zoo_rule(const convalgo_rule *r)
{
    char err[BASE_ERRLEN];
    kern_set_conv_rule(r);
    printf("F(2x2) channel pairs limit: %ld\n", r ? r->wino2_max_pairs : 0L);
    int used[CONVALGO_COUNT] = {0};
    printf("%-14s", "network");
    for (int a = 0; a < CONVALGO_COUNT; a++) printf(" %10s", convalgo_name((convalgo)a));
    printf("\n");
    for (int z = 0; z < net_zoo_count(); z++) {
        net *n = net_zoo(net_zoo_name(z), err);
        CHECK(n != NULL, "%s", err);
        if (!n) continue;
        int count[CONVALGO_COUNT] = {0};
        for (int i = 0; i < n->n; i++) {
            const net_layer *L = &n->layers[i];
            if (L->kind != NET_CONV) continue;
            int model = convalgo_of(n, i, r);
            net_shape x = net_in_shape(n, i, 0);
            for (int mode = 0; mode <= 2; mode++) {
                kern_set_gemm(mode);
                int rt = (int)kern_conv_algo(L, x);
                CHECK(rt == model, "%s layer %s, gemm mode %d: runtime runs %s, model charges %s",
                      n->name, L->name, mode, convalgo_name((convalgo)rt),
                      convalgo_name((convalgo)model));
            }
            kern_set_gemm(1);
            int ncs[3] = {1, (L->out.c + 1) / 2, L->out.c};
            for (int k = 0; k < 3; k++)
                CHECK(kern_workspace_floats(n, i, ncs[k]) == convalgo_workspace_of(n, i, ncs[k], r),
                      "%s layer %s, %d channels: runtime scratch %zu floats, model %zu", n->name,
                      L->name, ncs[k], kern_workspace_floats(n, i, ncs[k]),
                      convalgo_workspace_of(n, i, ncs[k], r));
            /* the limit, worked by hand: F(2x2)'s maps (13x13 .. 19x19 here)
             * with at least the limit's pairs go to im2col */
            int pixels = L->out.h * L->out.w, g = L->a.groups;
            long pairs = (long)(x.c / g) * (L->out.c / g);
            if (r && r->wino2_max_pairs && pixels >= 169 && pixels < 400 &&
                convalgo_of(n, i, NULL) == CONVALGO_WINO2)
                CHECK(model == (pairs < r->wino2_max_pairs ? CONVALGO_WINO2 : CONVALGO_IM2COL),
                      "%s layer %s: %ld pairs on %d pixels: %s", n->name, L->name, pairs, pixels,
                      convalgo_name((convalgo)model));
            if (model >= 0 && model < CONVALGO_COUNT) count[model]++, used[model]++;
        }
        printf("%-14s", n->name);
        for (int a = 0; a < CONVALGO_COUNT; a++) printf(" %10d", count[a]);
        printf("\n");
        net_free(n);
    }
    /* the zoo must exercise every algorithm, or this proves less than it says */
    for (int a = 0; a < CONVALGO_COUNT; a++)
        CHECK(used[a] > 0, "no zoo conv uses %s", convalgo_name((convalgo)a));
    kern_set_conv_rule(NULL);
}

/* data (c x h x w) -> Conv L; NULL if it does not fit. */
static net *one_conv(net_shape in, int out_c, int k, int stride, int pad, int groups)
{
    char err[BASE_ERRLEN];
    net_attr a = net_attr_default(NET_CONV);
    a.out_c = out_c, a.kh = a.kw = k, a.sh = a.sw = stride;
    a.pt = a.pl = a.pb = a.pr = pad, a.groups = groups, a.bias = 1;
    net *n = net_new("t", "data", in);
    const char *d[1] = {"data"};
    if (net_add(n, "L", NET_CONV, &a, 1, d, err) || net_finalize(n, "t", err)) {
        net_free(n);
        return NULL;
    }
    return n;
}

static float *rnd(size_t len, float scale)
{
    float *x = malloc((len ? len : 1) * sizeof *x);
    trng_fill(&rng, x, len);
    for (size_t i = 0; i < len; i++) x[i] *= scale;
    return x;
}

/* The layer whole and as slice [c0, c0 + nc), against naive_layer. */
static void check_algo(convalgo want, net_shape in, int out_c, int k, int stride, int pad,
                       int groups)
{
    char err[BASE_ERRLEN];
    net *n = one_conv(in, out_c, k, stride, pad, groups);
    CHECK(n != NULL, "%s case does not fit", convalgo_name(want));
    if (!n) return;
    const net_layer *L = &n->layers[0];
    convalgo got = kern_conv_algo(L, n->input);
    CHECK(got == want, "rule gives %s where this case expects %s (update the case)",
          convalgo_name(got), convalgo_name(want));
    size_t xlen = (size_t)net_shape_numel(n->input), olen = (size_t)net_shape_numel(L->out);
    size_t hw = (size_t)L->out.h * L->out.w, per = (size_t)net_slice_weights(n, 0, 0, 1);
    size_t wlen = (size_t)net_slice_weights(n, 0, 0, out_c), K = per - 1;
    float *x = rnd(xlen, 1), *w = rnd(wlen, 1.0f / (float)K);
    float *ref = malloc(olen * sizeof *ref), *y = malloc(olen * sizeof *y);
    const float *ins[1] = {x};
    naive_layer(n, 0, ins, w, ref);
    float *ws = malloc((kern_workspace_floats(n, 0, out_c) + 1) * sizeof *ws);
    memset(y, 0xff, olen * sizeof *y); /* NaN: every element must be written */
    CHECK(kern_run(n, 0, 0, out_c, ins, w, y, ws, err) == 0, "%s", err);
    size_t worst = 0;
    CHECK(cmp_tol(y, ref, olen, RTOL, ATOL, &worst) <= 0, "%s: element %zu got %g want %g",
          convalgo_name(want), worst, y[worst], ref[worst]);
    /* a slice: its weight rows, then its biases (kernels.h layout) */
    int c0 = out_c / 4, nc = out_c / 2;
    float *sw = malloc((size_t)nc * per * sizeof *sw);
    memcpy(sw, w + (size_t)c0 * K, (size_t)nc * K * sizeof *sw);
    memcpy(sw + (size_t)nc * K, w + (size_t)out_c * K + c0, (size_t)nc * sizeof *sw);
    memset(y, 0xff, olen * sizeof *y);
    const float *view[1];
    slice_inputs(n, 0, c0, nc, ins, view);
    CHECK(kern_run(n, 0, c0, nc, view, sw, y, ws, err) == 0, "%s", err);
    CHECK(cmp_tol(y, ref + (size_t)c0 * hw, (size_t)nc * hw, RTOL, ATOL, &worst) <= 0,
          "%s slice [%d,+%d): element %zu got %g want %g", convalgo_name(want), c0, nc, worst,
          y[worst], ref[(size_t)c0 * hw + worst]);
    printf("ok: %-10s in %dx%dx%d -> %d channels, whole and slice [%d,+%d), BLAS product\n",
           convalgo_name(want), in.c, in.h, in.w, out_c, c0, nc);
    free(x), free(w), free(ref), free(y), free(ws), free(sw);
    net_free(n);
}

int main(void)
{
    const char *env = getenv("DSE_AVX512");
#if defined(__x86_64__)
    CHECK(env && !strcmp(env, "0"), "run with DSE_AVX512=0 (tests/kernels/CMakeLists.txt does)");
#else
    (void)env; /* no AVX-512 code in this build at all */
#endif
    kern_set_threads(1);
    for (int mode = 0; mode <= 2; mode++) {
        kern_set_gemm(mode);
        CHECK(!kern_gemm_own(), "gemm mode %d runs the AVX-512 product", mode);
    }
    kern_set_gemm(1);
    CHECK(vmath_check() == 0, "kernels/vmath.c");
    zoo_rule(NULL);
    {   /* this machine's preset states a limit (examples/platforms/local-2.json) */
        char err[BASE_ERRLEN];
        platform *pl = platform_open("local-2", err);
        CHECK(pl && pl->kernels.wino2_max_pairs > 0, "local-2: %s", pl ? "no F(2x2) limit" : err);
        if (pl) zoo_rule(&pl->kernels);
        platform_free(pl);
    }
    check_algo(CONVALGO_DIRECT, (net_shape){8, 12, 12}, 8, 3, 1, 1, 8);
    check_algo(CONVALGO_POINTWISE, (net_shape){16, 10, 10}, 24, 1, 1, 0, 1);
    check_algo(CONVALGO_IM2COL, (net_shape){8, 15, 15}, 12, 3, 2, 1, 1);
    check_algo(CONVALGO_WINO2, (net_shape){16, 13, 13}, 16, 3, 1, 1, 1);
    check_algo(CONVALGO_WINO4, (net_shape){16, 50, 50}, 16, 3, 1, 1, 1);
    /* one output pixel: straight on the input, gathered (a 3x3 kernel on a
     * 3x3 map; one reading padding), and grouped; the workspace is the
     * rule's (convalgo_gemv_gathers) plus one float, so a gemv that wrote
     * into a workspace the rule says it does not need trips ASan */
    check_algo(CONVALGO_GEMV, (net_shape){16, 1, 1}, 24, 1, 1, 0, 1);
    check_algo(CONVALGO_GEMV, (net_shape){8, 3, 3}, 12, 3, 1, 0, 1);
    check_algo(CONVALGO_GEMV, (net_shape){8, 2, 2}, 12, 3, 2, 1, 1);
    check_algo(CONVALGO_GEMV, (net_shape){16, 1, 1}, 16, 1, 1, 0, 4);
    /* 1x1 stride 2: on a 1x1 map the input itself (no workspace), on a 2x2
     * map a strided column (gathered) */
    check_algo(CONVALGO_GEMV, (net_shape){16, 1, 1}, 24, 1, 2, 0, 1);
    check_algo(CONVALGO_GEMV, (net_shape){16, 2, 2}, 24, 1, 2, 0, 1);
    kern_set_threads(2); /* the kernels' own threads and the BLAS's */
    check_algo(CONVALGO_WINO4, (net_shape){16, 50, 50}, 16, 3, 1, 1, 1);
    check_algo(CONVALGO_IM2COL, (net_shape){8, 15, 15}, 12, 3, 2, 1, 1);
    kern_set_threads(1);
    return check_done("test_portable");
}

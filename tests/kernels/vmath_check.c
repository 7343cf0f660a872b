/* vmath_check.c -- kernels/vmath.c's functions against double precision
 * over every float exponent, and each element's bits independent of where
 * it sits (test_kernels: the AVX-512 loops here; test_portable with
 * DSE_AVX512=0: AVX2 or the baseline; on arm64: NEON).
 *
 * Bounds (vmath.c's header): e^x relative 2e-7 on [-87, 88] (measured
 * 7.9e-8), the sigmoid relative 3e-7 (1.4e-7), both GELUs absolute 3e-7
 * max(1, |x|) (1.9e-7: A&S 7.1.26's erf is 1.5e-7), LRN's step for beta
 * 3/4 relative 4e-7.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kern_impl.h"
#include "vmath_check.h"

#define STRIDE 4099u /* float bit patterns: about a million, every exponent */

static double ref_of(int f, double v)
{
    switch (f) {
    case 0: return exp(v);
    case 1: return 1 / (1 + exp(-v));
    case 2: return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    case 4: return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v)); /* softplus */
    default: return 0.5 * v * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
    }
}

int vmath_check(void)
{
    static void (*const fn[5])(const float *, float *, size_t) = {kern_vexp, kern_vsigmoid,
                                                                 kern_vgelu, kern_vgelu_tanh,
                                                                 kern_vsoftplus};
    static const char *names[5] = {"exp", "sigmoid", "gelu", "gelu_tanh", "softplus"};
    size_t cap = 2u * (0x7f800000u / STRIDE + 1), n = 0;
    int paths = 0;
    float *x = malloc(cap * sizeof *x), *y = malloc(cap * sizeof *y);
    CHECK(x && y, "out of memory");
    if (!x || !y) goto out;
    for (uint32_t b = 0; b < 0x7f800000u; b += STRIDE) {
        float v;
        memcpy(&v, &b, sizeof v);
        if (v > 100.0f) break;
        x[n++] = v;
        x[n++] = -v;
    }
    for (int f = 0; f < 5; f++) {
        fn[f](x, y, n);
        double worst = 0;
        float at = 0;
        size_t moved = 0;
        for (size_t i = 0; i < n; i++) {
            double v = x[i], r = ref_of(f, v), e;
            if (f == 0) e = v < -87 || v > 88 ? 0 : fabs(y[i] - r) / r / 2e-7;
            else if (f == 1 || f == 4) e = r < 1e-30 ? 0 : fabs(y[i] - r) / r / 3e-7;
            else e = fabs(y[i] - r) / (fabs(v) > 1 ? fabs(v) : 1) / 3e-7;
            if (!(e <= worst)) worst = e, at = x[i]; /* a NaN counts as the worst */
            /* alone (the loop's scalar tail) and at an odd offset: same bits */
            float one;
            fn[f](x + i, &one, 1);
            moved += memcmp(&one, &y[i], sizeof one) != 0;
        }
        /* every loop this CPU has (baseline, AVX2, AVX-512; NEON's alone on
         * arm64) gives the same bits */
        float *z = malloc(n * sizeof *z);
        CHECK(z != NULL, "out of memory");
        for (int path = 1; z && path <= 3; path++) {
            if (!kern_vmath_path(path)) continue;
            fn[f](x, z, n);
            size_t differ = 0;
            for (size_t i = 0; i < n; i++) differ += memcmp(&z[i], &y[i], sizeof *z) != 0;
            CHECK(differ == 0, "%s: loop %d differs from the default loop at %zu values",
                  names[f], path, differ);
            paths |= 1 << path;
        }
        kern_vmath_path(0);
        free(z);
        CHECK(worst <= 1, "%s(%g) off by %.3g of its bound", names[f], at, worst);
        CHECK(moved == 0, "%s: %zu values differ when computed alone", names[f], moved);
        printf("vmath %s: %zu values, worst %.2f of the bound\n", names[f], n, worst);
    }
    /* LRN's step for beta 3/4 over sums of squares from 0 to 1e4 (o = x^2),
     * AlexNet's k = 1 (CaffeNet's 2) and alpha / size = 1e-4 / 5 */
    for (int kk = 1; kk <= 2; kk++) {
        double worst = 0;
        float at = 0;
        size_t moved = 0;
        for (size_t i = 0; i < n; i++) y[i] = x[i] * x[i] < 1e4f ? x[i] * x[i] : 1e4f;
        float *o = malloc(n * sizeof *o);
        CHECK(o != NULL, "out of memory");
        if (!o) break;
        memcpy(o, y, n * sizeof *o);
        kern_vlrn(x, o, n, (float)kk, 2e-5f, 0.75f);
        for (size_t i = 0; i < n; i++) {
            double r = x[i] * pow(kk + 2e-5f * (double)y[i], -0.75);
            /* relative to the least normal float: a subnormal result has
             * fewer bits than any relative bound (powf's too) */
            double e = fabs(o[i] - r) / fmax(fabs(r), FLT_MIN) / 4e-7;
            if (!(e <= worst)) worst = e, at = x[i];
            float one = y[i];
            kern_vlrn(x + i, &one, 1, (float)kk, 2e-5f, 0.75f);
            moved += memcmp(&one, &o[i], sizeof one) != 0;
        }
        for (int path = 1; path <= 3; path++) {
            if (!kern_vmath_path(path)) continue;
            float *z = malloc(n * sizeof *z);
            CHECK(z != NULL, "out of memory");
            if (!z) break;
            memcpy(z, y, n * sizeof *z);
            kern_vlrn(x, z, n, (float)kk, 2e-5f, 0.75f);
            CHECK(memcmp(z, o, n * sizeof *z) == 0, "lrn: loop %d differs from the default", path);
            free(z);
        }
        kern_vmath_path(0);
        free(o);
        CHECK(worst <= 1, "lrn (k %d) at x = %g off by %.3g of its bound", kk, at, worst);
        CHECK(moved == 0, "lrn: %zu values differ when computed alone", moved);
        printf("vmath lrn k=%d: %zu values, worst %.2f of the bound\n", kk, n, worst);
    }
    /* the extremes: sigmoid 0 and 1 exactly, GELU's tails 0 and x, no NaN
     * from a finite or infinite input (but GELU's -inf * 0) */
    {
        static const float big[] = {-1e30f, -3.4e38f, -100.0f, 100.0f, 3.4e38f};
        float sg[5], ge[5], gt[5];
        kern_vsigmoid(big, sg, 5);
        kern_vgelu(big, ge, 5);
        kern_vgelu_tanh(big, gt, 5);
        for (int i = 0; i < 5; i++) {
            float want_s = big[i] < 0 ? 0.0f : 1.0f, want_g = big[i] < 0 ? 0.0f : big[i];
            CHECK(sg[i] == want_s, "sigmoid(%g) = %g, not %g", big[i], sg[i], want_s);
            CHECK(ge[i] == want_g && gt[i] == want_g, "gelu(%g) = %g, tanh form %g, not %g", big[i],
                  ge[i], gt[i], want_g);
        }
    }
    printf("vmath: loops compared: %s%s%s\n", paths & 2 ? "baseline " : "",
           paths & 4 ? "AVX2 " : "", paths & 8 ? "AVX-512" : "");
out:
    free(x);
    free(y);
    return check_failures; /* this file's own (check.h counts per file) */
}
